// How many samples a benchmark takes, and the statistics that decide it (no CUDA: the options
// and the CPU tests use it too).
#pragma once

#include <vector>

namespace gemm {

// When to stop taking samples.
struct SamplingPolicy {
  int min_samples = 5;         // always at least this many
  int max_samples = 2000;      // at most this many
  double min_time_s = 0;       // at least this much wall time of sampling
  double max_time_s = 0.2;     // no new sample after this much (once min_samples are in)
  double ci_target = 0.005;    // stop once the median's 95% interval lies within +-this of it
};

// Distribution-free 95% confidence interval of a median, from the order statistics of the
// samples: ranks n/2 -+ 0.98 sqrt(n) (1-based, clamped to the samples). Below 6 samples it is
// the whole range.
struct MedianInterval {
  double low = 0, high = 0;
  // Farthest end from the median, as a fraction of it (0.004: the interval lies within +-0.4%).
  double relative_half_width(double median) const;
};
MedianInterval median_interval(std::vector<double> values);

// Whether sampling may stop after these samples (per-launch ms) and this much wall time.
bool sampling_done(const std::vector<double>& sample_ms, double elapsed_s,
                   const SamplingPolicy& policy);

double median(std::vector<double> values);

}  // namespace gemm
