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
//
// SASS: HGMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include <cuda_runtime_api.h>

#include <algorithm>
#include "common/tile_order.cuh"
#include "wgmma_tile.cuh"

namespace gemm::tensor {
namespace {

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
      typename WgPipeline<BM, BN, STAGES>::State s;  // runs on over all the block's tiles
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tile_m, tile_n;
        grouped_tile<GROUP>(tile, tiles_m, tiles_n, tile_m, tile_n);
        for (int kt = 0; kt < k_tiles; ++kt, ++s)
          pipe.produce(s, kt, tile_m * BM, tile_n * BN, map_a, map_b);
      }
    }
    return;
  }

  // Consumers.
  setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  typename WgPipeline<BM, BN, STAGES>::State s;  // k-tiles consumed, in the producer's order
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int tile_m, tile_n;
    grouped_tile<GROUP>(tile, tiles_m, tiles_n, tile_m, tile_n);
    float d[P::ACC];
#pragma unroll
    for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < k_tiles; ++kt, ++s) pipe.consume(d, s, slot, lane);
    store_c_transposed<BM>(d, C, M, N, tile_m * BM, tile_n * BN, slot);
  }
}

// The persistent grid's configurations: wgmma_tma's block tile, one block per SM walking the
// tiles in groups of `group` block rows. The representative first: wgmma_tma's representative.
struct PersistentConfig {
  WgmmaTmaConfig tile;
  int group;
};
constexpr PersistentConfig kConfigs[] = {
    {.tile = {.bm = 256, .bn = 128, .stages = 3, .role = Role::representative}, .group = 8},
    {.tile = {.bm = 256, .bn = 128, .stages = 3}, .group = 16},
    {.tile = {.bm = 128, .bn = 128, .stages = 4}, .group = 8},
};

// Blocks of the persistent grid for an M x N output: one per SM of the current device (one
// block fits an SM), at most one per tile; without a device, one per tile.
std::int64_t persistent_blocks(const WgmmaTmaConfig& tile, const GemmShape& s) {
  const std::int64_t tiles = ceil_div(s.m, tile.bm) * ceil_div(s.n, tile.bn);
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();  // no device: the facts of --list show one block per tile
    return tiles;
  }
  return std::max<std::int64_t>(1, std::min<std::int64_t>(tiles, sms));
}

template <PersistentConfig C>
void add_config(std::vector<Variant>& out) {
  constexpr WgmmaTmaConfig t = C.tile;
  const auto grid = [](const GemmShape& s) { return Dim3{persistent_blocks(C.tile, s), 1, 1}; };
  out.push_back(wgmma_config_variant<t>(
      "wgmma_persistent", {{"group", C.group}}, grid,
      wgmma_persistent_kernel<t.bm, t.bn, t.stages, C.group, t.producer_registers(),
                              t.consumer_registers()>,
      [](VariantBuilder& b) { b.persistent_grid(); }));
}

}  // namespace
}  // namespace gemm::tensor

namespace gemm {

void add_wgmma_persistent_variants(std::vector<Variant>& out) {
  for_each_entry<tensor::kConfigs>([&]<auto C>() { tensor::add_config<C>(out); });
}

}  // namespace gemm
