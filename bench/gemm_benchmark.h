// Registration and body of the study's benchmarks: verify once, warm up, time, then collect
// counters outside the timed loop; everything recorded as Google Benchmark counters.
#pragma once

#include <functional>
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
  std::string capped_family;  // set when the reason is a default-sweep cap, not a refusal
};

struct Registered {
  std::string name;        // without /manual_time
  const Variant* variant;
  // The "variant" object of its JSON entries, made when a result is written: after the run, so
  // that a dispatcher's facts (its plan, registers, grid) are those of the kernel it settled on.
  std::function<std::string()> facts_json;
};

struct Registration {
  std::vector<Registered> registered;
  std::vector<Skipped> skipped;
  // Registered benchmarks timed without hardware counters: above their family's counter cap.
  std::vector<Skipped> counters_capped;
};

// Registers one benchmark per variant x precision x shape that the options select (tags,
// precisions, --cpu-only; variants tagged e2e also end to end). Variants that cannot run a
// shape on this device (with their reason) or that are capped are listed as skipped. Without a
// device, only listing is possible: every GPU benchmark is registered, unchecked, for --list.
Registration register_study(const StudyContext& ctx);

}  // namespace gemm
