#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "benchmark_names.h"
#include "cuda_check.h"
#include "event_timing.h"
#include "nvml.h"
#include "nvtx_range.h"
#include "sm_clock_probe.h"
#include "workspace.h"

namespace gemm {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

LoadTracker& load_tracker() {
  static LoadTracker tracker;
  return tracker;
}

// Enqueues `count` launches between events.
void enqueue_batch(const std::function<void()>& launch, cudaStream_t stream, int count,
                   bench::EventPair& events) {
  GEMM_CUDA_CHECK(cudaEventRecord(events.start, stream));
  for (int i = 0; i < count; ++i) launch();
  GEMM_CUDA_CHECK(cudaEventRecord(events.stop, stream));
}

// Waits for the batch's stop event: per-launch milliseconds.
double finish_batch_ms(int count, bench::EventPair& events) {
  GEMM_CUDA_CHECK(cudaEventSynchronize(events.stop));
  float ms = 0;
  GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
  return ms / count;
}

// Launches `count` times between events: per-launch milliseconds.
double timed_batch_ms(const std::function<void()>& launch, cudaStream_t stream, int count,
                      bench::EventPair& events) {
  enqueue_batch(launch, stream, count, events);
  return finish_batch_ms(count, events);
}

int sm_count() {
  int device = 0, sms = 0;
  GEMM_CUDA_CHECK(cudaGetDevice(&device));
  GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
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

int launches_per_sample(double single_launch_ms) {
  constexpr double kMinSampleMs = 1.0;
  if (!(single_launch_ms > 0)) return 1;
  return int(std::clamp(std::ceil(kMinSampleMs / single_launch_ms), 1.0, 1000.0));
}

double time_single_launch_ms(const std::function<void()>& launch, cudaStream_t stream) {
  bench::EventPair events;
  return timed_batch_ms(launch, stream, 1, events);
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

double LoadTracker::since_rest_s() const { return since_ < 0 ? 0 : until_ - since_; }

void LoadTracker::rested(double now_s) {
  since_ = -1;
  until_ = now_s;
}

WarmupResult warm_up(const std::function<void()>& launch, cudaStream_t stream,
                     const WarmupPolicy& policy, const Nvml& nvml) {
  NvtxRange range{kWarmupRange};
  WarmupResult r;
  bench::EventPair events;
  const double entered = now_s();
  if (!policy.sustained && policy.rest_max_s > 0) {
    const double rest = std::min(load_tracker().since_rest_s(), policy.rest_max_s);
    GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // idle from here
    std::this_thread::sleep_for(std::chrono::duration<double>(rest));
    load_tracker().rested(now_s());
    r.rested_s = rest;
  }
  const double begin = now_s();
  const double preceding = load_tracker().continuous_s(begin);
  const double soak_s = policy.sustained ? policy.soak_s : 0;
  r.soaked = preceding < soak_s;
  // A launch of a second or so that just ran leaves nothing for a pre-roll to do: the module is
  // loaded, the clock has left idle and follows this kernel's power, and its time sizes the
  // samples (one launch each). After a rest the pre-roll runs: the launch ran before it.
  if (!r.soaked && r.rested_s == 0 && policy.just_ran_ms >= 1e3 * policy.preroll_s &&
      policy.preroll_s > 0) {
    r.launch_ms = policy.just_ran_ms;
    r.sustained = policy.sustained;
    r.under_load_s = preceding;
    return r;
  }
  // Batches of about 10 ms between clock readings: long enough to keep the GPU busy, short
  // enough that the settling test reacts within a tenth of a second. The first batch is one
  // launch: it sizes the rest.
  int batch = 1;
  constexpr std::size_t kSteadyReadings = 5;
  constexpr double kSteadySpread = 0.01;
  std::vector<double> clocks;
  double load_met_at = -1;
  double now = begin;
  for (;;) {
    r.launch_ms = timed_batch_ms(launch, stream, batch, events);
    batch = int(std::clamp(std::ceil(10.0 / std::max(r.launch_ms, 1e-3)), 1.0, 1e5));
    now = now_s();
    if (const auto reading = nvml.clock()) clocks.push_back(reading->sm_mhz);
    if (clocks.size() >= kSteadyReadings) {
      const auto last = clocks.end() - kSteadyReadings;
      const auto [lo, hi] = std::minmax_element(last, clocks.end());
      r.settled = *hi - *lo <= kSteadySpread * *hi;
    }
    const bool preroll_met = now - begin >= policy.preroll_s;
    const bool load_met = preceding + (now - begin) >= soak_s;
    if (load_met && load_met_at < 0) load_met_at = now;
    // Only a soak that this call finished leaves the clock moving: one inherited from the
    // preceding benchmarks is already steady, and the pre-roll follows the new kernel's power.
    const bool settle_done = !r.soaked || r.settled || !nvml.available();
    if (preroll_met && load_met && settle_done) {
      r.sustained = policy.sustained;
      break;
    }
    if (preroll_met && load_met && now - load_met_at > policy.max_settle_s) {
      r.sustained = policy.sustained && !r.soaked;  // soaked but never settled
      break;
    }
  }
  load_tracker().busy(begin, now);
  r.seconds = now - entered;
  r.under_load_s = preceding + (now - begin);
  return r;
}

void summarize_samples(TimingResult& r) {
  std::vector<double> clocks, counted, all_ms, powers;
  for (const auto& s : r.samples) {
    all_ms.push_back(s.ms);
    if (s.sm_mhz > 0) clocks.push_back(s.sm_mhz);
    if (s.sm_mhz_counted > 0) counted.push_back(s.sm_mhz_counted);
    if (s.power_w > 0) powers.push_back(s.power_w);
  }
  const double typical_clock = median(clocks);
  r.flagged = 0;
  r.reasons = 0;
  std::vector<double> unflagged_ms;
  for (auto& s : r.samples) {
    s.flagged = s.sm_mhz > 0 && s.sm_mhz < typical_clock * (1 - kClockDrop);
    r.flagged += s.flagged ? 1 : 0;
    r.reasons |= s.reasons;
    if (!s.flagged) unflagged_ms.push_back(s.ms);
  }
  r.median_ms = median(all_ms);
  r.interval = median_interval(all_ms);
  // At most half the samples can be flagged (they lie below the median clock).
  r.median_ms_unflagged = median(unflagged_ms);
  r.median_clock_mhz = clocks.empty() ? 0 : typical_clock;
  const bool enough =
      !r.samples.empty() && double(counted.size()) >= kMinCountedShare * double(r.samples.size());
  r.median_counted_clock_mhz = enough ? median(counted) : 0;
  r.median_power_w = powers.empty() ? 0 : median(powers);
}

RunClock run_clock(const TimingResult& t) { return {t.median_clock_mhz, t.median_counted_clock_mhz}; }

std::pair<double, double> comparable_clocks(const RunClock& a, const RunClock& b) {
  if (a.counted_mhz > 0 && b.counted_mhz > 0) return {a.counted_mhz, b.counted_mhz};
  if (a.nvml_mhz > 0 && b.nvml_mhz > 0) return {a.nvml_mhz, b.nvml_mhz};
  return {0, 0};
}

TimingResult time_gpu(const std::function<void()>& launch, cudaStream_t stream, bool flush,
                      int batch, const Nvml& nvml, const SamplingPolicy& policy) {
  TimingResult result;
  result.launches_per_sample = batch;
  bench::EventPair events;
  SmClockProbe probe(sm_count());
  const double begin = now_s();
  std::optional<ClockReading> before = nvml.clock();
  std::vector<double> ms;
  do {
    if (flush) flush_l2(stream);
    Sample s;
    // The stamps sit outside the "timed" range, so that ncu selecting that range profiles the
    // kernel alone, and outside the events; they are queued before the wait, so that the window
    // they measure holds no host round trip.
    probe.stamp_before(stream);
    {
      NvtxRange timed{kTimedRange};
      enqueue_batch(launch, stream, batch, events);
    }
    probe.stamp_after(stream);
    s.ms = finish_batch_ms(batch, events);
    s.sm_mhz_counted = probe.read_mhz(stream);  // synchronizes: NVML's clock right after
    const std::optional<ClockReading> after = nvml.clock();
    if (before && after) {
      s.sm_mhz = 0.5 * (before->sm_mhz + after->sm_mhz);
      s.reasons = before->reasons | after->reasons;
    }
    // NVML's board power after the batch. On Hopper it is an average over the last second, which
    // also covers the work before the samples (another benchmark, counter passes): a sign of the
    // power state two runs met, not the batch's own draw (that would need the energy counter).
    if (const auto watts = nvml.power_w()) s.power_w = *watts;
    before = after;
    result.samples.push_back(s);
    ms.push_back(s.ms);
  } while (!sampling_done(ms, now_s() - begin, policy));
  result.sampling_s = now_s() - begin;
  load_tracker().busy(begin, begin + result.sampling_s);
  summarize_samples(result);
  return result;
}

TimingResult time_host(const std::function<void()>& run, const SamplingPolicy& policy) {
  TimingResult result;
  const double begin = now_s();
  std::vector<double> ms;
  do {
    const auto start = std::chrono::steady_clock::now();
    run();
    const auto end = std::chrono::steady_clock::now();
    Sample s;
    s.ms = std::chrono::duration<double, std::milli>(end - start).count();
    result.samples.push_back(s);
    ms.push_back(s.ms);
  } while (!sampling_done(ms, now_s() - begin, policy));
  result.sampling_s = now_s() - begin;
  summarize_samples(result);
  return result;
}

}  // namespace gemm
