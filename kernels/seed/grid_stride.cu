// 1-D blocks with a grid-stride loop (seed 001): thread t computes C elements t, t + stride, ...
// The same kernel drives seed 001's scaling study with one thread per block and n blocks.
//
// The write-up's 1-D listing strides by blockDim.x * blockDim.x, which makes threads recompute
// elements that other threads own; its small-thread listing strides by gridDim.x * blockDim.x,
// the grid stride used here. It also accumulates FP64 products in a float; we accumulate in T.
#include "families.h"
#include "launch.cuh"

namespace gemm {
namespace {

template <typename T>
__global__ void grid_stride_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long id = blockIdx.x * blockDim.x + threadIdx.x; id < total; id += stride) {
    const int row = static_cast<int>(id / N);
    const int col = static_cast<int>(id % N);
    T sum = 0;
    for (int j = 0; j < K; ++j) sum += A[row * K + j] * B[j * N + col];
    C[row * N + col] = sum;
  }
}

constexpr int kThreadsPerBlock = 256;  // seed 001's choice
constexpr int kMaxScalingBlocks = 1024;

}  // namespace

void add_grid_stride_variants(std::vector<Variant>& out) {
  for_each_precision([&](auto precision_tag) {
    using T = typename decltype(precision_tag)::type;
    Variant v = kernel_variant<T>(
        "grid_stride", "threads:" + std::to_string(kThreadsPerBlock),
        [](const GemmShape& s) {
          LaunchPlan p;
          p.block = {kThreadsPerBlock, 1, 1};
          p.grid = {ceil_div(s.m * s.n, kThreadsPerBlock), 1, 1};  // one element per thread
          return p;
        },
        grid_stride_kernel<T>);
    v.origin = "seed 001 1-D block";
    v.param_fields = {{"threads", kThreadsPerBlock}};
    v.tags = {tag::seed, tag::e2e, tag::crosscheck, tag::summary};
    out.push_back(v);

    for (int blocks = 1; blocks <= kMaxScalingBlocks; blocks *= 2) {
      Variant s = kernel_variant<T>(
          "single_thread_blocks", "blocks:" + std::to_string(blocks),
          [blocks](const GemmShape&) {
            LaunchPlan p;
            p.block = {1, 1, 1};
            p.grid = {blocks, 1, 1};
            return p;
          },
          grid_stride_kernel<T>);
      s.origin = "seed 001 small-thread scaling";
      s.note = "one thread per block: 31 of 32 lanes of every warp idle";
      // One thread takes ~2 s (FP32) to 7 s (FP64) at 512^3 on an H100/H200.
      s.default_max_work = 256.0 * 256.0 * 256.0;
      s.param_fields = {{"blocks", blocks}};
      s.outputs_per_thread = 0;  // M*N / blocks: derived from the shape
      s.tags = {tag::seed};
      out.push_back(s);
    }
  });
}

}  // namespace gemm
