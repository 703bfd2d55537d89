// How `auto` settles a shape its table does not hold: the model (shape_model.h) ranks every
// candidate, and the first run at the shape times the few it predicts fastest on the caller's own
// operands and keeps the fastest (cuDNN's Find functions and cuBLASLt's ranked heuristic list do the
// same: a cheap ranking, then a measurement among its top entries). Plain arithmetic, shared by
// auto.cu and its CPU test.
//
// Why time at all: the model scales measured times by each candidate's tiles and waves, which
// leaves out how well a tile hides latency at a new size; where two candidates are predicted
// within its error of each other, its first choice is a coin toss between them. Why four: the
// fewest at which, replayed on the H100's two evaluation sweeps with each suite shape left out of
// its own references (gemm-auto-replay --timed 1 2 3 4 5), the pick is within 5% of the fastest
// candidate on at least 95% of the 40 suite shapes in every arithmetic and both sweeps: four
// give FP32 40 and 40, FP64 40 and 40, TF32 39 and 39; three leave TF32 at 37 and 38, and the
// model alone at 30 and 31. The held-out shapes never chose the number.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gemm::dispatch {

// How many of the model's fastest predictions the first run at a shape times.
constexpr int kTimedCandidates = 4;
// A sample lasts at least this long (launches of one candidate back to back), so the events'
// resolution (about half a microsecond) cannot decide between two short kernels.
constexpr double kSampleMs = 0.05;
constexpr int kMaxLaunchesPerSample = 64;
// The rounds of samples (each round times every candidate once, in turn, so a drift of the
// clock or of the power draw falls on all of them alike): as many as fit kTimingBudgetMs of
// predicted time, at least one, at most kMaxRounds. One untimed round comes first (lazy module
// loading, the first launch's attribute setup).
constexpr double kTimingBudgetMs = 200.0;
constexpr int kMaxRounds = 5;

// Launches per sample for a candidate predicted to take `predicted_ms` per launch.
inline int launches_per_sample(double predicted_ms) {
  if (!(predicted_ms > 0.0)) return 1;
  const double n = std::ceil(kSampleMs / predicted_ms);
  return int(std::clamp(n, 1.0, double(kMaxLaunchesPerSample)));
}

// Timed rounds for candidates whose samples together are predicted to take `round_ms`.
inline int timing_rounds(double round_ms) {
  if (!(round_ms > 0.0)) return kMaxRounds;
  const double n = std::floor(kTimingBudgetMs / round_ms);
  return int(std::clamp(n, 1.0, double(kMaxRounds)));
}

// GEMM_AUTO_TIMING: unset or "on" times the candidates, "off" keeps the model's first prediction;
// anything else is no setting (nullopt), which auto and gemm-bench refuse with its value.
inline std::optional<bool> timing_setting(const char* value) {
  if (value == nullptr || std::string(value) == "on") return true;
  if (std::string(value) == "off") return false;
  return std::nullopt;
}

inline double median_of(std::vector<double> v) {
  if (v.empty()) return INFINITY;  // no sample: never the shortest
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A later-ranked candidate is kept only where its median is shorter than the earlier one's by
// more than this: two candidates within the samples' noise of each other would otherwise be
// kept in one process and not in the next, and they split K differently (their sums differ in
// the last bits). cuBLASLt's ranking in the references keeps the same margin.
constexpr double kKeepMargin = 0.02;

// The index of the candidate to keep: the earliest in the model's order whose median per-launch
// time is within kKeepMargin of the shortest median; samples.size() where none has a sample.
inline std::size_t kept_index(const std::vector<std::vector<double>>& samples) {
  double best_ms = INFINITY;
  for (const auto& s : samples) best_ms = std::min(best_ms, median_of(s));
  if (!(best_ms < INFINITY)) return samples.size();
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (median_of(samples[i]) <= best_ms * (1.0 + kKeepMargin)) return i;
  return samples.size();
}

}  // namespace gemm::dispatch
