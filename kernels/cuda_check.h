// Turns CUDA and cuBLAS failures into exceptions that name the call, file and line.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gemm {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_library_error(int status, const char* library, const char* call,
                                      const char* file, int line);

}  // namespace gemm

#define GEMM_CUDA_CHECK(call)                                                   \
  do {                                                                          \
    cudaError_t gemm_status_ = (call);                                          \
    if (gemm_status_ != cudaSuccess)                                            \
      ::gemm::throw_cuda_error(gemm_status_, #call, __FILE__, __LINE__);        \
  } while (0)

// Checks the launch itself (configuration errors); execution errors surface at the next sync.
#define GEMM_CHECK_LAUNCH() GEMM_CUDA_CHECK(cudaGetLastError())

// A library call whose status must equal `ok` (cuBLAS, cuBLASLt: CUBLAS_STATUS_SUCCESS).
#define GEMM_LIBRARY_CHECK(library, ok, call)                                              \
  do {                                                                                     \
    const auto gemm_status_ = (call);                                                      \
    if (gemm_status_ != (ok))                                                              \
      ::gemm::throw_library_error(int(gemm_status_), library, #call, __FILE__, __LINE__);  \
  } while (0)
