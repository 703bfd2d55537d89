// CUDA events for timing: the pair every timed sample uses (timing.cpp), and the probes' loop
// (pipe-peaks, fp64-ceiling, the latencies): `runs` launches, each between two events (kernel
// only), and the fewest milliseconds.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.h"

namespace gemm::bench {

// A start and a stop event, destroyed however the timing ends (a failed check throws).
class EventPair {
 public:
  EventPair() {
    GEMM_CUDA_CHECK(cudaEventCreate(&start));
    const cudaError_t created = cudaEventCreate(&stop);
    if (created != cudaSuccess) {
      cudaEventDestroy(start);
      GEMM_CUDA_CHECK(created);  // throws with the create call's own error
    }
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// The fewest milliseconds of `runs` calls of launch(); on_best() runs after each call that is
// the fastest so far, to keep what that launch wrote (its clock64 counts).
template <class Launch, class OnBest>
float best_event_ms(int runs, Launch&& launch, OnBest&& on_best) {
  EventPair events;
  float best_ms = 0;
  for (int r = 0; r < runs; ++r) {
    GEMM_CUDA_CHECK(cudaEventRecord(events.start));
    launch();
    GEMM_CUDA_CHECK(cudaEventRecord(events.stop));
    GEMM_CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0;
    GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    if (r == 0 || ms < best_ms) {
      best_ms = ms;
      on_best();
    }
  }
  return best_ms;
}

template <class Launch>
float best_event_ms(int runs, Launch&& launch) {
  return best_event_ms(runs, launch, [] {});
}

}  // namespace gemm::bench
