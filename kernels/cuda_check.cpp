#include "cuda_check.h"

namespace gemm {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ") at " + file + ":" + std::to_string(line));
}

void throw_library_error(int status, const char* library, const char* call, const char* file,
                         int line) {
  throw CudaError(std::string(call) + " failed: " + library + " status " +
                  std::to_string(status) + " at " + file + ":" + std::to_string(line));
}

}  // namespace gemm
