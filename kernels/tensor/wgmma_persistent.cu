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
  const WgPipeline<BM, BN, STAGES> pipe(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = (K + P::BK - 1) / P::BK;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n;

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      int it = 0;  // k-tiles issued by this block, over all its tiles
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int2 rc = grouped_tile<GROUP>(tile, tiles_m, tiles_n);
        for (int kt = 0; kt < k_tiles; ++kt, ++it)
          pipe.produce(it, kt, rc.x * BM, rc.y * BN, map_a, map_b);
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
    for (int kt = 0; kt < k_tiles; ++kt, ++it) pipe.consume(d, it, slot, lane);
    store_c_transposed<BM>(d, C, M, N, rc.x * BM, rc.y * BN, slot);
  }
}

struct Instances {
  template <int I>
  static constexpr WgKernel kernel() {
    constexpr WgmmaPersistentConfig c = kWgmmaPersistentConfigs[I];
    constexpr WgmmaTmaConfig t = c.tile;
    static_assert(WgTile<t.bm, t.bn, t.stages>::SMEM_BYTES == t.smem_bytes(),
                  "host and device agree on the shared-memory size");
    return wgmma_persistent_kernel<t.bm, t.bn, t.stages, c.group, t.producer_registers(),
                                   t.consumer_registers()>;
  }
};

WgKernel instance(int config) {
  return wg_kernel_at<Instances>(config,
                                 std::make_index_sequence<kWgmmaPersistentConfigCount>{});
}

}  // namespace

const void* wgmma_persistent_kernel(int config) {
  return reinterpret_cast<const void*>(instance(config));
}

void wgmma_persistent_launch(int config, const LaunchPlan& plan, const Operands& ops,
                             cudaStream_t stream) {
  wg_launch(instance(config), kWgmmaPersistentConfigs[config].tile.bm, plan, ops, stream);
}

}  // namespace gemm::tensor
