// The copy-and-barrier layer every kernel shares: cp.async (global -> shared without a register
// round trip, sm_80+), its groups, mbarriers (shared-memory barriers with phases, sm_80+; TMA's
// byte counts, sm_90), TMA box copies (sm_90) and PipelineState, a stage's index and phase kept
// together as a ring of STAGES stages is walked.
//
// One zero-fill rule for every checked copy: cp_async_zfill(dst, src, valid) copies from the
// unchecked address and, where `valid` is false, reads nothing (src-size 0) and writes zeros. No
// byte of the source is read then, so its address may lie outside the matrix
// (compute-sanitizer's memcheck over the tail shapes agrees), and no select of a safe address is
// spent per copy.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: nothing here calls the driver)

#include <cstdint>

namespace gemm {

// Shared-memory address (32-bit, the .shared window) of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// --- cp.async ---------------------------------------------------------------------------------
// 16-byte copies go .cg (past L1: tiles are reused from shared memory, not L1); 4- and 8-byte
// copies must be .ca.

// BYTES from `src` to shared address `dst`, or BYTES zeros where !valid (see the rule above).
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(std::uint32_t dst, const void* src, bool valid) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  const int src_bytes = valid ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                 "n"(BYTES), "r"(src_bytes));
  }
}

// BYTES from `src` to shared address `dst` where `pred` holds, nothing at all otherwise: a
// predicated instruction, not a branch, so the copies of a k-tile stay in the basic block of the
// math that hides them. The source is not read where `pred` is false.
template <int BYTES>
__device__ __forceinline__ void cp_async_if(std::uint32_t dst, const void* src, bool pred) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (BYTES == 16) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
        " @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(dst),
        "l"(src), "r"(int(pred)));
  } else {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
        " @p cp.async.ca.shared.global [%0], [%1], %3;\n}\n" ::"r"(dst),
        "l"(src), "r"(int(pred)), "n"(BYTES));
  }
}

// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Waits for every cp.async this thread has issued, in a group or not.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// --- mbarrier ---------------------------------------------------------------------------------
// A barrier completes a phase when its expected number of arrivals (and, for TMA, of transaction
// bytes) has come; waiters name the phase by its parity. For warps that must not wait for each
// other at a __syncthreads: the TMA producer/consumer pipelines and the CUDA-core ladder's
// decoupled cp.async pipeline.

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}

// One arrival; it releases this thread's earlier shared-memory accesses to the waiters.
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// One arrival once every cp.async this thread has issued so far has landed ("noinc": the
// barrier's expected count already includes it).
__device__ __forceinline__ void cp_async_mbar_arrive(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}

// Spins until the barrier's phase with the given parity has completed. (No give-up count: on
// the 256-row wgmma tiles even a 32-bit counter and a trap cost a register spill.)
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#else  // sm_80: test_wait does not suspend the thread, it only polls
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.test_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#endif
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// Makes the initialized barriers visible to the async proxy (the TMA unit) before first use.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of transactions the barrier must see completed.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// --- TMA --------------------------------------------------------------------------------------
// One box of a 2-D tensor map into shared memory; completion is counted on `bar` in bytes.
// c0 indexes the contiguous dimension. Elements outside the tensor are written as zeros and
// still counted, so a tail box completes with the same byte count as a full one.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, int c0, int c1,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}
#endif

// --- PipelineState ----------------------------------------------------------------------------
// Where a walk over a ring of STAGES stages stands: the stage's index, the parity of the barrier
// phase that k-tile is in, and the stage's offset (index * STEP, e.g. in elements), kept together
// (CUTLASS's PipelineState). K-tile t of the walk sits in stage t % STAGES and completes phase
// (t / STAGES) & 1 of that stage's barriers; a state is advanced instead of computing either
// from t.
template <int STAGES, int STEP = 1>
struct PipelineState {
  static_assert(STAGES >= 1 && STEP >= 1, "a ring of at least one stage");
  int index = 0;
  unsigned phase = 0;
  int offset = 0;

  // The state `ahead` k-tiles on (0 <= ahead <= STAGES).
  __host__ __device__ static constexpr PipelineState at(int ahead) {
    return ahead < STAGES ? PipelineState{ahead, 0u, ahead * STEP}
                          : PipelineState{ahead - STAGES, 1u, (ahead - STAGES) * STEP};
  }
  __host__ __device__ PipelineState& operator++() {
    if constexpr (STEP == 1) {
      if (++index == STAGES) {
        index = 0;
        phase ^= 1u;
      }
      offset = index;
    } else {
      ++index;
      offset += STEP;
      if (offset == STAGES * STEP) {  // (not index: a walk that needs offsets alone drops index)
        index = 0;
        offset = 0;
        phase ^= 1u;
      }
    }
    return *this;
  }
  __host__ __device__ PipelineState next() const {
    PipelineState s = *this;
    return ++s;
  }
};

}  // namespace gemm
