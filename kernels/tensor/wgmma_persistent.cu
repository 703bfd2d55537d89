// TF32 wgmma + TMA on a persistent grid (sm_90a): the warp-specialized block of wgmma_tma.cu (one
// producer warpgroup issuing TMA, BN / 64 consumer warpgroups issuing wgmma, setmaxnreg), but one
// block per SM that walks the output tiles instead of one block per tile.
//
// What it changes. A block of the one-tile kernel fills its pipeline from empty (STAGES k-tiles
// of latency before the first wgmma) and drains it for the epilogue (the consumers store 128 KB
// of C while the tensor pipe idles); a new block's prologue starts only when the SM is free. Here
// the producer's k-tile counter runs on across tiles: while the consumers store tile i, the
// producer is already bringing in tile i + 1's first STAGES k-tiles, since the consumers released
// those stages as they finished tile i's last k-tiles. The full/empty barriers are the same, their
// phase is the running k-tile count's, not the tile-local one's.
//
// Tile order. Tile t of a grid of G blocks runs at about the same time as tiles t +- G: the tiles
// are numbered down groups of GROUP block rows before moving one block column right, so that the
// blocks of one wave share A rows and B columns in L2 (the rasterization of the CUDA-core ladder).
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

// Tile `tile` of a tiles_m x tiles_n grid in grouped order: GROUP block rows, column by column.
template <int GROUP>
__device__ __forceinline__ int2 grouped_tile(int tile, int tiles_m, int tiles_n) {
  const int per_group = GROUP * tiles_n;
  const int group = tile / per_group;
  const int first_row = group * GROUP;
  const int rows = min(tiles_m - first_row, GROUP);
  const int in_group = tile - group * per_group;
  return make_int2(first_row + in_group % rows, in_group / rows);  // (block row, block column)
}

template <int BM, int BN, int STAGES, int GROUP, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    wgmma_persistent_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                            const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b) {
  using P = WgTile<BM, BN, STAGES>;
  (void)A;
  (void)B;  // read through the tensor maps
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + STAGES * P::STAGE_BYTES);
  std::uint64_t* empty = full + STAGES;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = (K + P::BK - 1) / P::BK;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n;

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
      int it = 0;  // k-tiles issued by this block, over all its tiles
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int2 rc = grouped_tile<GROUP>(tile, tiles_m, tiles_n);
        const int m0 = rc.x * BM, n0 = rc.y * BN;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
          unsigned char* stage = smem + s * P::STAGE_BYTES;
          mbar_arrive_expect_tx(&full[s], P::STAGE_BYTES);
          tma_load_2d(stage, &map_a, kt * P::BK, m0, &full[s]);
#pragma unroll
          for (int j = 0; j < BN / 32; ++j)
            tma_load_2d(stage + P::A_BYTES + j * P::B_BOX_BYTES, &map_b, n0 + 32 * j, kt * P::BK,
                        &full[s]);
        }
      }
    }
    return;
  }

  // Consumers.
  setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  int it = 0;  // k-tiles consumed, in the producer's order
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int2 rc = grouped_tile<GROUP>(tile, tiles_m, tiles_n);
    float d[P::ACC];
#pragma unroll
    for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbar_wait(&full[s], (it / STAGES) & 1);
      mma_k_tile<BM, BN, STAGES>(d, smem + s * P::STAGE_BYTES, slot);
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[s]);
    }
    store_c_transposed<BM>(d, C, M, N, rc.x * BM, rc.y * BN, slot);
  }
}

template <int I>
constexpr auto kernel_of() {
  constexpr WgmmaPersistentConfig c = kWgmmaPersistentConfigs[I];
  return wgmma_persistent_kernel<c.tile.bm, c.tile.bn, c.tile.stages, c.group,
                                 c.tile.producer_registers(), c.tile.consumer_registers()>;
}

template <int I>
void run_config(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream) {
  constexpr WgmmaPersistentConfig c = kWgmmaPersistentConfigs[I];
  constexpr WgmmaTmaConfig t = c.tile;
  static_assert(t.smem_bytes() ==
                std::size_t(t.stages) * WgTile<t.bm, t.bn, t.stages>::STAGE_BYTES +
                    2 * t.stages * 8 + 1024,
                "host and device agree on the shared-memory size");
  const TmaMapPair& maps = tma_maps_for(t.bm, WgmmaTmaConfig::bk, A, B, M, N, K);
  LaunchPlan plan;
  plan.block = {t.threads(), 1, 1};
  plan.grid = {wgmma_persistent_blocks(c, M, N), 1, 1};
  plan.dynamic_smem_bytes = t.smem_bytes();
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

const void* wgmma_persistent_kernel(int config) {
  static const auto table = kernel_table(std::make_index_sequence<kWgmmaPersistentConfigCount>{});
  return table.at(std::size_t(config));
}

void wgmma_persistent_run(int config, const float* A, const float* B, float* C, int M, int N,
                          int K, cudaStream_t stream) {
  static const auto table = run_table(std::make_index_sequence<kWgmmaPersistentConfigCount>{});
  table.at(std::size_t(config))(A, B, C, M, N, K, stream);
}

}  // namespace gemm::tensor
