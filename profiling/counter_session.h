// Per-kernel hardware counters through the CUPTI Range Profiler (auto range, user replay): the
// launch function runs once per pass the metric set needs; each kernel it launches is a range.
// One session per process, created after the CUDA context, holding one or more metric sets
// (a context has one range profiler; each profile selects the set it collects).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gemm {

// Counters cannot be collected here (no permission, another profiler attached, unsupported
// device); the run goes on without them.
struct CountersUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A metric name the chip does not know: bad input, the program stops.
struct UnknownMetric : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One profiled kernel launch: values[i] belongs to metric_names()[i].
struct KernelCounters {
  std::vector<double> values;
};

// Wall seconds of one profile() call by phase, so that the counters' cost can be traced to
// CUPTI's set-up, the replayed launches or the evaluation of the values.
struct ProfileTiming {
  double setup_s = 0;   // counter-data image and configuration
  double replay_s = 0;  // the passes: warm-up launches, profiled launches, synchronisation
  double decode_s = 0;  // decoding the passes and evaluating the metrics per kernel
};

// Why counters cannot be collected in this process before CUPTI is even asked: a profiling
// tool's injection variables are set (ncu, nsys, compute-sanitizer hold the counters).
std::optional<std::string> profiler_tool_attached();

class CounterSession {
 public:
  // Throws CountersUnavailable, or UnknownMetric for a metric the chip lacks that `required`
  // says is required (empty: every metric is); the others the chip lacks are left out of their
  // set (metric_names) and listed by dropped().
  CounterSession(CUcontext context, int device, std::vector<std::vector<std::string>> metric_sets,
                 std::function<bool(const std::string&)> required = {});
  ~CounterSession();
  CounterSession(const CounterSession&) = delete;
  CounterSession& operator=(const CounterSession&) = delete;

  std::size_t sets() const;
  const std::vector<std::string>& metric_names(std::size_t set) const;
  std::size_t passes(std::size_t set) const;  // replay passes per kernel for that set
  const std::vector<std::string>& dropped() const;  // metrics left out: the chip lacks them
  const ProfileTiming& last_timing() const;          // of the last profile() call

  // Collects metric set `set`: runs `launch` once per replay pass (it must compute the same thing every time, as a GEMM
  // that overwrites C does), after `before_each_pass` (e.g. an L2 flush; not profiled); one
  // entry per kernel it launched, in launch order. `warm_up_before_pass` also runs it once
  // right before each pass, unprofiled: the counters then see the caches as a repeated launch
  // leaves them.
  std::vector<KernelCounters> profile(std::size_t set, const std::function<void()>& launch,
                                      const std::function<void()>& before_each_pass = {},
                                      bool warm_up_before_pass = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemm
