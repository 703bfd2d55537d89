// cuBLAS references. Row-major C = A * B is computed as the column-major product
// C^T = B^T * A^T, which needs no transposition: cuBLAS sees B as an N x K and A as a K x M
// column-major matrix.
//   cublas        FP32 with CUBLAS_COMPUTE_32F (true FP32, no TF32) and FP64 DGEMM
//   cublas_tf32   FP32 with CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores, 10-bit mantissa
#include <cublas_v2.h>

#include <mutex>

#include "launch.cuh"

#define GEMM_CUBLAS_CHECK(call) GEMM_LIBRARY_CHECK("cuBLAS", CUBLAS_STATUS_SUCCESS, call)

namespace gemm {
namespace {

// One handle for the process, created on first use (creating it costs milliseconds and must
// stay out of timed regions: the harness warms every variant up before timing).
cublasHandle_t handle() {
  static std::once_flag once;
  static cublasHandle_t h = nullptr;
  std::call_once(once, [] { GEMM_CUBLAS_CHECK(cublasCreate(&h)); });
  return h;
}

void run_cublas(const Operands& ops, cudaStream_t stream, cudaDataType_t type,
                cublasComputeType_t compute) {
  cublasHandle_t h = handle();
  GEMM_CUBLAS_CHECK(cublasSetStream(h, stream));
  const int m = int(ops.shape.m), n = int(ops.shape.n), k = int(ops.shape.k);
  const double alpha64 = 1.0, beta64 = 0.0;
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const bool fp64 = type == CUDA_R_64F;
  const void* alpha = fp64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = fp64 ? static_cast<const void*>(&beta64) : &beta32;
  GEMM_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, ops.b, type, n,
                                 ops.a, type, k, beta, ops.c, type, n, compute,
                                 CUBLAS_GEMM_DEFAULT));
}

VariantBuilder cublas_variant(std::string family, Precision p, cublasComputeType_t compute,
                              Compute arithmetic) {
  const cudaDataType_t type = p == Precision::fp32 ? CUDA_R_32F : CUDA_R_64F;
  VariantBuilder b(std::move(family), p);
  b.compute(arithmetic)
      .runs_on(Backend::cublas,
               [type, compute](const Operands& ops, cudaStream_t stream) {
                 run_cublas(ops, stream, type, compute);
               })
      .tags({tag::summary});
  return b;
}

}  // namespace

void add_cublas_reference_variants(std::vector<Variant>& out) {
  out.push_back(cublas_variant("cublas", Precision::fp32, CUBLAS_COMPUTE_32F, Compute::fp32)
                    .origin("reference: cublasGemmEx, CUBLAS_COMPUTE_32F")
                    .tags({tag::tracked, tag::e2e})
                    .build());
  out.push_back(cublas_variant("cublas", Precision::fp64, CUBLAS_COMPUTE_64F, Compute::fp64)
                    .origin("reference: cublasGemmEx, CUBLAS_COMPUTE_64F (DGEMM)")
                    .tags({tag::tracked, tag::e2e})
                    .build());
  // TF32 rounds the inputs to a 10-bit mantissa: unit roundoff 2^-11.
  out.push_back(cublas_variant("cublas_tf32", Precision::fp32, CUBLAS_COMPUTE_32F_FAST_TF32,
                               Compute::tf32)
                    .origin("reference: cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32")
                    .note("TF32 tensor cores: not comparable in accuracy with FP32")
                    .build());
}

}  // namespace gemm
