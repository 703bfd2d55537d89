// mbarrier wrappers (shared-memory barriers with phases, sm_80+), for kernels whose warps must
// not wait for each other at a __syncthreads: the TMA producer/consumer pipelines of the tensor
// rungs and the decoupled cp.async pipeline of the CUDA-core ladder. A barrier completes a phase
// when its expected number of arrivals (and, for TMA, of transaction bytes) has come; waiters
// name the phase by its parity.
#pragma once

#include <cstdint>

namespace gemm {

__device__ __forceinline__ std::uint32_t mbar_addr(const std::uint64_t* bar) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
}

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mbar_addr(bar)), "r"(count));
}

// One arrival; it releases this thread's earlier shared-memory accesses to the waiters.
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mbar_addr(bar)) : "memory");
}

// One arrival once every cp.async this thread has issued so far has landed ("noinc": the
// barrier's expected count already includes it).
__device__ __forceinline__ void cp_async_mbar_arrive(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(mbar_addr(bar))
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
      "}\n" ::"r"(mbar_addr(bar)),
      "r"(parity)
      : "memory");
#else  // sm_80: test_wait does not suspend the thread, it only polls
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.test_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(mbar_addr(bar)),
      "r"(parity)
      : "memory");
#endif
}

}  // namespace gemm
