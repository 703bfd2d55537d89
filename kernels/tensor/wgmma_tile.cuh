// The pieces the wgmma rungs share (sm_90a): the tile geometry, the k-tile's wgmmas with B^T as
// the register operand, the conflict-free fragment loads of B^T from its swizzled TMA boxes, and
// the store of the C^T accumulators. wgmma_tma.cu explains the operand layout; the kernels differ
// in how blocks walk the tiles (one tile per block, or a persistent grid).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sm90a_ptx.cuh"
#include "wgmma_tma.h"

namespace gemm::tensor {

template <int BM, int BN, int STAGES>
struct WgTile {
  static constexpr int BK = WgmmaTmaConfig::bk;
  static constexpr int CONSUMERS = BN / 64;
  static constexpr int THREADS = CONSUMERS * 128 + 128;
  static constexpr int A_BYTES = BM * BK * 4;
  static constexpr int B_BOX_BYTES = 32 * BK * 4;  // 32 columns x BK rows
  static constexpr int B_BYTES = BN * BK * 4;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr int ACC = BM / 2;  // FP32 accumulators per thread: 64 x BM / 128 threads
  static_assert(BM == 128 || BM == 256, "wgmma N (= BM here) of 128 or 256");
  static_assert(BN % 64 == 0 && BN >= 64 && BN <= 256, "64 columns per consumer warpgroup");
  static_assert(A_BYTES % 1024 == 0 && STAGE_BYTES % 1024 == 0, "1024-byte aligned tiles");
  static_assert(STAGES >= 2, "at least two stages to overlap copies with math");
};

template <int BM>
__device__ __forceinline__ void wgmma_tile(float (&d)[BM / 2], const std::uint32_t (&a)[4],
                                           std::uint64_t desc) {
  if constexpr (BM == 256)
    wgmma_m64n256k8_tf32_rs(d, a, desc);
  else
    wgmma_m64n128k8_tf32_rs(d, a, desc);
}

// Where a consumer thread's B^T fragment rows live: lane (g, t) of warp w in warpgroup wg takes
// the column pair (n_in_box, n_in_box + 1) of 32-column box `box` (see wgmma_tma.cu).
struct FragmentSlot {
  int box, n_in_box, chunk, word, t;
  __device__ __forceinline__ FragmentSlot(int warp, int lane) {
    const int wg = warp / 4, w = warp % 4, g = lane / 4;
    t = lane % 4;
    box = 2 * wg + w / 2;
    n_in_box = 8 * (w % 2) + 2 * (g % 2) + 16 * ((g / 2) % 2) + 4 * (g / 4);
    chunk = n_in_box / 4;
    word = n_in_box % 4;
  }
};

// One k-tile (BK = 32) of the block's MMA from a full stage: the thread's B^T fragments, then
// the four k8 wgmmas against the A tile, waited for before the stage is released.
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void mma_k_tile(float (&d)[BM / 2], const unsigned char* stage,
                                           const FragmentSlot& slot) {
  using P = WgTile<BM, BN, STAGES>;
  const unsigned char* bbox = stage + P::A_BYTES + slot.box * P::B_BOX_BYTES;
  std::uint32_t a[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int k = 8 * kk + slot.t + 4 * h;  // k % 8 == t + 4h: the swizzle key of row k
      const uint2 v = *reinterpret_cast<const uint2*>(bbox + k * 128 +
                                                      ((slot.chunk ^ (k & 7)) << 4) + slot.word * 4);
      a[kk][2 * h] = v.x;      // row g     (column n_in_box)
      a[kk][2 * h + 1] = v.y;  // row g + 8 (column n_in_box + 1)
    }
  wgmma_fence();
  const std::uint32_t a_tile = smem_addr(stage);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_tile<BM>(d, a[kk], desc_k_major_sw128(a_tile + 32 * kk));
  wgmma_commit();
  wgmma_wait<0>();  // the stage (and the fragment registers) are free again
}

// d holds C^T: fragment row g <-> column n, row g + 8 <-> column n + 1; fragment column
// 8i + 2t (+1) <-> row m (+1) of C. N % 4 == 0 and n even: n < N implies n + 1 < N.
template <int BM>
__device__ __forceinline__ void store_c_transposed(const float (&d)[BM / 2], float* C, int M, int N,
                                                   int m0, int n0, const FragmentSlot& slot) {
  const int n = n0 + slot.box * 32 + slot.n_in_box;
  if (n >= N) return;
#pragma unroll
  for (int i = 0; i < BM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * slot.t;
    if (m < M)
      *reinterpret_cast<float2*>(C + std::size_t(m) * N + n) = make_float2(d[4 * i], d[4 * i + 2]);
    if (m + 1 < M)
      *reinterpret_cast<float2*>(C + std::size_t(m + 1) * N + n) =
          make_float2(d[4 * i + 1], d[4 * i + 3]);
  }
}

}  // namespace gemm::tensor
