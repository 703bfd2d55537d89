#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "benchmark_names.h"
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
  constexpr double kMinIterationMs = 0.2;
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

TimingResult time_gpu(benchmark::State& state, const std::function<void()>& launch,
                      cudaStream_t stream, bool flush, int batch) {
  TimingResult result;
  result.launches_per_iteration = batch;
  EventPair events;
  std::vector<double> per_launch_ms;
  for (auto _ : state) {
    if (flush) flush_l2(stream);
    {
      NvtxRange timed{kTimedRange};
      events.start(stream);
      for (int i = 0; i < batch; ++i) launch();
      events.stop(stream);
    }
    const double ms = events.elapsed_ms() / batch;
    per_launch_ms.push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
  result.samples = per_launch_ms.size();
  result.median_ms = median(per_launch_ms);
  return result;
}

TimingResult time_host(benchmark::State& state, const std::function<void()>& run) {
  TimingResult result;
  std::vector<double> samples;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    run();
    const auto end = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(end - begin).count();
    samples.push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
  result.samples = samples.size();
  result.median_ms = median(samples);
  return result;
}

}  // namespace gemm
