// The one place where benchmarks are timed. GPU work: CUDA events around the launches of one
// iteration (kernel only), reported to Google Benchmark as manual time; the median launch time
// over all iterations feeds GFLOP/s, so one slow launch cannot move the headline number.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace gemm {

struct TimingResult {
  double median_ms = 0;    // per launch
  std::size_t samples = 0; // timed iterations
  int launches_per_iteration = 1;
};

double median(std::vector<double> values);

// Launches per timed iteration so an iteration lasts at least ~0.2 ms: CUDA events resolve
// about 0.5 us, so tiny kernels are batched and the time divided by the batch.
int launches_per_iteration(double single_launch_ms);

// Times `launch` (already warmed up) inside the NVTX range "timed". `batch` = 0 chooses it.
TimingResult time_gpu(benchmark::State& state, const std::function<void()>& launch,
                      cudaStream_t stream, bool flush, int batch);

// Evicts L2 by overwriting a buffer twice its size (outside any timed region).
void flush_l2(cudaStream_t stream);

// Host code: steady clock around each call.
TimingResult time_host(benchmark::State& state, const std::function<void()>& run);

// One launch timed with events, for warm-up and batch sizing.
double time_single_launch_ms(const std::function<void()>& launch, cudaStream_t stream);

}  // namespace gemm
