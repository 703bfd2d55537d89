// Hardware counters for benchmarks: one CUPTI session per process over the metric catalogue
// (plus --metrics), values keyed by the catalogue's short names, launch facts from the CUDA
// occupancy and attribute APIs, and the derived ratios. When counters cannot be collected the
// reason is printed once and benchmarks carry counters_available = 0 and no counter values.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counter_session.h"
#include "device_info.h"
#include "variant.h"

namespace gemm {

using CounterValues = std::map<std::string, double>;

// What a collection measures: every metric, or the hardware counters alone (no SASS-instrumented
// metric: the kernel runs at full speed, so large shapes of slow kernels stay affordable), or
// nothing (a benchmark above every counter cap).
enum class CounterScope { all, hardware, none };

// What one benchmark's counters leave out: the scope above, and whether the bottleneck
// account's warp states and ALU/LSU pipes are collected (is_account_detail).
struct CounterSelection {
  CounterScope scope = CounterScope::all;
  bool account_detail = true;
};

// The collector's metric set for a selection (scope all or hardware).
std::size_t set_index(CounterSelection s);

class CounterCollector {
 public:
  // Starts the session now, so an unknown --metrics name stops the program before any
  // benchmark runs (throws UnknownMetric). Otherwise never throws: a failure to start means
  // counters are unavailable, with the reason in status().
  // `only`: catalogue short names to collect (empty: the whole catalogue).
  void start(const DeviceInfo& device, bool enabled, const std::string& disabled_reason,
             const std::vector<std::string>& extra_metrics,
             const std::vector<std::string>& only = {});

  bool available() const { return session_ != nullptr; }
  const std::string& status() const { return status_; }

  // Profiles one run of `launch` (every kernel it launches) and sums the kernels: counts add
  // up, percentages are weighted by each kernel's duration. Extra metrics keep their raw names.
  // Throws CountersUnavailable if collection fails mid-run (the collector then turns off).
  // `before_each_pass` and `warm_up_before_pass` as in CounterSession::profile.
  CounterValues collect(const std::function<void()>& launch,
                        const std::function<void()>& before_each_pass = {},
                        bool warm_up_before_pass = false, CounterSelection selection = {});

  // Replay passes of the last collect() (the profile that counted, not the priming one).
  std::size_t last_passes() const { return last_passes_; }
  // Where the last collect()'s wall time went (the priming profile included).
  const ProfileTiming& last_timing() const { return last_timing_; }

 private:
  std::unique_ptr<CounterSession> session_;
  bool primed_ = false;  // whether a profile has run in this process
  std::size_t last_passes_ = 0;
  ProfileTiming last_timing_;
  // Per metric set (set_index): short name of each metric, the raw name for extras.
  std::vector<std::vector<std::string>> short_names_;
  std::string status_ = "not started";
};

// One value per metric for a launch of several kernels (cuBLAS may launch more than one):
// .sum metrics add up; every other rollup (averages, percentages, ratios) is averaged over the
// kernels weighted by their duration (gpu_time_ns), or equally when that is not collected.
CounterValues aggregate_kernels(const std::vector<std::string>& cupti_names,
                                const std::vector<std::string>& short_names,
                                const std::vector<KernelCounters>& kernels);

// theoretical_occupancy, registers_per_thread, smem_per_block_bytes and the wave facts for a
// kernel variant.
CounterValues launch_facts(const Variant& v, const GemmShape& shape, const DeviceLimits& limits);

// grid_blocks, blocks_per_sm, waves and last_wave_fill of a launch (CPU-testable arithmetic).
void add_wave_facts(CounterValues& facts, long long grid_blocks, int blocks_per_sm, int sm_count);

// Theoretical occupancy in percent from resident blocks per SM (CPU-testable arithmetic).
double occupancy_percent(int blocks_per_sm, long long threads_per_block, int max_threads_per_sm,
                         int warp_size);

}  // namespace gemm
