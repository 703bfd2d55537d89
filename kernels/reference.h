// References for correctness: a result in higher precision than the variant's arithmetic, and
// the comparison that turns a variant's output into max_rel_err and a verdict.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "gemm_types.h"

namespace gemm {

// Host reference in higher precision: FP32 inputs are accumulated in double (their products are
// exact there), FP64 inputs in long double (64-bit mantissa on x86).
std::vector<double> cpu_reference_gemm(Precision p, const void* a, const void* b,
                                       const GemmShape& shape);

// Device reference for large shapes, where the host loop would take minutes: one thread per
// element, products split exactly with FMA and summed in double-double (compensated dot
// product), so the result is as accurate as if computed in twice the working precision of FP64.
void device_reference_gemm(Precision p, const void* a, const void* b, double* c,
                           const GemmShape& shape, cudaStream_t stream);

// The seed 001 serial baseline: the textbook i-j-k loop in the working precision.
void cpu_serial_gemm(Precision p, const void* a, const void* b, void* c, const GemmShape& shape);

struct Verification {
  double max_abs_err = 0;   // over all elements
  double max_abs_ref = 0;
  double max_rel_err = 0;   // max_abs_err / max_abs_ref (normwise, robust near zero elements)
  double tolerance = 0;
  std::int64_t unwritten = 0;  // non-finite outputs: still poisoned, or overflowed
  bool passed = false;
};

// Tolerance for a K-term dot product with unit roundoff u: sequential summation error grows at
// worst like K*u; 2*K*u (at least 4u) is loose enough for any correct summation order and still
// orders of magnitude below what an indexing bug produces. Capped at 1e-2 for TF32.
double verification_tolerance(double unit_roundoff, std::int64_t k);

Verification verify(Precision p, const void* c, const std::vector<double>& reference,
                    double tolerance);

// The same comparison on the device, for C and the reference in device memory: no copy of C to
// the host (64 MB per launch at 4096^3 in FP32) and no host loop over it.
Verification verify_on_device(Precision p, const void* c, const double* reference,
                              std::size_t count, double tolerance, cudaStream_t stream);

// max_rel_err and the verdict from the sums (max_abs_err, max_abs_ref, unwritten, tolerance).
Verification finish_verification(Verification v);

// Fills with uniform values in [-1, 1) from the given seed (FP32: rounded, so 1.0f occurs);
// never zeros. Element i is a function of (seed, i) alone (reference/random_inputs.h).
void fill_random(Precision p, void* data, std::size_t count, std::uint64_t seed);
// The same values, written by the GPU into device memory (asynchronous on `stream`).
void fill_random_on_device(Precision p, void* data, std::size_t count, std::uint64_t seed,
                           cudaStream_t stream);
// Fills with quiet NaN so an element the kernel never writes fails verification.
void fill_poison(Precision p, void* data, std::size_t count);

}  // namespace gemm
