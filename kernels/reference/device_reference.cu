#include "launch.cuh"
#include "reference.h"

namespace gemm {
namespace {

// Compensated dot product (Ogita, Rump and Oishi's Dot2): the rounding error of every product
// (exact via FMA) and of every addition (TwoSum) is accumulated separately. The _rn intrinsics
// stop the compiler from contracting a*b + s into an FMA, which would break the error terms.
template <typename T>
__global__ void dot2_reference_kernel(const T* A, const T* B, double* C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  double hi = 0.0, lo = 0.0;
  for (int j = 0; j < K; ++j) {
    const double a = A[row * K + j];
    const double b = B[j * N + col];
    const double p = __dmul_rn(a, b);
    const double p_err = fma(a, b, -p);
    const double s = __dadd_rn(hi, p);
    const double z = __dsub_rn(s, hi);
    const double s_err = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, z)), __dsub_rn(p, z));
    hi = s;
    lo = __dadd_rn(lo, __dadd_rn(p_err, s_err));
  }
  C[row * N + col] = __dadd_rn(hi, lo);
}

}  // namespace

void device_reference_gemm(Precision p, const void* a, const void* b, double* c,
                           const GemmShape& s, cudaStream_t stream) {
  LaunchPlan plan;
  plan.block = {16, 16, 1};
  plan.grid = {ceil_div(s.n, 16), ceil_div(s.m, 16), 1};
  if (p == Precision::fp32)
    launch(plan, stream, dot2_reference_kernel<float>, static_cast<const float*>(a),
           static_cast<const float*>(b), c, int(s.m), int(s.n), int(s.k));
  else
    launch(plan, stream, dot2_reference_kernel<double>, static_cast<const double*>(a),
           static_cast<const double*>(b), c, int(s.m), int(s.n), int(s.k));
}

}  // namespace gemm
