// What a benchmark run adds to its JSON entry beside Google Benchmark's own fields: its samples
// with their clocks, the kernels a library call ran. Google Benchmark calls a benchmark function
// several times (iteration-count probes, then each repetition) and reports only some calls; an
// entry is matched to a reported run by benchmark name and iteration count, in call order (the
// probes before it, with fewer iterations, are dropped).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "timing.h"

namespace gemm {

class RunLog {
 public:
  // `members`: JSON object members without the braces, e.g. "\"samples\": {...}".
  void record(const std::string& benchmark, std::int64_t iterations, std::string members);
  // The members of the next reported run of `benchmark` with `iterations` (consumed), or "".
  std::string take(const std::string& benchmark, std::int64_t iterations);

 private:
  std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> calls_;
};

RunLog& run_log();

// "samples": {"ms": [...], "sm_clock_mhz": [...], "flagged": [...], "slowdown": [...]}
std::string samples_json(const TimingResult& t);

}  // namespace gemm
