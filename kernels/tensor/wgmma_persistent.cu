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
  const StageMemory<BM, BN, STAGES> mem(smem_raw);
  unsigned char* smem = mem.tiles;
  std::uint64_t* full = mem.full;
  std::uint64_t* empty = mem.empty;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = (K + P::BK - 1) / P::BK;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n;

  if (threadIdx.x == 0) init_stage_barriers<BM, BN, STAGES>(full, empty);
  __syncthreads();

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      int it = 0;  // k-tiles issued by this block, over all its tiles
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int2 rc = grouped_tile<GROUP>(tile, tiles_m, tiles_n);
        for (int kt = 0; kt < k_tiles; ++kt, ++it)
          produce_k_tile<BM, BN, STAGES>(smem, full, empty, it, kt, rc.x * BM, rc.y * BN, &map_a,
                                         &map_b);
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
    for (int kt = 0; kt < k_tiles; ++kt, ++it)
      consume_k_tile<BM, BN, STAGES>(d, smem, full, empty, it, slot, lane);
    store_c_transposed<BM>(d, C, M, N, rc.x * BM, rc.y * BN, slot);
  }
}

// Configuration I of kWgmmaPersistentConfigs: its kernel and its launch.
template <int I>
struct PersistentConfig {
  static constexpr WgmmaPersistentConfig c = kWgmmaPersistentConfigs[I];
  static constexpr WgmmaTmaConfig t = c.tile;
  static_assert(t.smem_bytes() ==
                    std::size_t(t.stages) * WgTile<t.bm, t.bn, t.stages>::STAGE_BYTES +
                        2 * t.stages * 8 + 1024,
                "host and device agree on the shared-memory size");
  static constexpr auto kernel() {
    return wgmma_persistent_kernel<t.bm, t.bn, t.stages, c.group, t.producer_registers(),
                                   t.consumer_registers()>;
  }
  static void run(const float* A, const float* B, float* C, int M, int N, int K,
                  cudaStream_t stream) {
    const TmaMapPair& maps = tma_maps_for(t.bm, WgmmaTmaConfig::bk, A, B, M, N, K);
    LaunchPlan plan;
    plan.block = {t.threads(), 1, 1};
    plan.grid = {wgmma_persistent_blocks(c, M, N), 1, 1};
    plan.dynamic_smem_bytes = t.smem_bytes();
    launch(plan, stream, kernel(), A, B, C, M, N, K, maps.a, maps.b);
  }
};

}  // namespace

const void* wgmma_persistent_kernel(int config) {
  return config_kernel<PersistentConfig>(config,
                                         std::make_index_sequence<kWgmmaPersistentConfigCount>{});
}

void wgmma_persistent_run(int config, const float* A, const float* B, float* C, int M, int N,
                          int K, cudaStream_t stream) {
  config_run<PersistentConfig>(config, std::make_index_sequence<kWgmmaPersistentConfigCount>{})(
      A, B, C, M, N, K, stream);
}

}  // namespace gemm::tensor
