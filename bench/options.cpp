#include "options.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "metric_catalogue.h"
#include "variant.h"

namespace gemm {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!text.empty() && text.back() == sep) parts.push_back("");
  return parts;
}

std::int64_t parse_positive(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw OptionError(what + ": '" + text + "' is not an integer");
  }
  if (used != text.size()) throw OptionError(what + ": '" + text + "' is not an integer");
  if (value < 1) throw OptionError(what + ": " + text + " must be >= 1");
  return value;
}

GemmShape checked(GemmShape s, const std::string& flag) {
  if (auto bad = check_shape(s)) throw OptionError(flag + ": " + *bad);
  return s;
}

bool parse_on_off(const std::string& value, const std::string& flag) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw OptionError(flag + ": expected on or off, got '" + value + "'");
}

}  // namespace

std::vector<GemmShape> default_shapes() {
  return {{512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  bool shapes_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (i == 0 || arg.rfind("--benchmark_", 0) == 0) {
      o.passthrough.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    auto need_value = [&] {
      if (!has_value || value.empty()) throw OptionError(flag + " needs a value: " + flag + "=...");
    };
    auto no_value = [&] {
      if (has_value) throw OptionError(flag + " takes no value");
    };

    if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--sizes" || flag == "--shapes") {
      need_value();
      if (!shapes_given) o.shapes.clear();
      shapes_given = true;
      for (const auto& item : split(value, ',')) {
        if (flag == "--sizes") {
          const auto n = parse_positive(item, "--sizes");
          o.shapes.push_back(checked({n, n, n}, flag));
          continue;
        }
        const auto dims = split(item, 'x');
        if (dims.size() != 3)
          throw OptionError("--shapes: '" + item + "' is not of the form MxNxK");
        o.shapes.push_back(checked({parse_positive(dims[0], "--shapes M"),
                                    parse_positive(dims[1], "--shapes N"),
                                    parse_positive(dims[2], "--shapes K")},
                                   flag));
      }
    } else if (flag == "--precisions") {
      need_value();
      o.precisions.clear();
      for (const auto& item : split(value, ',')) {
        try {
          o.precisions.push_back(precision_from_string(item));
        } catch (const std::invalid_argument& e) {
          throw OptionError(std::string("--precisions: ") + e.what());
        }
      }
    } else if (flag == "--counters") {
      need_value();
      o.counters = parse_on_off(value, flag);
    } else if (flag == "--end-to-end") {
      need_value();
      o.end_to_end = parse_on_off(value, flag);
    } else if (flag == "--metrics") {
      need_value();
      for (const auto& name : split(value, ',')) {
        if (!looks_like_metric_name(name))
          throw OptionError("--metrics: '" + name +
                            "' is not a metric name (unit__counter.rollup, e.g. "
                            "dram__bytes_read.sum); list valid names with `ncu "
                            "--query-metrics --chip gh100`");
        o.extra_metrics.push_back(name);
      }
    } else if (flag == "--min-time") {
      need_value();
      try {
        std::size_t used = 0;
        o.min_time_s = std::stod(value, &used);
        if (used != value.size() || !(o.min_time_s > 0)) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        throw OptionError("--min-time: expected a positive number of seconds, got '" + value +
                          "'");
      }
    } else if (flag == "--seed") {
      need_value();
      o.seed = std::uint64_t(parse_positive(value, "--seed"));
    } else if (flag == "--ncu-command") {
      need_value();
      o.ncu_command_for = value;
    } else if (flag == "--profile") {
      no_value();
      o.profile = true;
    } else if (flag == "--uncapped") {
      no_value();
      o.uncapped = true;
    } else if (flag == "--cpu-only") {
      no_value();
      o.cpu_only = true;
    } else if (flag == "--flush-l2") {
      no_value();
      o.flush_l2 = true;
    } else if (flag == "--list") {
      no_value();
      o.list = true;
    } else {
      throw OptionError("unknown option '" + arg + "' (see --help)");
    }
  }
  if (!shapes_given) o.shapes = default_shapes();
  if (o.shapes.empty()) throw OptionError("no shapes to run");
  if (o.precisions.empty()) throw OptionError("no precisions to run");
  return o;
}

// The caps come from the registry, so the help cannot drift from what the sweep does.
std::string caps_text() {
  std::ostringstream out;
  out << "\nCaps on slow variants in the default sweep (--uncapped lifts them):\n";
  std::vector<std::string> seen;
  for (const auto& v : all_variants()) {
    if (v.default_max_work <= 0 || v.precision != Precision::fp32) continue;
    if (std::find(seen.begin(), seen.end(), v.family) != seen.end()) continue;
    seen.push_back(v.family);
    const double edge = std::cbrt(v.default_max_work);
    out << "  " << v.family << ": M*N*K <= " << edge << "^3\n";
  }
  return out.str();
}

std::string help_text() {
  return R"(gemm-bench: the GEMM optimization study (C = A*B, row-major) in Google Benchmark.

Every benchmark is one variant x precision x shape, named
  gemm/<fp32|fp64>/<variant>/m:<M>/n:<N>/k:<K>/manual_time
Times are kernel-only (CUDA events around the launches, after warm-up); GFLOP/s comes from the
median launch time. gemm_e2e/... benchmarks include the host-device copies (seed 001).
Each benchmark is first verified against an FP64 (or double-double) reference; a wrong result
is an error, never a number. Counters come from CUPTI in separate launches, outside the timing.

Options (before or among the --benchmark_* flags):
  --sizes=512,1024          square shapes (default 512,1024,2048,4096)
  --shapes=MxNxK,...        arbitrary shapes, e.g. --shapes=1023x517x2049
  --precisions=fp32,fp64    precisions to run (default both)
  --counters=on|off         collect CUPTI hardware counters (default on)
  --metrics=a.sum,b.pct     extra raw CUPTI metrics; list names with `ncu --query-metrics`
  --profile                 run each selected benchmark once, without CUPTI, for ncu
  --ncu-command=NAME        print the ncu command that profiles benchmark NAME, then exit
  --end-to-end=on|off       also register gemm_e2e/... benchmarks (default on)
  --flush-l2                flush L2 before every timed iteration (default: warm L2)
  --min-time=SECONDS        GPU time per benchmark (default 0.1)
  --seed=N                  seed of the random inputs (default: fresh each run)
  --uncapped                lift the caps on slow variants (below)
  --cpu-only                run only the serial CPU baseline (machines without a GPU)
  --list                    list the benchmarks and the skipped variants, then exit
  --benchmark_filter=REGEX  Google Benchmark's own flags pass through

Exit status: 0 success, 1 runtime failure, 2 bad input (bad option, shape, or no GPU).
)" + caps_text();
}

}  // namespace gemm
