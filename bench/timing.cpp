#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "benchmark_names.h"
#include "nvml.h"
#include "cuda_check.h"
#include "nvtx_range.h"
#include "workspace.h"

namespace gemm {
namespace {

class EventPair {
 public:
  EventPair() {
    GEMM_CUDA_CHECK(cudaEventCreate(&start_));
    GEMM_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start(cudaStream_t s) { GEMM_CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s) { GEMM_CUDA_CHECK(cudaEventRecord(stop_, s)); }
  float elapsed_ms() {
    GEMM_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

LoadTracker& load_tracker() {
  static LoadTracker tracker;
  return tracker;
}

}  // namespace

void flush_l2(cudaStream_t stream) {
  static DeviceBuffer scratch = [] {
    int device = 0, l2 = 0;
    GEMM_CUDA_CHECK(cudaGetDevice(&device));
    GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    return DeviceBuffer(std::size_t(std::max(l2, 1 << 20)) * 2);
  }();
  GEMM_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), stream));
}


double median(std::vector<double> values) {
  if (values.empty()) return NAN;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

int launches_per_iteration(double single_launch_ms) {
  constexpr double kMinIterationMs = 1.0;
  if (!(single_launch_ms > 0)) return 1;
  return int(std::clamp(std::ceil(kMinIterationMs / single_launch_ms), 1.0, 1000.0));
}

double time_single_launch_ms(const std::function<void()>& launch, cudaStream_t stream) {
  EventPair events;
  events.start(stream);
  launch();
  events.stop(stream);
  return events.elapsed_ms();
}

GpuLoadScope::GpuLoadScope() : begin_s_(now_s()) {}
GpuLoadScope::~GpuLoadScope() { load_tracker().busy(begin_s_, now_s()); }

void LoadTracker::busy(double begin_s, double end_s) {
  if (since_ < 0 || begin_s - until_ > kIdleGapS) since_ = begin_s;
  until_ = std::max(until_, end_s);
}

double LoadTracker::continuous_s(double now_s) const {
  if (since_ < 0 || now_s - until_ > kIdleGapS) return 0;
  return until_ - since_;
}

WarmupResult warm_up(const std::function<void()>& launch, cudaStream_t stream,
                     const WarmupPolicy& policy, const Nvml& nvml) {
  NvtxRange range{kWarmupRange};
  WarmupResult r;
  const double begin = now_s();
  const double preceding = load_tracker().continuous_s(begin);
  // One launch always: module loading and first touches stay out of the samples.
  const double single_ms = time_single_launch_ms(launch, stream);
  double now = now_s();
  if (policy.min_load_s > 0 || policy.sustained) {
    // Chunks of about 20 ms between clock readings: long enough to keep the GPU busy, short
    // enough that the settling test reacts within a few tenths of a second.
    const int chunk = int(std::clamp(std::ceil(20.0 / std::max(single_ms, 1e-3)), 1.0, 1e5));
    constexpr std::size_t kSteadyReadings = 5;
    constexpr double kSteadySpread = 0.01;
    std::vector<double> clocks;
    double load_met_at = -1;
    for (;;) {
      for (int i = 0; i < chunk; ++i) launch();
      GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      now = now_s();
      if (const auto reading = nvml.clock()) clocks.push_back(reading->sm_mhz);
      const bool load_met = preceding + (now - begin) >= policy.min_load_s;
      if (load_met && load_met_at < 0) load_met_at = now;
      if (clocks.size() >= kSteadyReadings) {
        const auto last = clocks.end() - kSteadyReadings;
        const auto [lo, hi] = std::minmax_element(last, clocks.end());
        r.settled = *hi - *lo <= kSteadySpread * *hi;
      }
      const bool settle_done = !policy.sustained || r.settled || !nvml.available();
      if (load_met && settle_done) {
        r.sustained = policy.sustained;
        break;
      }
      if (load_met && now - load_met_at > policy.max_settle_s) break;  // never settled
    }
  }
  load_tracker().busy(begin, now);
  r.seconds = now - begin;
  r.under_load_s = preceding + r.seconds;
  return r;
}

void summarize_samples(TimingResult& r) {
  std::vector<double> clocks;
  for (const auto& s : r.samples)
    if (s.sm_mhz > 0) clocks.push_back(s.sm_mhz);
  const double typical_clock = median(clocks);
  r.flagged = 0;
  r.reasons = 0;
  std::vector<double> kept_ms, kept_clocks;
  for (auto& s : r.samples) {
    s.flagged = s.sm_mhz > 0 && s.sm_mhz < typical_clock * (1 - kClockDrop);
    r.flagged += s.flagged ? 1 : 0;
    r.reasons |= s.reasons;
    if (s.flagged) continue;
    kept_ms.push_back(s.ms);
    if (s.sm_mhz > 0) kept_clocks.push_back(s.sm_mhz);
  }
  // At most half the samples can be flagged (they lie below the median clock), so the kept ones
  // always decide.
  r.median_ms = median(kept_ms);
  r.median_clock_mhz = kept_clocks.empty() ? 0 : median(kept_clocks);
}

TimingResult time_gpu(benchmark::State& state, const std::function<void()>& launch,
                      cudaStream_t stream, bool flush, int batch, const Nvml& nvml) {
  TimingResult result;
  result.launches_per_iteration = batch;
  EventPair events;
  const double begin = now_s();
  std::optional<ClockReading> before = nvml.clock();
  for (auto _ : state) {
    if (flush) flush_l2(stream);
    {
      NvtxRange timed{kTimedRange};
      events.start(stream);
      for (int i = 0; i < batch; ++i) launch();
      events.stop(stream);
    }
    Sample s;
    s.ms = events.elapsed_ms() / batch;  // synchronizes: the clock below is right after it
    const std::optional<ClockReading> after = nvml.clock();
    if (before && after) {
      s.sm_mhz = 0.5 * (before->sm_mhz + after->sm_mhz);
      s.reasons = before->reasons | after->reasons;
    }
    before = after;
    result.samples.push_back(s);
    state.SetIterationTime(s.ms / 1e3);
  }
  load_tracker().busy(begin, now_s());
  summarize_samples(result);
  return result;
}

TimingResult time_host(benchmark::State& state, const std::function<void()>& run) {
  TimingResult result;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    run();
    const auto end = std::chrono::steady_clock::now();
    Sample s;
    s.ms = std::chrono::duration<double, std::milli>(end - begin).count();
    result.samples.push_back(s);
    state.SetIterationTime(s.ms / 1e3);
  }
  summarize_samples(result);
  return result;
}

}  // namespace gemm
