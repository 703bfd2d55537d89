// fill_random on the host and on the device: the same values (random_inputs.h).
#include <algorithm>

#include "cuda_check.h"
#include "random_inputs.h"
#include "reference.h"

namespace gemm {
namespace {

template <typename T>
__global__ void fill_random_kernel(T* out, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = T(random_input(seed, i));
}

template <typename T>
void fill_host(T* out, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = 0; i < count; ++i) out[i] = T(random_input(seed, i));
}

}  // namespace

void fill_random(Precision p, void* data, std::size_t count, std::uint64_t seed) {
  if (p == Precision::fp32)
    fill_host(static_cast<float*>(data), count, seed);
  else
    fill_host(static_cast<double*>(data), count, seed);
}

void fill_random_on_device(Precision p, void* data, std::size_t count, std::uint64_t seed,
                           cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kThreads = 256;
  // A grid-stride loop over at most 4096 blocks: enough to fill every SM, and no grid limit
  // for counts past 2^31.
  const unsigned blocks = unsigned(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
  if (p == Precision::fp32)
    fill_random_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
  else
    fill_random_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<double*>(data), count, seed);
  GEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gemm
