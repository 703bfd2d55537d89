// Project flags of gemm-bench, parsed before Google Benchmark's own (--benchmark_*) flags.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_types.h"
#include "sampling.h"

namespace gemm {

struct OptionError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The SASS-instrumented counters' default cap, M*N*K <= this^3, for the variants without a cap
// of their own (the write-ups' kernels stop at 1024^3: kernels/registry.cpp).
inline constexpr std::int64_t kSassCountersEdge = 2048;

struct Options {
  std::vector<GemmShape> shapes;                    // default: square 512, 1024, 2048, 4096
  std::vector<Precision> precisions{Precision::fp32, Precision::fp64};
  bool counters = true;                             // --counters=on|off
  std::vector<std::string> extra_metrics;           // --metrics=a,b (raw CUPTI names)
  std::vector<std::string> counter_metrics;         // --counter-metrics=a,b: only these
                                                    // catalogue metrics (short names)
  bool profile = false;                             // --profile: one launch each, no CUPTI
  bool uncapped = false;                            // --uncapped: lift the slow-variant caps
  std::optional<std::int64_t> counters_cap_edge;    // --counters-cap=N: counter caps at N^3
  bool cpu_only = false;                            // --cpu-only: the serial CPU baseline only
  bool flush_l2 = false;                            // --flush-l2: cold-L2 timing
  bool end_to_end = true;                           // --end-to-end=on|off
  bool pinned_host = true;                          // --host-memory=pinned|pageable: the
                                                    // host buffers of the e2e copies
  bool list = false;                                // --list: variants and skips, no run
  bool reversed_order = false;                      // --order=listed|reversed: the variants
                                                    // of each shape in the registry's order
                                                    // or the reverse
  std::vector<std::string> tags;                    // --tags=a,b: variants with any of them
                                                    // (empty: all but tag "tuning"; "all": all)
  // Samples per benchmark: --min-samples, --min-time, --max-time, --ci (sampling.h).
  SamplingPolicy sampling;
  double preroll_s = 0.02;                          // --preroll-s=SECONDS before the samples
  double cool_down_s = 0;                           // --cool-down=SECONDS|off: a burst first
                                                    // rests the GPU as long as it was busy,
                                                    // at most this long (WarmupPolicy)
  // --sustained-from=N|off: shapes with M*N*K >= N^3 are timed in the sustained power state
  // (after --sustained-s seconds under load and a settled clock); smaller ones as a burst.
  std::optional<std::int64_t> sustained_from_edge = 2048;
  double sustained_s = 3.0;                         // --sustained-s=SECONDS
  std::optional<std::uint64_t> seed;                // --seed=N for the random inputs
  std::optional<std::string> ncu_command_for;       // --ncu-command=BENCHMARK_NAME
  std::optional<std::string> cap_edge_for;          // --cap-edge=FAMILY
  bool help = false;
  std::vector<std::string> passthrough;             // argv[0] and --benchmark_* flags
};

// Throws OptionError with a one-line reason on bad input.
Options parse_options(const std::vector<std::string>& args);

// Whether the options select a variant with these tags (see Options::tags).
bool selects_tags(const Options& o, const std::vector<std::string>& variant_tags);

// Google Benchmark's pass-through flags, read the way it reads them (the last one wins):
// the value of --benchmark_<name>=VALUE, "" for a bare --benchmark_<name>, nothing if absent.
std::optional<std::string> benchmark_flag(const std::vector<std::string>& passthrough,
                                          const std::string& flag);
// A boolean flag as Google Benchmark reads it: bare or any value but 0/false/no/off/f/n: true.
bool benchmark_bool_flag(const std::vector<std::string>& passthrough, const std::string& flag);
// Whether --benchmark_filter selects a benchmark (registered name, without /manual_time), in
// Google Benchmark's grammar: a POSIX extended regex searched in the name, "-regex" for what it
// does not match, "" or "all" for everything. A filter that does not compile selects nothing
// (parse_options refuses it first).
bool filter_selects(const std::string& benchmark, const std::string& filter);

std::vector<GemmShape> default_shapes();
std::string help_text();

}  // namespace gemm
