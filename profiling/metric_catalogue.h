// The counters the study reports, under short names, with the direction that counts as better
// and whether a value is a deterministic count. Defined in metric_catalogue.inc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gemm {

enum class Better { lower, higher, none };
enum class Stability { exact, noisy };

struct MetricInfo {
  std::string short_name;
  std::string cupti_name;
  std::string unit;
  Better better;
  Stability stability;
  std::string description;
  // Collected by instrumenting the kernel's SASS (CUPTI patches the code: the kernel runs 30 to
  // 150 times slower), not by a hardware counter: the smsp__sass_* metrics.
  bool sass_instrumented() const;
};

struct DerivedMetricInfo {
  std::string short_name;
  std::string numerator;    // a short name, or a sum "a+b" of short names
  std::string denominator;
  Better better;
  Stability stability;
  std::string description;
};

struct LaunchMetricInfo {
  std::string short_name;
  std::string unit;
  Better better;
  Stability stability;
  std::string description;
};

const std::vector<MetricInfo>& metric_catalogue();
const std::vector<DerivedMetricInfo>& derived_metrics();
const std::vector<LaunchMetricInfo>& launch_metrics();

// CUPTI metric names of the catalogue, in catalogue order.
std::vector<std::string> catalogue_cupti_names();

// Whether a CUPTI metric is collected by SASS instrumentation (see MetricInfo).
bool is_sass_instrumented(const std::string& cupti_name);

// Whether a catalogue metric serves only the bottleneck account of the ladder's rungs: the
// warp states (stall_*) and the ALU and LSU pipes. They take about a third of the replay
// passes, so kernels outside the account (the write-ups') leave them out.
bool is_account_detail(const std::string& short_name);

// numerator / denominator, or nothing when the ratio is undefined (zero or non-finite
// denominator, non-finite numerator): such a counter is "unavailable", never inf or NaN.
std::optional<double> safe_ratio(double numerator, double denominator);

// Adds every derived metric whose inputs are present in `values` (keyed by short name).
void add_derived_metrics(std::map<std::string, double>& values);

// Whether a string looks like a Perfworks metric name ("unit__counter.rollup"), for option
// parsing; CUPTI itself decides whether the chip knows it.
bool looks_like_metric_name(const std::string& name);

}  // namespace gemm
