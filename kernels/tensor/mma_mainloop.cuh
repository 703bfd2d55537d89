// The multistage cp.async mainloop of the mma.sync rungs (mma_tf32_pipelined, mma_fp64,
// mma_fp64_m16n8k16): the configuration, a stage's geometry, each thread's copies of a k-tile,
// and the loop that keeps STAGES - 1 k-tiles in flight while the warps multiply the one that
// landed. A rung supplies its shared-memory layout (the swizzled element offsets of A's and B's
// tiles), its fragment loads and MMAs (one k-tile out of a stage) and its epilogue.
//
// Stage s holds A's BM x BK tile (row-major, k contiguous, as in A) and then B's BK x BN tile
// (row-major, n contiguous). Thread tid copies, of every k-tile, the 16-byte (VEC = 16 /
// sizeof(T)) or element (VEC = 1) chunk tid % (BK / VEC) of A's rows tid / (BK / VEC) + i *
// A_ROW_STEP, and the same for B's k rows: one column per thread, rows a fixed step apart, so
// the addresses are computed once and the copy loops unroll completely. Checked copies zero-fill
// from the unchecked address (common/async_copy.cuh): the tiles of the M, N and K tails read as
// zeros.
//
// The loop runs over the k-tiles [begin, end) of one output tile, so that a split-K or stream-K
// schedule can hand a block part of K.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/async_copy.cuh"
#include "common/tile_order.cuh"
#include "launch.cuh"

namespace gemm::tensor {

// One configuration of an mma.sync rung: the block's tile of C (bm x bn) and k-tile (bk), each
// warp's tile (wm x wn), the stages in flight, and the blocks per SM __launch_bounds__ asks for.
struct MmaSyncConfig {
  int bm;
  int bn;
  int bk;
  int wm;
  int wn;
  int stages;
  int min_blocks = 1;
  Role role = Role::sweep;

  constexpr int threads() const { return (bm / wm) * (bn / wn) * 32; }
  // The parameters as the variant's name and fields give them.
  std::vector<Param> params() const {
    return {{"bm", bm}, {"bn", bn}, {"bk", bk}, {"wm", wm}, {"wn", wn}, {"stages", stages}};
  }
};

// A stage's geometry and each thread's share of its copies, for copies of VEC elements.
template <typename T, MmaSyncConfig C, int VEC_>
struct MmaSyncStages {
  static constexpr MmaSyncConfig CONFIG = C;
  static constexpr int VEC = VEC_;
  static constexpr int BM = C.bm, BN = C.bn, BK = C.bk, STAGES = C.stages;
  static constexpr int THREADS = C.threads();
  static constexpr int A_STAGE = BM * BK;  // elements of A's tile; B's follows it
  static constexpr int STAGE = A_STAGE + BK * BN;
  static constexpr std::size_t SMEM_BYTES = std::size_t(STAGES) * STAGE * sizeof(T);
  static constexpr int A_CHUNKS_PER_ROW = BK / VEC, B_CHUNKS_PER_ROW = BN / VEC;
  static constexpr int A_ROW_STEP = THREADS / A_CHUNKS_PER_ROW;  // rows of A per pass
  static constexpr int B_ROW_STEP = THREADS / B_CHUNKS_PER_ROW;  // rows (k) of B per pass
  static constexpr int A_COPIES = BM / A_ROW_STEP, B_COPIES = BK / B_ROW_STEP;
  static_assert(VEC == 1 || VEC * sizeof(T) == 16, "element or 16-byte copies");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");
  static_assert(C.bm % C.wm == 0 && C.bn % C.wn == 0, "warps tile the block");
  static_assert(THREADS <= 1024, "too many warps");
  static_assert(THREADS % A_CHUNKS_PER_ROW == 0 && BM % A_ROW_STEP == 0, "A copies tile");
  static_assert(THREADS % B_CHUNKS_PER_ROW == 0 && BK % B_ROW_STEP == 0, "B copies tile");
  static_assert(SMEM_BYTES <= 227 * 1024, "the stages fit the opt-in shared memory of sm_90");
};

// Where a thread's fragments lie: its block's tile of C (m0, n0), its warp's tile in it (wm0,
// wn0), and its lane's group and thread in group (g = lane / 4, t = lane % 4), the coordinates
// of every mma.sync fragment layout. reread() computes them from indices read again, for an
// epilogue that should not hold them in registers across the mainloop.
template <MmaSyncConfig C>
struct MmaSyncThread {
  int m0, n0, wm0, wn0, g, t;

  __device__ __forceinline__ MmaSyncThread(int tid, int block_x, int block_y) {
    constexpr int WARPS_N = C.bn / C.wn;
    const int warp = tid / 32, lane = tid % 32;
    g = lane / 4;
    t = lane % 4;
    wm0 = (warp / WARPS_N) * C.wm;
    wn0 = (warp % WARPS_N) * C.wn;
    m0 = block_y * C.bm;
    n0 = block_x * C.bn;
  }
  __device__ __forceinline__ MmaSyncThread() : MmaSyncThread(threadIdx.x, blockIdx.x, blockIdx.y) {}
  __device__ __forceinline__ static MmaSyncThread reread() {
    const int2 block = reread_block_index();
    return MmaSyncThread(reread_thread_index(), block.x, block.y);
  }
};

// The mainloop over k-tiles [k_begin, k_end) of the output tile at (m0, n0). `Layout` is the
// rung's stage layout (MmaSyncStages plus a_offset(row, k) and b_offset(k, n), the element
// offsets of A's and B's tiles in a stage); `k_tile(as, bs)` multiplies the k-tile whose A and B
// tiles start at `as` and `bs`. Every thread of the block calls it; no copy is still in flight
// when it returns.
template <typename Layout, typename T, typename KTile>
__device__ __forceinline__ void mma_sync_mainloop(const T* A, const T* B, int M, int N, int K,
                                                  int m0, int n0, int k_begin, int k_end,
                                                  T* smem, KTile&& k_tile) {
  using L = Layout;
  constexpr int VEC = L::VEC, BYTES = VEC * int(sizeof(T));
  const int tid = threadIdx.x;
  // This thread's copies: A rows a_row + i A_ROW_STEP at column a_col of the k-tile, B rows
  // b_row + i B_ROW_STEP at column b_col of the block.
  const int a_row = tid / L::A_CHUNKS_PER_ROW, a_col = tid % L::A_CHUNKS_PER_ROW * VEC;
  const int b_row = tid / L::B_CHUNKS_PER_ROW, b_col = tid % L::B_CHUNKS_PER_ROW * VEC;
  const bool b_col_ok = n0 + b_col < N;  // N % VEC == 0: a chunk is wholly in or out
  const std::uint32_t smem_base = smem_addr(smem);

  // Copies k-tile kt into the stage at element offset `stage`.
  auto load = [&](int stage, int kt) {
    const int k0 = kt * L::BK;
    const std::uint32_t as = smem_base + stage * sizeof(T);
    const std::uint32_t bs = as + L::A_STAGE * sizeof(T);
    const bool a_col_ok = k0 + a_col < K;  // K % VEC == 0: a chunk is wholly in or out
#pragma unroll
    for (int i = 0; i < L::A_COPIES; ++i) {
      const int r = a_row + i * L::A_ROW_STEP;
      cp_async_zfill<BYTES>(as + L::a_offset(r, a_col) * sizeof(T),
                            A + (std::size_t(m0 + r) * K + k0 + a_col), a_col_ok && m0 + r < M);
    }
#pragma unroll
    for (int i = 0; i < L::B_COPIES; ++i) {
      const int kr = b_row + i * L::B_ROW_STEP;
      cp_async_zfill<BYTES>(bs + L::b_offset(kr, b_col) * sizeof(T),
                            B + (std::size_t(k0 + kr) * N + n0 + b_col), b_col_ok && k0 + kr < K);
    }
  };

  // The stages as a ring; one group of copies per k-tile (an empty one past k_end, so that the
  // group count stays in step with the k-tiles).
  using State = PipelineState<L::STAGES, L::STAGE>;  // offsets in elements
#pragma unroll
  for (int s = 0; s < L::STAGES - 1; ++s) {
    if (k_begin + s < k_end) load(State::at(s).offset, k_begin + s);
    cp_async_commit();
  }
  State read;                                // k-tile kt
  State write = State::at(L::STAGES - 1);    // k-tile kt + STAGES - 1: where kt - 1 was
  for (int kt = k_begin; kt < k_end; ++kt) {
    cp_async_wait<L::STAGES - 2>();  // k-tile kt has landed (for this thread's copies) ...
    __syncthreads();                 // ... and for everyone's; nobody reads kt - 1 any more
    if (kt + L::STAGES - 1 < k_end) load(write.offset, kt + L::STAGES - 1);
    cp_async_commit();
    k_tile(smem + read.offset, smem + read.offset + L::A_STAGE);
    write = read;
    ++read;
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
}

// The epilogue's store of LEN consecutive elements v of one row of C, starting at `dst`, column
// `col` of N (columns >= N left out): 16-byte stores where the copies are 16-byte (VEC > 1, so N
// is a multiple of VEC and a run that ends inside the row is 16-byte aligned), element by element
// otherwise.
template <int VEC, typename T, int LEN>
__device__ __forceinline__ void store_row_segment(T* dst, int col, int N, const T (&v)[LEN]) {
  constexpr int PER_16B = 16 / int(sizeof(T));
  static_assert(LEN % PER_16B == 0, "whole 16-byte pieces");
  if (VEC > 1 && col + LEN - 1 < N) {
#pragma unroll
    for (int c = 0; c < LEN; c += PER_16B) {
      if constexpr (sizeof(T) == 4) {
        *reinterpret_cast<float4*>(dst + c) = make_float4(v[c], v[c + 1], v[c + 2], v[c + 3]);
      } else {
        *reinterpret_cast<double2*>(dst + c) = make_double2(v[c], v[c + 1]);
      }
    }
  } else {
#pragma unroll
    for (int e = 0; e < LEN; ++e)
      if (col + e < N) dst[e] = v[e];
  }
}

// A variant of an mma.sync rung: the kernel with 16-byte copies where the rows of A (K elements)
// and B (N elements) are whole 16-byte chunks, the same kernel with element copies otherwise.
template <typename T, MmaSyncConfig C>
VariantBuilder mma_sync_variant(const char* family, GemmKernel<T> vec16_kernel,
                                GemmKernel<T> elementwise_kernel) {
  constexpr int V = 16 / int(sizeof(T));
  constexpr std::size_t smem = MmaSyncStages<T, C, V>::SMEM_BYTES;  // the same for VEC = 1
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(C.params())
      .launch(kernel_per_shape<T>(block_tile_plan(C.bm, C.bn, C.threads(), smem),
                                  [=](const GemmShape& s) {
                                    return s.k % V == 0 && s.n % V == 0 ? vec16_kernel
                                                                        : elementwise_kernel;
                                  }))
      .outputs_per_thread(double(C.bm) * C.bn / C.threads())
      .role(C.role);
  return b;
}

}  // namespace gemm::tensor
