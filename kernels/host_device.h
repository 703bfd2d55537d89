// GEMM_HOST_DEVICE: a function compiled for both sides under nvcc, a plain host function in a
// .cpp, so host code (plans, tests) and kernels share one definition.
#pragma once

#if defined(__CUDACC__)
#define GEMM_HOST_DEVICE __host__ __device__
#else
#define GEMM_HOST_DEVICE
#endif
