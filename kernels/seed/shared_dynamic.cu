// Seed 002's dynamic-tile kernel: the tile edge comes from blockDim.x and both tiles live in
// extern shared memory sized at launch (2 * tile * tile elements). The write-up sweeps tile 64
// as well, which needs 64 x 64 = 4096 threads per block; the launch check rejects it with that
// reason instead of launching, as the write-up does.
#include "launch.cuh"

namespace gemm {
namespace {

template <typename T>
__global__ void shared_dynamic_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  extern __shared__ unsigned char smem_bytes[];
  T* tile_a = reinterpret_cast<T*>(smem_bytes);
  const int tile = blockDim.x;
  T* tile_b = tile_a + tile * tile;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * tile + ty;
  const int col = blockIdx.x * tile + tx;
  T sum = 0;
  for (int k0 = 0; k0 < K; k0 += tile) {
    tile_a[ty * tile + tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : T(0);
    tile_b[ty * tile + tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : T(0);
    __syncthreads();
    for (int i = 0; i < tile; ++i) sum += tile_a[ty * tile + i] * tile_b[i * tile + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

constexpr int kTiles[] = {8, 16, 32, 64};  // 64 is illegal on every current GPU, on purpose

}  // namespace

void add_shared_dynamic_variants(std::vector<Variant>& out) {
  for_each_precision([&](auto precision_tag) {
    using T = typename decltype(precision_tag)::type;
    for (int tile : kTiles) {
      const std::size_t smem = 2ull * tile * tile * sizeof(T);
      Tags tags = {tag::tile_sweep, tag::tracked};
      if (tile <= 32) tags.push_back(tag::crosscheck);
      if (tile == 32) tags.push_back(tag::summary);
      out.push_back(VariantBuilder::of<T>("shared_dynamic")
                        .params({{"tile", tile}})
                        .launch(kernel_launch<T>(element_per_thread_plan(tile, tile, 0, smem),
                                                 shared_dynamic_kernel<T>))
                        .origin("seed 002 tile sweep")
                        .tags(tags)
                        .build());
    }
  });
}

}  // namespace gemm
