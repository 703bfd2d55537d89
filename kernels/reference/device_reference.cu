#include <algorithm>
#include <cstring>

#include "cuda_check.h"
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

// What verify() computes on the host, reduced on the device: the largest |C - reference| and
// |reference| over the finite outputs, and the number of non-finite ones. Non-negative doubles
// order like their bit patterns, so atomicMax on the bits is a max on the values.
struct DeviceVerification {
  unsigned long long max_abs_err_bits, max_abs_ref_bits, unwritten;
};

template <typename T>
__global__ void verify_kernel(const T* c, const double* reference, long long count,
                              DeviceVerification* out) {
  double err = 0.0, ref = 0.0;
  unsigned long long unwritten = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    const double got = double(c[i]);
    if (!isfinite(got)) {
      ++unwritten;
      continue;
    }
    err = fmax(err, fabs(got - reference[i]));
    ref = fmax(ref, fabs(reference[i]));
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    err = fmax(err, __shfl_down_sync(0xffffffffu, err, offset));
    ref = fmax(ref, __shfl_down_sync(0xffffffffu, ref, offset));
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
  }
  if (threadIdx.x % 32 != 0) return;
  atomicMax(&out->max_abs_err_bits, (unsigned long long)__double_as_longlong(err));
  atomicMax(&out->max_abs_ref_bits, (unsigned long long)__double_as_longlong(ref));
  if (unwritten) atomicAdd(&out->unwritten, unwritten);
}

}  // namespace

Verification verify_on_device(Precision p, const void* c, const double* reference,
                              std::size_t count, double tolerance, cudaStream_t stream) {
  DeviceVerification* sums = nullptr;
  GEMM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&sums), sizeof(*sums), stream));
  GEMM_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(*sums), stream));
  LaunchPlan plan;
  plan.block = {256, 1, 1};
  // A few blocks per SM of any GPU this runs on; the loop strides over the rest.
  plan.grid = {std::min<std::int64_t>(1024, ceil_div(std::int64_t(count), 256) + 1), 1, 1};
  const auto n = static_cast<long long>(count);
  if (p == Precision::fp32)
    launch(plan, stream, verify_kernel<float>, static_cast<const float*>(c), reference, n, sums);
  else
    launch(plan, stream, verify_kernel<double>, static_cast<const double*>(c), reference, n, sums);
  DeviceVerification host{};
  GEMM_CUDA_CHECK(cudaMemcpyAsync(&host, sums, sizeof(host), cudaMemcpyDeviceToHost, stream));
  GEMM_CUDA_CHECK(cudaFreeAsync(sums, stream));
  GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  Verification v;
  v.tolerance = tolerance;
  std::memcpy(&v.max_abs_err, &host.max_abs_err_bits, sizeof(double));
  std::memcpy(&v.max_abs_ref, &host.max_abs_ref_bits, sizeof(double));
  v.unwritten = static_cast<std::int64_t>(host.unwritten);
  return finish_verification(v);
}

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
