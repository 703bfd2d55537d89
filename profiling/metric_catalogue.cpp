#include "metric_catalogue.h"

#include <cmath>
#include <regex>

namespace gemm {

#define lower Better::lower
#define higher Better::higher
#define none Better::none
#define exact Stability::exact
#define noisy Stability::noisy

const std::vector<MetricInfo>& metric_catalogue() {
  static const std::vector<MetricInfo> all = {
#define GEMM_METRIC(short_name, cupti, unit, better, stability, what) \
  {#short_name, cupti, unit, better, stability, what},
#define GEMM_DERIVED(...)
#define GEMM_LAUNCH(...)
#include "metric_catalogue.inc"
#undef GEMM_METRIC
#undef GEMM_DERIVED
#undef GEMM_LAUNCH
  };
  return all;
}

const std::vector<DerivedMetricInfo>& derived_metrics() {
  static const std::vector<DerivedMetricInfo> all = {
#define GEMM_METRIC(...)
#define GEMM_DERIVED(short_name, num, den, better, stability, what) \
  {#short_name, #num, #den, better, stability, what},
#define GEMM_LAUNCH(...)
#include "metric_catalogue.inc"
#undef GEMM_METRIC
#undef GEMM_DERIVED
#undef GEMM_LAUNCH
  };
  return all;
}

const std::vector<LaunchMetricInfo>& launch_metrics() {
  static const std::vector<LaunchMetricInfo> all = {
#define GEMM_METRIC(...)
#define GEMM_DERIVED(...)
#define GEMM_LAUNCH(short_name, unit, better, stability, what) \
  {#short_name, unit, better, stability, what},
#include "metric_catalogue.inc"
#undef GEMM_METRIC
#undef GEMM_DERIVED
#undef GEMM_LAUNCH
  };
  return all;
}

#undef lower
#undef higher
#undef none
#undef exact
#undef noisy

bool is_sass_instrumented(const std::string& cupti_name) {
  return cupti_name.rfind("smsp__sass_", 0) == 0;
}

bool is_account_detail(const std::string& short_name) {
  return short_name.rfind("stall_", 0) == 0 || short_name.rfind("alu_pipe_", 0) == 0 ||
         short_name.rfind("lsu_pipe_", 0) == 0;
}

bool MetricInfo::sass_instrumented() const { return is_sass_instrumented(cupti_name); }

std::vector<std::string> catalogue_cupti_names() {
  std::vector<std::string> names;
  for (const auto& m : metric_catalogue()) names.push_back(m.cupti_name);
  return names;
}

std::optional<double> safe_ratio(double numerator, double denominator) {
  if (!std::isfinite(numerator) || !std::isfinite(denominator) || denominator == 0.0)
    return std::nullopt;
  return numerator / denominator;
}

namespace {

// The value of "a" or of a sum "a+b+..." of short names; nothing if one of them is missing.
std::optional<double> sum_of(const std::string& terms, const std::map<std::string, double>& values) {
  double total = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = terms.find('+', start);
    const auto found = values.find(terms.substr(start, plus - start));
    if (found == values.end()) return std::nullopt;
    total += found->second;
    if (plus == std::string::npos) return total;
    start = plus + 1;
  }
}

}  // namespace

void add_derived_metrics(std::map<std::string, double>& values) {
  for (const auto& d : derived_metrics()) {
    const auto num = sum_of(d.numerator, values);
    const auto den = sum_of(d.denominator, values);
    if (!num || !den) continue;
    if (auto r = safe_ratio(*num, *den)) values[d.short_name] = *r;
  }
}

bool looks_like_metric_name(const std::string& name) {
  static const std::regex pattern("^[a-z0-9_]+__[a-z0-9_]+(\\.[a-z0-9_]+)+$");
  return std::regex_match(name, pattern);
}

}  // namespace gemm
