// The pieces the wgmma rungs share (sm_90a): the tile geometry, the k-tile's wgmmas with B^T as
// the register operand, the conflict-free fragment loads of B^T from its swizzled TMA boxes, and
// the store of the C^T accumulators. wgmma_tma.cu explains the operand layout; the kernels differ
// in how blocks walk the tiles (one tile per block, or a persistent grid).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

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

// The dynamic shared memory of a block: STAGES stages of tiles aligned to 1024 bytes (the
// 128-byte swizzle repeats every 1024 bytes and wgmma assumes it starts aligned; smem_bytes()
// has the slack), then the stages' "full" and "empty" mbarriers.
template <int BM, int BN, int STAGES>
struct StageMemory {
  unsigned char* tiles;
  std::uint64_t* full;
  std::uint64_t* empty;
  __device__ __forceinline__ explicit StageMemory(unsigned char* raw) {
    tiles = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023);
    full = reinterpret_cast<std::uint64_t*>(tiles + STAGES * WgTile<BM, BN, STAGES>::STAGE_BYTES);
    empty = full + STAGES;
  }
};

// The stage barriers: "full" completes when the producer's TMA bytes have landed, "empty" when
// every consumer warp has released the stage.
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void init_stage_barriers(std::uint64_t* full, std::uint64_t* empty) {
  for (int s = 0; s < STAGES; ++s) {
    mbar_init(&full[s], 1);                                  // the producer's arrive.expect_tx
    mbar_init(&empty[s], WgTile<BM, BN, STAGES>::CONSUMERS * 4);  // one arrival per consumer warp
  }
  fence_barrier_init();
}

// The producer thread's k-tile `kt` of the tile at (m0, n0), the block's `it`-th k-tile overall:
// it waits until the consumers released the stage's previous use, then issues one TMA for A
// (BM x BK) and BN / 32 for B (BK x 32 boxes), all completing on the stage's "full" barrier.
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void produce_k_tile(unsigned char* smem, std::uint64_t* full,
                                               std::uint64_t* empty, int it, int kt, int m0,
                                               int n0, const CUtensorMap* map_a,
                                               const CUtensorMap* map_b) {
  using P = WgTile<BM, BN, STAGES>;
  const int s = it % STAGES;
  if (it >= STAGES) mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
  unsigned char* stage = smem + s * P::STAGE_BYTES;
  mbar_arrive_expect_tx(&full[s], P::STAGE_BYTES);
  tma_load_2d(stage, map_a, kt * P::BK, m0, &full[s]);
#pragma unroll
  for (int j = 0; j < BN / 32; ++j)
    tma_load_2d(stage + P::A_BYTES + j * P::B_BOX_BYTES, map_b, n0 + 32 * j, kt * P::BK, &full[s]);
}

// A consumer warp's side of the block's `it`-th k-tile: wait for its bytes, multiply, release.
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void consume_k_tile(float (&d)[BM / 2], unsigned char* smem,
                                               std::uint64_t* full, std::uint64_t* empty, int it,
                                               const FragmentSlot& slot, int lane) {
  const int s = it % STAGES;
  mbar_wait(&full[s], (it / STAGES) & 1);
  mma_k_tile<BM, BN, STAGES>(d, smem + s * WgTile<BM, BN, STAGES>::STAGE_BYTES, slot);
  __syncwarp();
  if (lane == 0) mbar_arrive(&empty[s]);
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

// Run-time dispatch over a family's compile-time configurations: Config<I> has a static
// kernel() (the __global__ function's address) and a static run(A, B, C, M, N, K, stream).
using TmaRunFn = void (*)(const float*, const float*, float*, int, int, int, cudaStream_t);

template <template <int> class Config, std::size_t... I>
const void* config_kernel(int config, std::index_sequence<I...>) {
  static const std::array<const void*, sizeof...(I)> table = {
      reinterpret_cast<const void*>(Config<int(I)>::kernel())...};
  return table.at(std::size_t(config));
}

template <template <int> class Config, std::size_t... I>
TmaRunFn config_run(int config, std::index_sequence<I...>) {
  static const std::array<TmaRunFn, sizeof...(I)> table = {&Config<int(I)>::run...};
  return table.at(std::size_t(config));
}

}  // namespace gemm::tensor
