// TF32 wgmma fed by TMA (sm_90a): tiles come into shared memory by cp.async.bulk.tensor,
// completing on mbarriers, STAGES k-tiles deep; warpgroups multiply them with wgmma.mma_async.
//
// The operand problem. wgmma takes TF32 operands from shared memory only K-major ("tf32 requires
// K-major for both A and B": the transpose immediates exist for 16-bit types alone). A (M x K,
// row-major) is K-major; B (K x N, row-major) is N-major, and no tensor-map trick makes TMA
// transpose 4-byte elements (the box's inner dimension is always the contiguous one). Kernels may
// not allocate a transposed copy. What the ISA does allow is an A operand in *registers*, where
// the layout in memory no longer matters. So each block computes the transposed tile
//     C^T (N x M) = B^T (N x K) * A^T (K x M):
//   - wgmma's A operand is B^T, 64 rows (= columns n of C) per consumer warpgroup, loaded by the
//     threads from the TMA tile of B (n contiguous) into the m16n8k8-style fragment;
//   - wgmma's B operand is A^T, i.e. the TMA tile of A exactly as it lands (K-major, 128-byte
//     swizzle), described to wgmma by a matrix descriptor; its "N" is BM (128 or 256);
//   - the accumulators hold C^T; each thread writes its elements of C directly.
// Shared-memory traffic is what an all-shared-memory wgmma would cost: the fragment loads replace
// the tensor core's own reads of the A operand.
//
// Fragment loads of B^T. Lane (g, t) of warp w needs, per k8 step, the elements (row g, k t) and
// (g + 8, t), (g, t + 4), (g + 8, t + 4). Rows of the fragment are free to map to any columns n
// of B (the accumulator rows follow the same map), so rows g and g + 8 are given two adjacent
// columns: one 8-byte load per k. The B tile arrives as 32 x 32 boxes, 128-byte swizzled (chunk
// c of row k stored at chunk c ^ (k % 8)); the pairs of a warp are spread as
//     n = 8 (w % 2) + 2 (g % 2) + 16 ((g / 2) % 2) + 4 (g / 4)   inside box 2 * warpgroup + w / 2
// so that a half-warp's 4 rows k = t x 4 pairs fall on 16 distinct (chunk, half) slots after the
// swizzle: conflict-free 8-byte loads.
//
// Block: BN / 64 consumer warpgroups (warps 0 .. 4c-1, so each starts at a warp index divisible
// by 4) and one producer warpgroup, one thread of which issues the copies (a whole warpgroup, not
// a warp, because registers are handed out per warpgroup: setmaxnreg gives the producer 40 (24)
// registers and the consumers the rest, 232 (120) each, where the 256 x 128 tile's 128
// accumulators need them; without it ptxas caps every thread at 168 and serializes the wgmmas).
// The producer thread waits for a stage's "empty"
// barrier (one arrival per consumer warp), announces the stage's bytes on its "full" barrier and
// issues one TMA for A (BM x 32) and BN / 32 for B (32 x 32 boxes). Consumers wait on "full",
// load their fragments, issue the 4 wgmmas of the k-tile, wait for them, and release the stage.
// The two or more consumer warpgroups interleave on the tensor pipe: while one loads fragments,
// the other's wgmmas run.
//
// Tails: TMA zero-fills outside the tensor (M, N, K tails), stores are bounds-checked. TMA needs
// 16-byte row strides, hence K % 4 == 0 and N % 4 == 0 (refused otherwise, by the variant).
#ifndef GEMM_HAVE_SM90A
#define GEMM_HAVE_SM90A 1  // this file is the sm_90a build: see the declarations in wgmma_tma.h
#endif

#include <cuda.h>

#include <array>
#include <utility>

#include "launch.cuh"
#include "sm90a_ptx.cuh"
#include "tma_maps.h"
#include "wgmma_tile.cuh"

namespace gemm::tensor {
namespace {

template <int BM, int BN, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    wgmma_tma_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                     const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b) {
  using P = WgTile<BM, BN, STAGES>;
  (void)A;
  (void)B;  // read through the tensor maps
  extern __shared__ unsigned char smem_raw[];
  // Align the tiles to 1024 bytes (the smem_bytes() slack pays for it).
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + STAGES * P::STAGE_BYTES);
  std::uint64_t* empty = full + STAGES;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + P::BK - 1) / P::BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);                   // the producer's arrive.expect_tx
      mbar_init(&empty[s], P::CONSUMERS * 4);   // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(&empty[s], ((kt / STAGES) - 1) & 1);
        unsigned char* stage = smem + s * P::STAGE_BYTES;
        mbar_arrive_expect_tx(&full[s], P::STAGE_BYTES);
        tma_load_2d(stage, &map_a, kt * P::BK, m0, &full[s]);
#pragma unroll
        for (int j = 0; j < BN / 32; ++j)
          tma_load_2d(stage + P::A_BYTES + j * P::B_BOX_BYTES, &map_b, n0 + 32 * j, kt * P::BK,
                      &full[s]);
      }
    }
    return;
  }

  // Consumers.
  setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  float d[P::ACC];
#pragma unroll
  for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(&full[s], (kt / STAGES) & 1);
    mma_k_tile<BM, BN, STAGES>(d, smem + s * P::STAGE_BYTES, slot);
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }
  store_c_transposed<BM>(d, C, M, N, m0, n0, slot);
}

template <int I>
constexpr auto kernel_of() {
  constexpr WgmmaTmaConfig c = kWgmmaTmaConfigs[I];
  return wgmma_tma_kernel<c.bm, c.bn, c.stages, c.producer_registers(), c.consumer_registers()>;
}

template <int I>
void run_config(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream) {
  constexpr WgmmaTmaConfig c = kWgmmaTmaConfigs[I];
  static_assert(c.smem_bytes() ==
                std::size_t(c.stages) * WgTile<c.bm, c.bn, c.stages>::STAGE_BYTES +
                    2 * c.stages * 8 + 1024,
                "host and device agree on the shared-memory size");
  const TmaMapPair& maps = tma_maps_for(c.bm, WgmmaTmaConfig::bk, A, B, M, N, K);
  LaunchPlan plan;
  plan.block = {c.threads(), 1, 1};
  plan.grid = {ceil_div(N, c.bn), ceil_div(M, c.bm), 1};
  plan.dynamic_smem_bytes = c.smem_bytes();
  launch(plan, stream, kernel_of<I>(), A, B, C, M, N, K, maps.a, maps.b);
}

template <std::size_t... I>
constexpr std::array<const void*, sizeof...(I)> kernel_table(std::index_sequence<I...>) {
  return {reinterpret_cast<const void*>(kernel_of<I>())...};
}

using RunFn = void (*)(const float*, const float*, float*, int, int, int, cudaStream_t);
template <std::size_t... I>
constexpr std::array<RunFn, sizeof...(I)> run_table(std::index_sequence<I...>) {
  return {&run_config<I>...};
}

}  // namespace

const void* wgmma_tma_kernel(int config) {
  static const auto table = kernel_table(std::make_index_sequence<kWgmmaTmaConfigCount>{});
  return table.at(std::size_t(config));
}

void wgmma_tma_run(int config, const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream) {
  static const auto table = run_table(std::make_index_sequence<kWgmmaTmaConfigCount>{});
  table.at(std::size_t(config))(A, B, C, M, N, K, stream);
}

}  // namespace gemm::tensor
