#include <algorithm>
#include <cmath>
#include <limits>

#include "reference.h"
#include "tags.h"
#include "variant_builder.h"

namespace gemm {
namespace {

template <typename In, typename Acc>
std::vector<double> reference_loop(const In* a, const In* b, const GemmShape& s) {
  std::vector<double> c(std::size_t(s.m * s.n));
  std::vector<Acc> row(std::size_t(s.n));
  for (std::int64_t i = 0; i < s.m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    // i-k-j order streams rows of B: the same sums, in the same order for every j, as i-j-k.
    for (std::int64_t k = 0; k < s.k; ++k) {
      const Acc aik = a[i * s.k + k];
      const In* b_row = b + k * s.n;
      for (std::int64_t j = 0; j < s.n; ++j) row[j] += aik * Acc(b_row[j]);
    }
    for (std::int64_t j = 0; j < s.n; ++j) c[i * s.n + j] = double(row[j]);
  }
  return c;
}

template <typename T>
void serial_loop(const T* a, const T* b, T* c, const GemmShape& s) {
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      T sum = 0;
      for (std::int64_t k = 0; k < s.k; ++k) sum += a[i * s.k + k] * b[k * s.n + j];
      c[i * s.n + j] = sum;
    }
}

}  // namespace

std::vector<double> cpu_reference_gemm(Precision p, const void* a, const void* b,
                                       const GemmShape& shape) {
  if (p == Precision::fp32)
    return reference_loop<float, double>(static_cast<const float*>(a),
                                         static_cast<const float*>(b), shape);
  return reference_loop<double, long double>(static_cast<const double*>(a),
                                             static_cast<const double*>(b), shape);
}

void cpu_serial_gemm(Precision p, const void* a, const void* b, void* c, const GemmShape& s) {
  if (p == Precision::fp32)
    serial_loop(static_cast<const float*>(a), static_cast<const float*>(b),
                static_cast<float*>(c), s);
  else
    serial_loop(static_cast<const double*>(a), static_cast<const double*>(b),
                static_cast<double*>(c), s);
}

double verification_tolerance(double unit_roundoff, std::int64_t k) {
  const double bound = std::max(4.0 * unit_roundoff, 2.0 * unit_roundoff * double(k));
  return std::min(bound, 1e-2);
}

Verification verify(Precision p, const void* c, const std::vector<double>& reference,
                    double tolerance) {
  Verification v;
  v.tolerance = tolerance;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double got = p == Precision::fp32 ? double(static_cast<const float*>(c)[i])
                                            : static_cast<const double*>(c)[i];
    if (!std::isfinite(got)) {
      ++v.unwritten;
      continue;
    }
    v.max_abs_err = std::max(v.max_abs_err, std::fabs(got - reference[i]));
    v.max_abs_ref = std::max(v.max_abs_ref, std::fabs(reference[i]));
  }
  return finish_verification(v);
}

Verification finish_verification(Verification v) {
  v.max_rel_err = v.max_abs_err / std::max(v.max_abs_ref, std::numeric_limits<double>::min());
  if (v.unwritten > 0) v.max_rel_err = std::numeric_limits<double>::infinity();
  v.passed = v.unwritten == 0 && v.max_rel_err <= v.tolerance;
  return v;
}

void fill_poison(Precision p, void* data, std::size_t count) {
  if (p == Precision::fp32)
    std::fill_n(static_cast<float*>(data), count, std::numeric_limits<float>::quiet_NaN());
  else
    std::fill_n(static_cast<double*>(data), count, std::numeric_limits<double>::quiet_NaN());
}

void add_cpu_reference_variants(std::vector<Variant>& out) {
  for (Precision p : {Precision::fp32, Precision::fp64})
    out.push_back(VariantBuilder("cpu_serial", p)
                      .runs_on(Backend::cpu,
                               [p](const Operands& ops, cudaStream_t) {
                                 cpu_serial_gemm(p, ops.a, ops.b, ops.c, ops.shape);
                               })
                      .tags({tag::seed})  // the write-ups' baseline
                      .origin("seed 001 serial CPU baseline (i-j-k loop, one core)")
                      .default_max_work(512.0 * 512.0 * 512.0)
                      .build());
}

}  // namespace gemm
