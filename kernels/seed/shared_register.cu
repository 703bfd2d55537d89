// Seed 000's "register tiling" variant, as written: each step of the multiply loop copies one
// element of each shared tile into a register before the multiply-add. That is what the compiler
// does for the plain shared kernel anyway, so this is *not* register blocking (no thread computes
// more than one element of C and nothing is reused from registers); the study reports it as the
// write-up's variant and compares it with shared/tile:T to show exactly that.
#include "launch.cuh"
#include "shared_tile_load.cuh"

namespace gemm {
namespace {

template <typename T, int TILE, ThreadMapping MAPPING>
__global__ void shared_register_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  static_assert(TILE * TILE <= 1024, "a TILE x TILE block exceeds 1024 threads");
  __shared__ T tile_a[TILE][TILE];
  __shared__ T tile_b[TILE][TILE];

  const TileCoords<MAPPING> t;
  const int row = blockIdx.y * TILE + t.r;
  const int col = blockIdx.x * TILE + t.c;
  T reg_a, reg_b;
  T sum = 0;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    load_tiles<T, TILE, 0>(tile_a, tile_b, A, B, M, N, K, row, col, t.r, t.c, k0);
    __syncthreads();
    for (int i = 0; i < TILE; ++i) {
      reg_a = tile_a[t.r][i];
      reg_b = tile_b[i][t.c];
      sum += reg_a * reg_b;
    }
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

template <typename T, ThreadMapping MAPPING>
void add_mapping(std::vector<Variant>& out, const char* family, const char* origin,
                 bool crosscheck) {
  for_each_static_tile([&](auto tile) {
    constexpr int TILE = decltype(tile)::value;
    constexpr std::size_t smem = 2 * TILE * TILE * sizeof(T);
    Tags tags = {tag::tile_sweep, tag::tracked};
    if (crosscheck) tags.push_back(tag::crosscheck);
    if (crosscheck && TILE == 32) tags.push_back(tag::summary);
    out.push_back(VariantBuilder::of<T>(family)
                      .params({{"tile", TILE}})
                      .launch(kernel_launch<T>(element_per_thread_plan(TILE, TILE, smem),
                                               shared_register_kernel<T, TILE, MAPPING>))
                      .origin(origin)
                      .note("stages through registers; not register blocking")
                      .tags(tags)
                      .build());
  });
}

}  // namespace

void add_shared_register_variants(std::vector<Variant>& out) {
  for_each_precision([&](auto precision_tag) {
    using T = typename decltype(precision_tag)::type;
    add_mapping<T, ThreadMapping::row>(out, "shared_register", "seed 000 table 1 (row)", true);
    add_mapping<T, ThreadMapping::col>(out, "shared_register_col", "seed 000 table 2 (column)",
                                       false);
  });
}

}  // namespace gemm
