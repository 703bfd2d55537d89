// The one place where benchmarks are timed. GPU work: CUDA events around each sample (a batch of
// launches lasting about a millisecond, kernel only), with the SM clock read by NVML on both
// sides of it and counted by the SMs themselves across it (sm_clock_probe.h). Google Benchmark
// calls each benchmark once; inside that call the harness takes samples until the median is known
// well enough (a minimum count, then until the median's 95% confidence interval lies within the
// target, or a cap: sampling.h), so GPU time goes to samples rather than to Google Benchmark's
// iteration-count probes.
//
// Every sample counts in the median. A sample whose clock is more than kClockDrop below the
// benchmark's median clock is flagged, and the median without the flagged samples is reported
// beside the headline, never instead of it.
//
// Power state: an H100 reaches its power cap seconds into a heavy load and lowers its clock, so a
// short window right after an idle gap measures a burst. A sustained measurement needs the GPU
// under continuous load for a while first; load that ran just before counts (benchmarks run back
// to back), so the soak happens once per stretch of load, not once per benchmark, and each
// benchmark gets a short pre-roll of its own launches (the clock follows the new kernel's power).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sampling.h"

namespace gemm {

class Nvml;

struct Sample {
  double ms = 0;      // per launch
  double sm_mhz = 0;  // mean of the NVML readings before and after; 0: no reading
  double sm_mhz_counted = 0;  // the SMs' own cycles over the sample (sm_clock_probe.h); 0: none
  unsigned long long reasons = 0;  // NVML clock-event reasons seen at either end
  double power_w = 0;  // NVML's board power after the batch (Hopper: a 1-s average); 0: none
  bool flagged = false;            // clock below the benchmark's median by more than kClockDrop
};

// A sample whose clock is this fraction below the median sample clock is flagged.
inline constexpr double kClockDrop = 0.02;
// The SMs' count is a benchmark's clock only where at least this share of its samples has one
// (samples of one short launch are too short for the timer: one long sample is not the run).
inline constexpr double kMinCountedShare = 0.5;

struct WarmupPolicy {
  // A burst measurement first leaves the GPU idle for as long as it has been busy since the last
  // rest, at most this long (0: no rest). Back to back, power-hungry benchmarks hold an H100 at
  // its power cap, and each one's clock would depend on the power its predecessors drew; idle
  // half the time, the board's average power stays under the cap and every burst starts alike.
  double rest_max_s = 0;
  double preroll_s = 0.02;   // this benchmark's own launches right before its samples (>= 1)
  double soak_s = 0;         // continuous GPU load (preceding load included) before timing
  bool sustained = false;    // a sustained measurement: soak_s of load, clock settled
  double max_settle_s = 0.5; // after a soak this call had to finish, run on until the clock is
                             // steady, at most this long
  double just_ran_ms = 0;    // a launch of the same work that ended just now (the verification
                             // run), in ms: one at least preroll_s long is the pre-roll
};

struct WarmupResult {
  double rested_s = 0;      // idle before the warm-up (WarmupPolicy::rest_max_s)
  double seconds = 0;       // spent warming up this benchmark, the rest included
  double under_load_s = 0;  // continuous GPU load when timing started, preceding load included
  bool sustained = false;   // asked for and reached: soak_s under load (and, after a soak of its
                            // own, the clock settled or no clock reading to settle on)
  bool soaked = false;      // this warm-up ran (part of) the soak
  bool settled = false;     // the clock was steady over the last readings
  double launch_ms = 0;     // per launch, over its last batch of launches (sizes the samples)
};

struct TimingResult {
  double median_ms = 0;            // per launch, over every sample
  double median_ms_unflagged = 0;  // the same without the clock-flagged samples
  MedianInterval interval;         // 95% interval of median_ms
  std::vector<Sample> samples;
  int launches_per_sample = 1;
  std::size_t flagged = 0;
  double median_clock_mhz = 0;     // over the samples with a reading; 0 without
  double median_counted_clock_mhz = 0;  // the same for the SMs' own count of cycles
  double median_power_w = 0;       // the same for the board power
  unsigned long long reasons = 0;  // union over the samples
  double sampling_s = 0;           // wall time the samples took
  WarmupResult warmup;
};

// Launches per sample so a sample lasts at least ~1 ms: CUDA events resolve about 0.5 us and
// NVML's clock is read once per sample, so tiny kernels are batched and the time divided by
// the batch.
int launches_per_sample(double single_launch_ms);

// Runs `launch` until the policy is met; `nvml` may be unavailable (then no settling).
WarmupResult warm_up(const std::function<void()>& launch, cudaStream_t stream,
                     const WarmupPolicy& policy, const Nvml& nvml);

// A run's SM clock both ways (MHz, 0 where there is no reading).
struct RunClock {
  double nvml_mhz = 0;
  double counted_mhz = 0;
};
RunClock run_clock(const TimingResult& t);

// The clocks that turn two runs' times into SM cycles that can be compared: both the SMs' counts
// where both runs have one, else both NVML's readings, never one of each (the count can sit a
// percent above NVML's reading even on CUDA-core load); {0, 0} where neither pair is complete.
std::pair<double, double> comparable_clocks(const RunClock& a, const RunClock& b);

// One launch timed with events.
double time_single_launch_ms(const std::function<void()>& launch, cudaStream_t stream);

// Samples `launch` (already warmed up) inside the NVTX range "timed" until `policy` says stop.
TimingResult time_gpu(const std::function<void()>& launch, cudaStream_t stream, bool flush,
                      int batch, const Nvml& nvml, const SamplingPolicy& policy);

// Flags the samples whose clock dropped, and sets the medians, the interval, the median clock
// and the reasons. Exposed for its test.
void summarize_samples(TimingResult& r);

// Evicts L2 by overwriting a buffer twice its size (outside any timed region).
void flush_l2(cudaStream_t stream);

// Host code: steady clock around each call, samples as for the GPU.
TimingResult time_host(const std::function<void()>& run, const SamplingPolicy& policy);

// Seconds the GPU has been under load without an idle gap, as of now (the load this process put
// on it through warm_up and time_gpu). Exposed for its test, with an injectable clock.
class LoadTracker {
 public:
  static constexpr double kIdleGapS = 2.0;  // a longer gap lets the GPU cool: start again
  void busy(double begin_s, double end_s);
  double continuous_s(double now_s) const;
  // The load since the last rest (or since the stretch began), and a rest that ended at now_s:
  // the load counts from zero again.
  double since_rest_s() const;
  void rested(double now_s);

 private:
  double since_ = -1, until_ = -1;
};

// Marks its scope as GPU load (verification, counter passes: work that keeps the GPU as hot as
// the timed launches), so the next benchmark's sustained warm-up counts it.
class GpuLoadScope {
 public:
  GpuLoadScope();
  ~GpuLoadScope();
  GpuLoadScope(const GpuLoadScope&) = delete;
  GpuLoadScope& operator=(const GpuLoadScope&) = delete;

 private:
  double begin_s_;
};

}  // namespace gemm
