#include "options.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <functional>
#include <regex>
#include <sstream>

#include "metric_catalogue.h"
#include "registry.h"
#include "shape_suites.h"
#include "tags.h"
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

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& more) {
  to.insert(to.end(), more.begin(), more.end());
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

namespace {

std::vector<GemmShape> parse_sizes(const std::string& value) {
  std::vector<GemmShape> shapes;
  for (const auto& item : split(value, ',')) {
    const auto n = parse_positive(item, "--sizes");
    shapes.push_back(checked({n, n, n}, "--sizes"));
  }
  return shapes;
}

std::vector<GemmShape> parse_shapes(const std::string& value) {
  std::vector<GemmShape> shapes;
  for (const auto& item : split(value, ',')) {
    const auto dims = split(item, 'x');
    if (dims.size() != 3) throw OptionError("--shapes: '" + item + "' is not of the form MxNxK");
    shapes.push_back(checked({parse_positive(dims[0], "--shapes M"),
                              parse_positive(dims[1], "--shapes N"),
                              parse_positive(dims[2], "--shapes K")},
                             "--shapes"));
  }
  return shapes;
}

std::vector<GemmShape> parse_suites(const std::string& value) {
  std::vector<GemmShape> shapes;
  for (const auto& name : split(value, ',')) {
    std::vector<GemmShape> suite;
    try {
      suite = shapes_of_suite(name);
    } catch (const std::invalid_argument& e) {
      throw OptionError(std::string("--suite: ") + e.what());
    }
    for (const auto& s : suite) shapes.push_back(checked(s, "--suite"));
  }
  return shapes;
}

std::vector<Precision> parse_precisions(const std::string& value) {
  std::vector<Precision> precisions;
  for (const auto& item : split(value, ',')) {
    try {
      precisions.push_back(precision_from_string(item));
    } catch (const std::invalid_argument& e) {
      throw OptionError(std::string("--precisions: ") + e.what());
    }
  }
  return precisions;
}

std::vector<std::string> parse_metrics(const std::string& value) {
  std::vector<std::string> metrics;
  for (const auto& name : split(value, ',')) {
    if (!looks_like_metric_name(name))
      throw OptionError("--metrics: '" + name +
                        "' is not a metric name (unit__counter.rollup, e.g. dram__bytes_read.sum); "
                        "list valid names with `ncu --query-metrics --chip gh100`");
    metrics.push_back(name);
  }
  return metrics;
}

std::vector<std::string> parse_catalogue_names(const std::string& value) {
  std::vector<std::string> names;
  for (const auto& name : split(value, ',')) {
    const auto& catalogue = metric_catalogue();
    if (std::none_of(catalogue.begin(), catalogue.end(),
                     [&](const MetricInfo& m) { return m.short_name == name; }))
      throw OptionError("--counter-metrics: '" + name +
                        "' is not a metric of the catalogue (profiling/metric_catalogue.inc: "
                        "short names such as gld_sectors, sm_active_cycles_max)");
    names.push_back(name);
  }
  return names;
}

std::vector<std::string> parse_tags(const std::string& value) {
  std::vector<std::string> tags;
  for (const auto& name : split(value, ',')) {
    if (name != "all" && !tag::is_known_tag(name)) {
      std::string known = "all";
      for (const auto& t : tag::all_tags()) known += std::string(", ") + t.name;
      throw OptionError("--tags: unknown tag '" + name + "' (known: " + known + ")");
    }
    tags.push_back(name);
  }
  return tags;
}

double parse_seconds(const std::string& value, const std::string& flag) {
  try {
    std::size_t used = 0;
    const double seconds = std::stod(value, &used);
    if (used == value.size() && seconds > 0 && std::isfinite(seconds)) return seconds;
  } catch (const std::exception&) {
  }
  throw OptionError(flag + ": expected a positive number of seconds, got '" + value + "'");
}

std::int64_t parse_bounded(const std::string& text, const std::string& what, std::int64_t low,
                           std::int64_t high) {
  const std::int64_t value = parse_positive(text, what);
  if (value < low || value > high)
    throw OptionError(what + ": " + text + " is outside " + std::to_string(low) + ".." +
                      std::to_string(high));
  return value;
}

// A percentage in (0, 100].
double parse_percent(const std::string& value, const std::string& flag) {
  try {
    std::size_t used = 0;
    const double pct = std::stod(value, &used);
    if (used == value.size() && pct > 0 && pct <= 100) return pct;
  } catch (const std::exception&) {
  }
  throw OptionError(flag + ": expected a percentage in (0, 100], got '" + value + "'");
}

// One entry per project flag: whether it takes a value, and what it sets.
struct Flag {
  const char* name;
  bool takes_value;
  std::function<void(Options&, const std::string&)> apply;
};

const std::vector<Flag>& flags() {
  static const std::vector<Flag> all = {
      {"--help", false, [](Options& o, const std::string&) { o.help = true; }},
      {"-h", false, [](Options& o, const std::string&) { o.help = true; }},
      {"--sizes", true, [](Options& o, const std::string& v) { append(o.shapes, parse_sizes(v)); }},
      {"--shapes", true, [](Options& o, const std::string& v) { append(o.shapes, parse_shapes(v)); }},
      {"--suite", true, [](Options& o, const std::string& v) { append(o.shapes, parse_suites(v)); }},
      {"--precisions", true,
       [](Options& o, const std::string& v) { o.precisions = parse_precisions(v); }},
      {"--counters", true,
       [](Options& o, const std::string& v) { o.counters = parse_on_off(v, "--counters"); }},
      {"--end-to-end", true,
       [](Options& o, const std::string& v) { o.end_to_end = parse_on_off(v, "--end-to-end"); }},
      {"--host-memory", true,
       [](Options& o, const std::string& v) {
         if (v != "pinned" && v != "pageable")
           throw OptionError("--host-memory: expected pinned or pageable, got '" + v + "'");
         o.pinned_host = v == "pinned";
       }},
      {"--order", true,
       [](Options& o, const std::string& v) {
         if (v != "listed" && v != "reversed")
           throw OptionError("--order: expected listed or reversed, got '" + v + "'");
         o.reversed_order = v == "reversed";
       }},
      {"--metrics", true,
       [](Options& o, const std::string& v) { append(o.extra_metrics, parse_metrics(v)); }},
      {"--counter-metrics", true,
       [](Options& o, const std::string& v) { append(o.counter_metrics, parse_catalogue_names(v)); }},
      {"--tags", true, [](Options& o, const std::string& v) { o.tags = parse_tags(v); }},
      {"--min-time", true,
       [](Options& o, const std::string& v) { o.sampling.min_time_s = parse_seconds(v, "--min-time"); }},
      {"--max-time", true,
       [](Options& o, const std::string& v) { o.sampling.max_time_s = parse_seconds(v, "--max-time"); }},
      {"--min-samples", true,
       [](Options& o, const std::string& v) {
         o.sampling.min_samples = int(parse_bounded(v, "--min-samples", 1, 100000));
       }},
      {"--max-samples", true,
       [](Options& o, const std::string& v) {
         o.sampling.max_samples = int(parse_bounded(v, "--max-samples", 1, 100000));
       }},
      {"--ci", true,
       [](Options& o, const std::string& v) { o.sampling.ci_target = parse_percent(v, "--ci") / 100; }},
      {"--cool-down", true,
       [](Options& o, const std::string& v) {
         o.cool_down_s = v == "off" ? 0 : parse_seconds(v, "--cool-down");
       }},
      {"--preroll-s", true,
       [](Options& o, const std::string& v) { o.preroll_s = parse_seconds(v, "--preroll-s"); }},
      {"--sustained-from", true,
       [](Options& o, const std::string& v) {
         o.sustained_from_edge = v == "off" ? std::nullopt
                                            : std::optional(parse_positive(v, "--sustained-from"));
       }},
      {"--sustained-s", true,
       [](Options& o, const std::string& v) { o.sustained_s = parse_seconds(v, "--sustained-s"); }},
      {"--seed", true,
       [](Options& o, const std::string& v) { o.seed = std::uint64_t(parse_positive(v, "--seed")); }},
      {"--ncu-command", true, [](Options& o, const std::string& v) { o.ncu_command_for = v; }},
      {"--cap-edge", true, [](Options& o, const std::string& v) { o.cap_edge_for = v; }},
      {"--profile", false, [](Options& o, const std::string&) { o.profile = true; }},
      {"--uncapped", false, [](Options& o, const std::string&) { o.uncapped = true; }},
      {"--counters-cap", true,
       [](Options& o, const std::string& v) { o.counters_cap_edge = parse_positive(v, "--counters-cap"); }},
      {"--cpu-only", false, [](Options& o, const std::string&) { o.cpu_only = true; }},
      {"--flush-l2", false, [](Options& o, const std::string&) { o.flush_l2 = true; }},
      {"--list", false, [](Options& o, const std::string&) { o.list = true; }},
  };
  return all;
}

const Flag& find_flag(const std::string& name, const std::string& arg) {
  for (const auto& f : flags())
    if (name == f.name) return f;
  throw OptionError("unknown option '" + arg + "' (see --help)");
}

// Combinations that cannot mean what the user asked for.
void check_consistency(const Options& o) {
  if (o.shapes.empty()) throw OptionError("no shapes to run");
  if (o.precisions.empty()) throw OptionError("no precisions to run");
  if (!o.counters && !o.counter_metrics.empty())
    throw OptionError("--counter-metrics with --counters=off: no counters would be collected");
  if (!o.counters && !o.extra_metrics.empty())
    throw OptionError("--metrics with --counters=off: no counters would be collected");
  if (o.counters_cap_edge && (!o.counters || o.profile))
    throw OptionError("--counters-cap with --counters=off or --profile: no counters would be "
                      "collected");
  if (o.uncapped && o.counters_cap_edge)
    throw OptionError("--counters-cap with --uncapped: --uncapped lifts the counter caps");
  if (o.sampling.min_samples > o.sampling.max_samples)
    throw OptionError("--min-samples above --max-samples: no number of samples meets both");
  if (o.sampling.min_time_s > o.sampling.max_time_s)
    throw OptionError("--min-time above --max-time: no sampling time meets both");
  if (o.profile && !o.extra_metrics.empty())
    throw OptionError("--metrics with --profile: --profile leaves the counters to ncu");
}

// Google Benchmark flags whose bad values it would not refuse with a nonzero status: a bad
// format prints its usage and exits 0, repetitions below 1 run nothing (0) or throw (< 0), and
// a filter that does not compile lists everything under --list.
void check_passthrough(const std::vector<std::string>& passthrough) {
  // Google Benchmark calls each benchmark once, and the harness samples inside that call: its
  // own iteration control would repeat the whole measurement instead.
  for (const char* flag : {"--benchmark_min_time", "--benchmark_min_warmup_time"})
    if (benchmark_flag(passthrough, flag))
      throw OptionError(std::string(flag) + ": gemm-bench chooses its samples itself (--min-samples, "
                        "--min-time, --max-time, --ci); --benchmark_repetitions repeats a benchmark");
  if (const auto filter = benchmark_flag(passthrough, "--benchmark_filter")) {
    const std::string spec = !filter->empty() && (*filter)[0] == '-' ? filter->substr(1) : *filter;
    try {
      std::regex(spec, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw OptionError("--benchmark_filter: '" + *filter + "' is not a regular expression (" +
                        e.what() + ")");
    }
  }
  for (const char* flag : {"--benchmark_format", "--benchmark_out_format"})
    if (const auto format = benchmark_flag(passthrough, flag))
      if (*format != "console" && *format != "json" && *format != "csv")
        throw OptionError(std::string(flag) + ": expected console, json or csv, got '" + *format +
                          "'");
  if (const auto reps = benchmark_flag(passthrough, "--benchmark_repetitions")) {
    std::size_t used = 0;
    long value = 0;
    try {
      value = std::stol(*reps, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != reps->size() || value < 1 || value > 2147483647)
      throw OptionError("--benchmark_repetitions: expected a whole number >= 1, got '" + *reps +
                        "'");
  }
}

}  // namespace

std::optional<std::string> benchmark_flag(const std::vector<std::string>& passthrough,
                                          const std::string& flag) {
  std::optional<std::string> value;
  for (const auto& a : passthrough) {
    if (a == flag)
      value = "";
    else if (a.rfind(flag + "=", 0) == 0)
      value = a.substr(flag.size() + 1);
  }
  return value;
}

bool benchmark_bool_flag(const std::vector<std::string>& passthrough, const std::string& flag) {
  const auto value = benchmark_flag(passthrough, flag);
  if (!value) return false;
  if (value->size() == 1) {
    const char c = (*value)[0];
    return std::isalnum(static_cast<unsigned char>(c)) && c != '0' && c != 'f' && c != 'F' &&
           c != 'n' && c != 'N';
  }
  std::string lower = *value;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower != "false" && lower != "no" && lower != "off";
}

bool filter_selects(const std::string& benchmark, const std::string& filter) {
  if (filter.empty() || filter == "all") return true;
  const bool negative = filter[0] == '-';
  try {
    const std::regex re(negative ? filter.substr(1) : filter, std::regex::extended);
    // Google Benchmark matches the instance name, which ends in /manual_time.
    return std::regex_search(benchmark + "/manual_time", re) != negative;
  } catch (const std::regex_error&) {
    return false;
  }
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  o.shapes.clear();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (i == 0 || arg.rfind("--benchmark_", 0) == 0) {
      o.passthrough.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const Flag& flag = find_flag(name, arg);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    if (flag.takes_value && value.empty())
      throw OptionError(name + " needs a value: " + name + "=...");
    if (!flag.takes_value && has_value) throw OptionError(name + " takes no value");
    flag.apply(o, value);
  }
  if (o.shapes.empty()) o.shapes = default_shapes();
  check_consistency(o);
  check_passthrough(o.passthrough);
  return o;
}

bool selects_tags(const Options& o, const std::vector<std::string>& variant_tags) {
  auto has = [&](const std::string& t) {
    return std::find(variant_tags.begin(), variant_tags.end(), t) != variant_tags.end();
  };
  if (o.tags.empty()) return !has(tag::tuning);
  auto named = [&](const std::string& tag) {
    return std::find(o.tags.begin(), o.tags.end(), tag) != o.tags.end();
  };
  // Sweep instances carry their rung's tag too; --tags=ladder means the rungs, not the sweep.
  if (has(tag::tuning) && !named(tag::tuning) && !named("all")) return false;
  for (const auto& t : o.tags)
    if (t == "all" || has(t)) return true;
  return false;
}

std::string tags_text() {
  std::ostringstream out;
  out << "\nTags:\n";
  for (const auto& t : tag::all_tags()) {
    std::string name = t.name;
    name.resize(12, ' ');
    out << "  " << name << t.meaning << "\n";
  }
  return out.str();
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
    out << "  " << v.family << ": M*N*K <= " << edge << "^3";
    std::string uncapped;  // the family's variants without the cap (a seed rung of the ladder)
    for (const auto& other : all_variants())
      if (other.family == v.family && other.precision == Precision::fp32 && other.default_max_work <= 0)
        uncapped += (uncapped.empty() ? "" : ", ") + other.name();
    if (!uncapped.empty()) out << " (not " << uncapped << ", a rung at every size)";
    out << "\n";
  }
  // Counter caps are one line: they are set for the write-ups' kernels as a group.
  std::vector<std::string> counter_capped;
  double counter_edge = 0;
  for (const auto& v : all_variants()) {
    if (v.counters_max_work <= 0 || v.precision != Precision::fp32) continue;
    if (std::find(counter_capped.begin(), counter_capped.end(), v.family) != counter_capped.end())
      continue;
    counter_capped.push_back(v.family);
    counter_edge = std::max(counter_edge, std::cbrt(v.counters_max_work));
  }
  out << "  SASS-instrumented counters of every other GPU variant up to M*N*K <= "
      << kSassCountersEdge << "^3 (hardware counters at every size)\n";
  if (!counter_capped.empty()) {
    out << "  SASS-instrumented counters (smsp__sass_*: instruction counts, shared-memory "
        << "wavefronts; they run the kernel 30-150x slower) only up to M*N*K <= " << counter_edge
        << "^3 (--counters-cap sets the edge; above it hardware counters only, "
        << "counters_capped = 1) for";
    for (const auto& f : counter_capped) out << " " << f;
    out << "\n";
  }
  double hardware_edge = 0;
  for (const auto& v : all_variants())
    hardware_edge = std::max(hardware_edge, std::cbrt(v.hardware_counters_max_work));
  if (hardware_edge > 0)
    out << "  no counters at all above M*N*K <= " << hardware_edge << "^3 for the same kernels "
        << "(launch facts only, counters_capped = 2; --counters-cap or --uncapped lifts it)\n";
  if (std::any_of(all_variants().begin(), all_variants().end(),
                  [](const Variant& v) { return !v.account_counters; }))
    out << "  the same kernels leave out the bottleneck account's warp states and ALU/LSU pipes "
        << "(--uncapped collects them)\n";
  if (!ladder_seeds().empty()) {
    out << "  except the ladder's seed rungs, which run at every size with their hardware counters and "
        << "the account's (SASS-instrumented ones as above):";
    for (const auto& seed : ladder_seeds()) out << " " << seed;
    out << "\n";
  }
  return out.str();
}

std::string help_text() {
  return R"(gemm-bench: the GEMM optimization study (C = A*B, row-major) in Google Benchmark.

Every benchmark is one variant x precision x shape, named
  gemm/<fp32|fp64>/<variant>/m:<M>/n:<N>/k:<K>/manual_time
Times are kernel-only (CUDA events around the launches, after warm-up). Google Benchmark calls
each benchmark once; inside it the harness takes samples (each with its SM clock from NVML, read
on both sides of it) until the median is known: at least --min-samples, then until its 95%
confidence interval is within --ci, or a cap. GFLOP/s comes from the median launch time over
every sample; a sample whose clock is more than 2% below the benchmark's median clock is flagged
and counted (samples_flagged), and the median without them is reported beside it. gemm_e2e/... benchmarks include the host-device copies (seed 001).
Each benchmark is first verified against an FP64 (or double-double) reference; a wrong result
is an error, never a number. Counters come from CUPTI in separate launches, outside the timing.

Options (before or among the --benchmark_* flags):
  --sizes=512,1024          square shapes (default 512,1024,2048,4096)
  --shapes=MxNxK,...        arbitrary shapes, e.g. --shapes=1023x517x2049
  --suite=NAME,...          the shapes of a suite (bench/shape_suites.inc): squares, decode,
                            large_k, tall_wide, odd, study (the default study's subset), all
  --precisions=fp32,fp64    precisions to run (default both)
  --counters=on|off         collect CUPTI hardware counters (default on)
  --metrics=a.sum,b.pct     extra raw CUPTI metrics; list names with `ncu --query-metrics`
  --counter-metrics=a,b     collect only these metrics of the catalogue (short names, e.g.
                            sm_active_cycles_max): fewer passes where a table reads few
  --profile                 run each selected benchmark once, without CUPTI, for ncu
  --ncu-command=NAME        print the ncu command that profiles benchmark NAME, then exit
  --cap-edge=FAMILY         print N of FAMILY's cap in the default sweep (M*N*K <= N^3), then
                            exit (2: the family has no cap)
  --end-to-end=on|off       also register gemm_e2e/... benchmarks (default on)
  --host-memory=pinned|pageable  the host side of the e2e copies (default pinned: the DMA
                            engines' speed; pageable, as the write-ups' malloc, adds the host's
                            copy into the driver's staging buffer, which varies run to run)
  --order=listed|reversed   the benchmarks of each shape in the registry's order (default) or
                            the reverse: a benchmark's clock depends on the power its
                            predecessors drew, so a comparison of kernels runs both orders
                            and takes each kernel's median over the runs (tune_shapes.sh)
  --flush-l2                flush L2 before every timed iteration (default: warm L2)
  --min-samples=N           samples per benchmark at least (default 5); a sample is a batch of
                            launches lasting about 1 ms (one launch for longer kernels)
  --ci=PCT                  then sample until the median's 95% confidence interval lies within
                            +-PCT% of it (default 0.5) ...
  --max-time=SECONDS        ... or this much sampling time has passed (default 0.2) ...
  --max-samples=N           ... or this many samples are in (default 2000)
  --min-time=SECONDS        sample at least this long (default 0)
  --preroll-s=SECONDS       each benchmark's own launches right before its samples (default 0.02)
  --cool-down=SECONDS|off   before a burst, leave the GPU idle as long as it was busy since the
                            last rest, at most SECONDS (default off): back to back, heavy
                            kernels hold an H100 at its power cap and each benchmark's clock
                            would follow its predecessors' power; idle half the time, every
                            burst starts from the same state
  --sustained-from=N|off    time shapes with M*N*K >= N^3 in the sustained power state: the
                            GPU under continuous load for --sustained-s seconds first (the
                            benchmarks before count: the soak happens once per stretch of load,
                            then the clock settles, at most 0.5 s) and each benchmark's own
                            pre-roll (default 2048; off: every shape as a burst, after the
                            pre-roll). The results say which state each benchmark measured.
  --sustained-s=SECONDS     load before a sustained measurement (default 3)
  --seed=N                  seed of the random inputs (default: fresh each run)
  --uncapped                lift the caps on slow variants and on their counters (below)
  --counters-cap=N          SASS-instrumented counters of every variant up to N^3 (caps below)
  --cpu-only                run only the serial CPU baseline (machines without a GPU)
  --tags=a,b                run the variants with any of these tags (default: all but
                            "tuning", whose instances run only when "tuning" or "all" is
                            named); see the tags below
  --list                    list the benchmarks with their tags, and the skipped ones, then exit
  --benchmark_filter=REGEX  Google Benchmark's own flags pass through

Exit status: 0 success, 1 runtime failure, 2 bad input (bad option, shape, or no GPU).
)" + tags_text() + caps_text();
}

}  // namespace gemm
