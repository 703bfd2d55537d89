// 1-D blocks with a grid-stride loop (seed 001): thread t computes C elements t, t + stride, ...
// The same kernel drives seed 001's scaling study with one thread per block and n blocks.
//
// The write-up's 1-D listing strides by blockDim.x * blockDim.x, which makes threads recompute
// elements that other threads own; its small-thread listing strides by gridDim.x * blockDim.x,
// the grid stride used here. It also accumulates FP64 products in a float; we accumulate in T.
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
    const PlanFn one_element_per_thread = [](const GemmShape& s) {
      LaunchPlan p;
      p.block = {kThreadsPerBlock, 1, 1};
      p.grid = {ceil_div(s.m * s.n, kThreadsPerBlock), 1, 1};
      return p;
    };
    out.push_back(VariantBuilder::of<T>("grid_stride")
                      .params({{"threads", kThreadsPerBlock}})
                      .launch(kernel_launch<T>(one_element_per_thread, grid_stride_kernel<T>))
                      .origin("seed 001 1-D block")
                      .tags({tag::e2e, tag::crosscheck, tag::summary})
                      .build());

    for (int blocks = 1; blocks <= kMaxScalingBlocks; blocks *= 2) {
      const PlanFn single_thread_blocks = [blocks](const GemmShape&) {
        LaunchPlan p;
        p.block = {1, 1, 1};
        p.grid = {blocks, 1, 1};
        return p;
      };
      out.push_back(VariantBuilder::of<T>("single_thread_blocks")
                        .params({{"blocks", blocks}})
                        .launch(kernel_launch<T>(single_thread_blocks, grid_stride_kernel<T>))
                        .origin("seed 001 small-thread scaling")
                        // The write-up's speedups include the host-device copies.
                        .tags({tag::e2e})
                        .note("one thread per block: 31 of 32 lanes of every warp idle")
                        // One thread takes ~2 s (FP32) to 7 s (FP64) at 512^3 on an H100/H200.
                        .default_max_work(256.0 * 256.0 * 256.0)
                        .outputs_per_thread(0)  // M*N / blocks: derived from the shape
                        .build());
    }
  });
}

}  // namespace gemm
