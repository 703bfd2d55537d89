// Shared-memory tiling with a compile-time tile (seeds 000 and 003): a TILE x TILE block loads
// TILE x TILE tiles of A and B once into shared memory and reuses each element TILE times, so
// global loads fall by a factor of TILE against the naive kernel.
//
// Three layouts make the study's bank-conflict lesson:
//   shared             row mapping (seed 000 table 1): lanes read a broadcast of tile_a and
//                      consecutive words of tile_b, conflict-free;
//   shared_col         column mapping (seed 000 table 2): lanes read one column of tile_a, whose
//                      rows are TILE words apart, so they collide in the same banks;
//   shared_col_padded  the same with each row padded by one element, which removes the conflict.
#include "launch.cuh"
#include "shared_tile_load.cuh"

namespace gemm {
namespace {

template <typename T, int TILE, ThreadMapping MAPPING, int PAD>
__global__ void shared_tiled_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  static_assert(TILE * TILE <= 1024, "a TILE x TILE block exceeds 1024 threads");
  static_assert(PAD == 0 || PAD == 1, "rows are padded by at most one element");
  __shared__ T tile_a[TILE][TILE + PAD];
  __shared__ T tile_b[TILE][TILE + PAD];

  const TileCoords<MAPPING> t;
  const int row = blockIdx.y * TILE + t.r;
  const int col = blockIdx.x * TILE + t.c;
  T sum = 0;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    load_tiles<T, TILE, PAD>(tile_a, tile_b, A, B, M, N, K, row, col, t.r, t.c, k0);
    __syncthreads();
    for (int i = 0; i < TILE; ++i) sum += tile_a[t.r][i] * tile_b[i][t.c];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

template <typename T, ThreadMapping MAPPING, int PAD>
void add_layout(std::vector<Variant>& out, const char* family, const char* origin,
                const char* note) {
  for_each_static_tile([&](auto tile) {
    constexpr int TILE = decltype(tile)::value;
    constexpr std::size_t smem = 2 * TILE * (TILE + PAD) * sizeof(T);
    const bool row_mapping = MAPPING == ThreadMapping::row;
    Tags tags = {tag::tile_sweep, tag::tracked, tag::crosscheck};
    if (row_mapping || TILE == 32) tags.push_back(tag::summary);
    if (row_mapping && TILE == 32) tags.push_back(tag::e2e);  // seed 001's shared kernel
    out.push_back(VariantBuilder::of<T>(family)
                      .params({{"tile", TILE}})
                      .launch(kernel_launch<T>(element_per_thread_plan(TILE, TILE, smem),
                                               shared_tiled_kernel<T, TILE, MAPPING, PAD>))
                      .origin(origin)
                      .note(note)
                      .tags(tags)
                      .build());
  });
}

}  // namespace

void add_shared_tiled_variants(std::vector<Variant>& out) {
  for_each_precision([&](auto precision_tag) {
    using T = typename decltype(precision_tag)::type;
    add_layout<T, ThreadMapping::row, 0>(
        out, "shared", "seed 000 table 1 (row); seeds 001 and 003 shared memory", "");
    add_layout<T, ThreadMapping::col, 0>(
        out, "shared_col", "seed 000 table 2 (column)",
        "bank conflicts by design: tile_a is read down a column");
    add_layout<T, ThreadMapping::col, 1>(out, "shared_col_padded",
                                         "teaching pair of shared_col",
                                         "rows padded by one element: conflict-free");
  });
}

}  // namespace gemm
