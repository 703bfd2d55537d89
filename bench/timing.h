// The one place where benchmarks are timed. GPU work: CUDA events around the launches of one
// iteration (kernel only), reported to Google Benchmark as manual time. Every timed iteration is
// a sample with its own SM clock (NVML, read on both sides of it), so a comparison can work in
// cycles and a sample taken during a clock drop is flagged instead of moving the headline: the
// median launch time over the unflagged samples feeds GFLOP/s.
//
// Power state: an H100 reaches its power cap seconds into a heavy load and lowers its clock, so a
// short window right after an idle gap measures a burst. With a sustained warm-up the launches
// run back to back until the GPU has been under load for a given time (load that ran just before
// counts, so consecutive benchmarks keep it hot) and the clock has settled; the result says which
// state it measured.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <vector>

namespace gemm {

class Nvml;

struct Sample {
  double ms = 0;      // per launch
  double sm_mhz = 0;  // mean of the NVML readings before and after; 0: no reading
  unsigned long long reasons = 0;  // NVML clock-event reasons seen at either end
  bool flagged = false;            // clock below the benchmark's median by more than kClockDrop
};

// A sample whose clock is this fraction below the median sample clock is flagged.
inline constexpr double kClockDrop = 0.02;

struct WarmupPolicy {
  double min_load_s = 0;   // seconds of continuous GPU load before timing (0: one launch)
  bool sustained = false;  // a sustained measurement: after min_load_s, run on until the clock
                           // is steady (at most max_settle_s more); otherwise a burst
  double max_settle_s = 2;
};

struct WarmupResult {
  double seconds = 0;      // spent warming up this benchmark
  double under_load_s = 0; // continuous GPU load when timing started, preceding load included
  bool sustained = false;  // asked for and reached: min_load_s under load, clock settled (or
                           // no clock reading to settle on)
  bool settled = false;
};

struct TimingResult {
  double median_ms = 0;  // per launch, over the unflagged samples
  std::vector<Sample> samples;
  int launches_per_iteration = 1;
  std::size_t flagged = 0;
  double median_clock_mhz = 0;      // over the unflagged samples; 0 without clock readings
  unsigned long long reasons = 0;   // union over the samples
  WarmupResult warmup;
};

double median(std::vector<double> values);

// Launches per timed iteration so an iteration (a sample) lasts at least ~1 ms: CUDA events
// resolve about 0.5 us and NVML's clock is read once per sample, so tiny kernels are batched and
// the time divided by the batch (it also keeps the samples a results file holds to a few hundred).
int launches_per_iteration(double single_launch_ms);

// Runs `launch` until the policy is met; `nvml` may be unavailable (then no settling).
WarmupResult warm_up(const std::function<void()>& launch, cudaStream_t stream,
                     const WarmupPolicy& policy, const Nvml& nvml);

// Times `launch` (already warmed up) inside the NVTX range "timed". `batch` >= 1.
TimingResult time_gpu(benchmark::State& state, const std::function<void()>& launch,
                      cudaStream_t stream, bool flush, int batch, const Nvml& nvml);

// Flags the samples whose clock dropped, and sets median_ms, median_clock_mhz and reasons.
// Exposed for its test.
void summarize_samples(TimingResult& r);

// Evicts L2 by overwriting a buffer twice its size (outside any timed region).
void flush_l2(cudaStream_t stream);

// Host code: steady clock around each call.
TimingResult time_host(benchmark::State& state, const std::function<void()>& run);

// One launch timed with events, for batch sizing.
double time_single_launch_ms(const std::function<void()>& launch, cudaStream_t stream);

// Seconds the GPU has been under load without an idle gap, as of now (the load this process put
// on it through warm_up and time_gpu). Exposed for its test, with an injectable clock.
class LoadTracker {
 public:
  static constexpr double kIdleGapS = 2.0;  // a longer gap lets the GPU cool: start again
  void busy(double begin_s, double end_s);
  double continuous_s(double now_s) const;

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
