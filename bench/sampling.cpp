#include "sampling.h"

#include <algorithm>
#include <cmath>

namespace gemm {

double median(std::vector<double> values) {
  if (values.empty()) return NAN;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

MedianInterval median_interval(std::vector<double> values) {
  if (values.empty()) return {NAN, NAN};
  std::sort(values.begin(), values.end());
  const double n = double(values.size());
  // The median lies between the order statistics of ranks n/2 - z sqrt(n)/2 and
  // n/2 + 1 + z sqrt(n)/2 with probability about 95% (z = 1.96), whatever the distribution.
  const double spread = 0.98 * std::sqrt(n);
  const long lo_rank = std::max(1L, long(std::floor(n / 2 - spread)));
  const long hi_rank = std::min(long(values.size()), long(std::ceil(n / 2 + 1 + spread)));
  return {values[std::size_t(lo_rank - 1)], values[std::size_t(hi_rank - 1)]};
}

double MedianInterval::relative_half_width(double median_value) const {
  if (!(median_value > 0)) return NAN;
  return std::max(median_value - low, high - median_value) / median_value;
}

bool sampling_done(const std::vector<double>& sample_ms, double elapsed_s,
                   const SamplingPolicy& policy) {
  const int n = int(sample_ms.size());
  if (n < policy.min_samples) return false;
  if (n >= policy.max_samples || elapsed_s >= policy.max_time_s) return true;
  if (elapsed_s < policy.min_time_s) return false;
  const double width = median_interval(sample_ms).relative_half_width(median(sample_ms));
  return width <= policy.ci_target;
}

}  // namespace gemm
