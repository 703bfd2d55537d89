// Naive GEMM: one thread per element of C, every operand read from global memory.
// Three thread mappings from the SYSU lab (seed 000); they differ only in which index of C
// threadIdx.x walks, and that alone decides whether a warp's loads coalesce.
#include "launch.cuh"

namespace gemm {
namespace {

// Row-mapped: threadIdx.x walks the columns of C. A warp reads one A element (broadcast) and
// consecutive elements of a row of B: coalesced.
template <typename T>
__global__ void naive_row_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    T sum = 0;
    for (int j = 0; j < K; ++j) sum += A[row * K + j] * B[j * N + col];
    C[row * N + col] = sum;
  }
}

// Column-mapped: threadIdx.x walks the rows of C. A warp reads the same column of 32 different
// rows of A: one 32-byte sector per lane.
template <typename T>
__global__ void naive_col_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.x + threadIdx.x;
  const int col = blockIdx.x * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    T sum = 0;
    for (int j = 0; j < K; ++j) sum += A[row * K + j] * B[j * N + col];
    C[row * N + col] = sum;
  }
}

// Tile-mapped: the block owns a tile_x x tile_y tile of C, as written in the lab report. With
// tile == blockDim it computes what naive_row computes; it is kept to reproduce table 3.
template <typename T>
__global__ void naive_tile_kernel(const T* A, const T* B, T* C, int M, int N, int K, int tile_x,
                                  int tile_y) {
  const int row = blockIdx.y * tile_y + threadIdx.y;
  const int col = blockIdx.x * tile_x + threadIdx.x;
  if (row < M && col < N) {
    T sum = 0;
    for (int j = 0; j < K; ++j) sum += A[row * K + j] * B[j * N + col];
    C[row * N + col] = sum;
  }
}

constexpr int kBlockEdges[] = {8, 16, 32};

// The write-ups' names ("block:16x16") stay; the fields are what tools read.
VariantBuilder block_variant(VariantBuilder b, const char* name, const char* x_key,
                             const char* y_key, int edge) {
  const std::string e = std::to_string(edge);
  b.params(std::string(name) + ":" + e + "x" + e, {{x_key, edge}, {y_key, edge}});
  return b;
}

}  // namespace

void add_naive_variants(std::vector<Variant>& out) {
  for_each_precision([&](auto precision_tag) {
    using T = typename decltype(precision_tag)::type;
    for (int edge : kBlockEdges) {
      Tags tags = {tag::tile_sweep, tag::tracked, tag::crosscheck};
      if (edge == 16) tags.push_back(tag::e2e);  // seed 001's 2-D kernel, timed with copies
      if (edge == 32) tags.push_back(tag::summary);
      out.push_back(
          block_variant(VariantBuilder::of<T>("naive_row"), "block", "block_x", "block_y", edge)
              .launch(kernel_launch<T>(element_per_thread_plan(edge, edge), naive_row_kernel<T>))
              .origin("seed 000 table 1 (row); seed 001 2-D block; seed 002 naive")
              .tags(tags)
              .build());
    }
    for (int edge : kBlockEdges) {
      // grid.x covers columns with blockDim.y and grid.y rows with blockDim.x: for the square
      // blocks swept here that is the same grid as the row mapping.
      Tags tags = {tag::tile_sweep, tag::tracked, tag::crosscheck};
      if (edge == 32) tags.push_back(tag::summary);
      out.push_back(
          block_variant(VariantBuilder::of<T>("naive_col"), "block", "block_x", "block_y", edge)
              .launch(kernel_launch<T>(element_per_thread_plan(edge, edge), naive_col_kernel<T>))
              .origin("seed 000 table 2 (column)")
              .note("uncoalesced by design: a warp reads one column of 32 rows of A")
              .default_max_work(2048.0 * 2048.0 * 2048.0)
              .tags(tags)
              .build());
    }
    for (int edge : kBlockEdges) {
      Tags tags = {tag::tile_sweep};
      if (edge == 16) tags.push_back(tag::crosscheck);
      out.push_back(
          block_variant(VariantBuilder::of<T>("naive_tile"), "tile", "tile_x", "tile_y", edge)
              .launch(kernel_launch<T>(element_per_thread_plan(edge, edge),
                                       naive_tile_kernel<T>, edge, edge))
              .origin("seed 000 table 3 (block)")
              .tags(tags)
              .build());
    }
  });
}

}  // namespace gemm
