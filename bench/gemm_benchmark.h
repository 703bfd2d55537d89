// Registration and body of the study's benchmarks: verify once, warm up, time, then collect
// counters outside the timed loop; everything recorded as Google Benchmark counters.
#pragma once

#include <string>
#include <vector>

#include "counters.h"
#include "device_info.h"
#include "options.h"
#include "variant.h"

namespace gemm {

// Process-wide state every benchmark reads.
struct StudyContext {
  Options options;
  std::optional<DeviceInfo> device;  // empty with --cpu-only on a machine without a GPU
  CounterCollector counters;
  std::uint64_t seed = 0;
  cudaStream_t stream = nullptr;
  int failed_benchmarks = 0;  // wrong results or runtime errors: the exit status reports them
};

StudyContext& study();

struct Skipped {
  std::string benchmark;
  std::string reason;
};

struct Registration {
  std::vector<std::string> registered;
  std::vector<Skipped> skipped;
};

// Registers one benchmark per selected variant x precision x shape (and the end-to-end ones).
// Variants that cannot run a shape on this device, or that are capped, are listed as skipped.
Registration register_study(const StudyContext& ctx);

}  // namespace gemm
