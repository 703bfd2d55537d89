#include <mutex>
#include <set>

#include "cuda_check.h"

namespace gemm {

// Declared in launch.cuh (not included here: it holds <<<>>> launches for nvcc only).

void allow_dynamic_smem(const void* kernel, std::size_t bytes) {
  // Raised once per kernel to the largest size asked for so far; the attribute is per function.
  static std::mutex mutex;
  static std::set<std::pair<const void*, std::size_t>> done;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({kernel, bytes}).second) return;
  GEMM_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

}  // namespace gemm
