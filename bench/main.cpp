// gemm-bench: parses the study's options, checks the device, registers every benchmark and
// hands over to Google Benchmark. Exit status: 0 success, 1 runtime failure or a wrong result,
// 2 bad input (options, shapes, no GPU, unknown metric).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark_names.h"
#include "cuda_check.h"
#include "dispatch/timed_choice.h"
#include "gemm_benchmark.h"
#include "nvml.h"
#include "reporters.h"
#include "tags.h"

#ifndef GEMM_GIT_REVISION
#define GEMM_GIT_REVISION "unknown"
#endif
#ifndef GEMM_GIT_COMMIT_DATE
#define GEMM_GIT_COMMIT_DATE ""
#endif
#ifndef GEMM_BUILD_TYPE
#define GEMM_BUILD_TYPE "unknown"
#endif

namespace {

constexpr int kBadInput = 2;
constexpr int kRuntimeFailure = 1;

int fail(int status, const std::string& message) {
  std::fprintf(stderr, "gemm-bench: %s\n", message.c_str());
  return status;
}

std::string skipped_json(const std::vector<gemm::Skipped>& skipped) {
  std::string out = "[";
  for (std::size_t i = 0; i < skipped.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"benchmark\": " + gemm::json_string(skipped[i].benchmark) +
           ", \"reason\": " + gemm::json_string(skipped[i].reason) + "}";
  return out + "]";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

std::string sampling_text(const gemm::SamplingPolicy& p) {
  return "samples: at least " + std::to_string(p.min_samples) +
         ", then until the median's 95% confidence interval lies within +-" +
         seconds_text(100 * p.ci_target) + "% of it, at most " + seconds_text(p.max_time_s) +
         " s or " + std::to_string(p.max_samples) + " samples" +
         (p.min_time_s > 0 ? ", at least " + seconds_text(p.min_time_s) + " s" : "");
}

void add_context(const gemm::StudyContext& ctx, const gemm::Registration& reg) {
  if (!ctx.device) {
    // A run without a GPU (--cpu-only, or none found) times the serial CPU baseline alone: the
    // GPU's timing, cache, clock and counter settings would describe nothing that ran.
    benchmark::AddCustomContext("timing", "host time of the serial CPU baseline (no GPU in this run), " +
                                              sampling_text(ctx.options.sampling));
  } else {
    for (const auto& [key, value] : gemm::context_entries(*ctx.device))
      benchmark::AddCustomContext(key, value);
    benchmark::AddCustomContext(
        "timing", ctx.options.profile
                      ? "profile mode: one launch per benchmark, for external profilers"
                      : "kernel only: CUDA events around each sample (a batch of launches of about "
                        "1 ms) after the warm-up; one Google Benchmark call per benchmark, " +
                            sampling_text(ctx.options.sampling) +
                            "; gflops and pct_of_cublas from the median launch time over every "
                            "sample; gemm_e2e benchmarks include the host-device copies; cpu_serial "
                            "is host time");
    benchmark::AddCustomContext("host_memory", ctx.options.pinned_host ? "pinned" : "pageable");
    benchmark::AddCustomContext("order", ctx.options.reversed_order ? "reversed" : "listed");
    benchmark::AddCustomContext("l2_state", ctx.options.flush_l2 ? "cold" : "warm");
    benchmark::AddCustomContext("l2_state_detail",
                                ctx.options.flush_l2
                                    ? "cold: L2 flushed before every timed iteration and before "
                                      "the counters' launch"
                                    : "warm: inputs reused across launches; each counter pass "
                                      "after an unprofiled launch where A, B and C fit in L2 "
                                      "(larger working sets: right after the previous pass)");
    // The same, for tools: what ran before each counter pass.
    benchmark::AddCustomContext("counter_pass_preparation",
                                ctx.options.flush_l2 ? "l2_flush" : "warm_up_launch");
    benchmark::AddCustomContext("counters", ctx.counters.status());
    benchmark::AddCustomContext(
        "clock",
        "every sample carries its SM clock: NVML's current SM clock read right before and right "
        "after it (averaged); a sample more than 2% below the benchmark's median clock is flagged "
        "(samples_flagged) but kept in median_ms; median_ms_unflagged leaves them out; "
        "sm_clock_mhz: median clock of the samples; clock_throttled: a power or thermal "
        "clock-event reason during any sample; samples.slowdown names them; "
        "sm_clock_counted_mhz (and samples.sm_clock_counted_mhz): the SMs' own clock64 cycles "
        "over %globaltimer across each sample, the median over the SMs, which under tensor-core "
        "load runs below NVML's; pct_of_cublas_cycles uses it where both runs have it");
    benchmark::AddCustomContext(
        "power_state",
        ctx.options.sustained_from_edge
            ? "sustained for M*N*K >= " + std::to_string(*ctx.options.sustained_from_edge) +
                  "^3: the GPU under continuous load for " +
                  seconds_text(ctx.options.sustained_s) +
                  " s before the samples (the benchmarks before count, so the soak happens once "
                  "per stretch of load; after a soak the clock settles, at most 0.5 s), then " +
                  seconds_text(ctx.options.preroll_s) +
                  " s of the benchmark's own launches; burst below (the pre-roll alone); "
                  "counters sustained and soaked per benchmark"
            : "burst: " + seconds_text(ctx.options.preroll_s) +
                  " s of the benchmark's own launches before its samples (--sustained-from=off)" +
                  (ctx.options.cool_down_s > 0
                       ? ", each after an idle rest as long as the GPU was busy since the last "
                         "one, at most " + seconds_text(ctx.options.cool_down_s) + " s (--cool-down)"
                       : std::string()));
    const gemm::Nvml& nvml = gemm::Nvml::for_device(ctx.device->ordinal);
    if (const auto mhz = nvml.max_sm_mhz())
      benchmark::AddCustomContext("sm_clock_max_mhz_nvml", std::to_string(int(*mhz)));
    if (const auto watts = nvml.power_limit_w())
      benchmark::AddCustomContext("power_limit_w", std::to_string(int(*watts)));
    if (!nvml.available())
      benchmark::AddCustomContext("clock_unavailable", nvml.why_unavailable());
  }
  // The CPU baseline is verified too (against the FP64 host reference).
  benchmark::AddCustomContext("verification",
                              "once per benchmark on NaN-poisoned output against an FP64 "
                              "(host) or double-double (device) reference; counter max_rel_err");
  // The version of the results' structure (scripts/gemm_study/data/results.schema.json): the
  // tools refuse a file of another version.
  benchmark::AddCustomContext("schema_version", "1");
  benchmark::AddCustomContext("input_seed", std::to_string(ctx.seed));
  benchmark::AddCustomContext("git_revision", GEMM_GIT_REVISION);
  // Empty where the build was not made from a git checkout.
  benchmark::AddCustomContext("git_commit_date", GEMM_GIT_COMMIT_DATE);
  benchmark::AddCustomContext("gemm_build_type", GEMM_BUILD_TYPE);
  benchmark::AddCustomContext("skipped", skipped_json(reg.skipped));
  benchmark::AddCustomContext("counters_capped", skipped_json(reg.counters_capped));
}

// Refusals that the filter selects, one line each; caps, one line per family.
void print_skipped(const gemm::Registration& reg, const std::string& filter) {
  std::map<std::string, int> capped;
  for (const auto& s : reg.skipped) {
    if (!gemm::filter_selects(s.benchmark, filter)) continue;
    if (!s.capped_family.empty())
      ++capped[s.capped_family];
    else
      std::fprintf(stderr, "skipped %s: %s\n", s.benchmark.c_str(), s.reason.c_str());
  }
  for (const auto& [family, count] : capped)
    std::fprintf(stderr, "capped: %d %s benchmark(s) above the default sweep's limit "
                 "(--uncapped lifts it; --help lists the caps)\n", count, family.c_str());
  // Counter caps, one line: at the largest shapes most families have them.
  std::map<std::string, int> no_counters;
  int capped_benchmarks = 0;
  for (const auto& s : reg.counters_capped)
    if (gemm::filter_selects(s.benchmark, filter)) {
      ++no_counters[s.capped_family];
      ++capped_benchmarks;
    }
  if (capped_benchmarks > 0) {
    std::string families;
    for (const auto& [family, count] : no_counters)
      families += (families.empty() ? "" : ", ") + family + " " + std::to_string(count);
    std::fprintf(stderr, "counters capped: %d benchmark(s) with hardware counters only, no "
                 "SASS-instrumented ones (--uncapped lifts it; --help lists the caps): %s\n",
                 capped_benchmarks, families.c_str());
  }
}

// Lists what would run; false when the filter selects nothing (registered or skipped).
bool print_list(const gemm::StudyContext& ctx, const gemm::Registration& reg,
                const std::string& filter) {
  const auto needs_gpu = [&](const gemm::Registered& r) {
    return !ctx.device && r.variant->backend != gemm::Backend::cpu;
  };
  if (std::any_of(reg.registered.begin(), reg.registered.end(), [&](const gemm::Registered& r) {
        return needs_gpu(r) && gemm::filter_selects(r.name, filter);
      }))
    std::fprintf(stderr, "gemm-bench: no GPU here; the benchmarks below need one\n");
  for (const auto& r : reg.registered) {
    if (!gemm::filter_selects(r.name, filter)) continue;
    std::string tags;
    for (const auto& t : r.variant->tags) tags += (tags.empty() ? "" : ",") + t;
    std::cout << r.name << "\ttags=" << tags
              << (needs_gpu(r) ? "\tneeds a GPU" : "")
              << "\n";
  }
  const auto selected = [&](const std::string& name) { return gemm::filter_selects(name, filter); };
  return std::any_of(reg.registered.begin(), reg.registered.end(),
                     [&](const gemm::Registered& r) { return selected(r.name); }) ||
         std::any_of(reg.skipped.begin(), reg.skipped.end(),
                     [&](const gemm::Skipped& s) { return selected(s.benchmark); });
}

// The name must be a benchmark of this build, not only well formed.
bool is_known_benchmark(const std::string& name) {
  gemm::ParsedName parsed;
  if (!gemm::parse_benchmark_name(name, parsed) || gemm::check_shape(parsed.shape)) return false;
  for (const auto& v : gemm::all_variants())
    if (v.name() == parsed.variant && v.precision == parsed.precision &&
        (!parsed.end_to_end || v.has_tag(gemm::tag::e2e)))
      return true;
  return false;
}

// N of a family's cap in the default sweep (M*N*K <= N^3), for scripts: the registry's number.
int print_cap_edge(const std::string& family) {
  bool known = false;
  for (const auto& v : gemm::all_variants()) {
    if (v.family != family) continue;
    known = true;
    if (v.default_max_work > 0) {
      std::cout << std::llround(std::cbrt(v.default_max_work)) << "\n";
      return 0;
    }
  }
  return fail(kBadInput, known ? "family '" + family + "' has no cap in the default sweep"
                               : "no family '" + family + "' in this build (see --list)");
}

// Sets up the device, its stream and the counters; a one-line reason on failure.
int prepare_device(gemm::StudyContext& ctx, bool listing) {
  using namespace gemm;
  const Options& o = ctx.options;
  // --cpu-only times the serial CPU baseline alone: a GPU on the machine takes no part in it.
  if (o.cpu_only) return 0;
  std::string no_gpu;
  ctx.device = query_device(0, no_gpu);
  if (!ctx.device && !o.cpu_only && !listing)
    return fail(kBadInput, no_gpu + " (--cpu-only runs the serial CPU baseline; --list shows "
                                    "what would run; results measured on GPUs are committed "
                                    "under reports/)");
  if (!ctx.device) return 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  GEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  for (const auto& shape : o.shapes)
    if (auto bad = check_fits_memory(shape, o.precisions, free_bytes)) return fail(kBadInput, *bad);
  GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  const bool want_counters = o.counters && !o.profile && !listing;
  const std::string why_off = !o.counters ? "disabled by --counters=off"
                              : o.profile ? "off in --profile mode (for external profilers)"
                                          : "not needed to list";
  try {
    ctx.counters.start(*ctx.device, want_counters, why_off, o.extra_metrics, o.counter_metrics);
  } catch (const UnknownMetric& e) {
    return fail(kBadInput, e.what());
  }
  return 0;
}

// Google Benchmark's own arguments, with one iteration per call: the harness takes its samples
// inside that iteration (timing.h). Spelled for the version we were built against (1.7: plain
// seconds, 1 ns meaning a single iteration; 1.8: "1x").
std::vector<std::string> benchmark_arguments(const gemm::Options& o) {
  std::vector<std::string> args = o.passthrough;
#ifdef GEMM_MIN_TIME_HAS_UNITS
  args.push_back("--benchmark_min_time=1x");
#else
  args.push_back("--benchmark_min_time=1e-9");
#endif
  return args;
}

int run_benchmarks(gemm::StudyContext& ctx, const gemm::Registration& reg) {
  std::vector<std::string> args = benchmark_arguments(ctx.options);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int argc = int(args.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) return kBadInput;

  const std::string filter = gemm::benchmark_flag(args, "--benchmark_filter").value_or("");
  std::size_t selected = 0;
  std::map<std::string, std::function<std::string()>> facts;
  for (const auto& r : reg.registered) {
    facts[r.name] = r.facts_json;
    selected += gemm::filter_selects(r.name, filter) ? 1 : 0;
  }
  // parse_options has checked that it is a whole number >= 1.
  const std::size_t repetitions =
      std::stoul(gemm::benchmark_flag(args, "--benchmark_repetitions").value_or("1"));
  // The progress lines go with the console table; another --benchmark_format gets Google
  // Benchmark's own display reporter (nullptr), which honours it.
  const std::string display_format = gemm::benchmark_flag(args, "--benchmark_format").value_or("");
  std::unique_ptr<gemm::ProgressReporter> display;
  if (display_format.empty() || display_format == "console")
    display = std::make_unique<gemm::ProgressReporter>(
        selected * repetitions, gemm::console_output_options(args, gemm::color_terminal()));
  const std::string out = gemm::benchmark_flag(args, "--benchmark_out").value_or("");
  const std::string format = gemm::benchmark_flag(args, "--benchmark_out_format").value_or("");
  std::unique_ptr<gemm::FactsJsonReporter> file;
  if (!out.empty() && (format.empty() || format == "json"))
    file = std::make_unique<gemm::FactsJsonReporter>(std::move(facts));
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
  benchmark::Shutdown();
  if (ran == 0) return fail(kBadInput, "no benchmark matched (see --list)");
  if (ctx.failed_benchmarks > 0)
    return fail(kRuntimeFailure, std::to_string(ctx.failed_benchmarks) +
                                     " benchmark(s) failed: see error_message in the output");
  return 0;
}

int run(int argc, char** argv) {
  using namespace gemm;
  StudyContext& ctx = study();
  try {
    ctx.options = parse_options(std::vector<std::string>(argv, argv + argc));
  } catch (const OptionError& e) {
    return fail(kBadInput, e.what());
  }
  // auto's timing switch, refused here before any benchmark rather than at auto's first run.
  if (const char* timing = std::getenv("GEMM_AUTO_TIMING"); !dispatch::timing_setting(timing))
    return fail(kBadInput, std::string("GEMM_AUTO_TIMING: expected on or off, got '") + timing + "'");
  const Options& o = ctx.options;
  if (o.help) {
    std::cout << help_text() << "\nGoogle Benchmark's flags:\n";
    char help_flag[] = "--help";
    char* gb_argv[] = {argv[0], help_flag, nullptr};
    int gb_argc = 2;
    benchmark::Initialize(&gb_argc, gb_argv);  // prints its usage and exits
    return 0;
  }
  if (o.cap_edge_for) return print_cap_edge(*o.cap_edge_for);
  if (o.ncu_command_for) {
    if (!is_known_benchmark(*o.ncu_command_for))
      return fail(kBadInput, "'" + *o.ncu_command_for +
                                 "' is not a benchmark of this build (gemm/<precision>/<variant>"
                                 "/m:M/n:N/k:K; see --list)");
    std::cout << ncu_command(*o.ncu_command_for, argv[0]) << "\n";
    return 0;
  }

  ctx.seed = o.seed ? *o.seed : std::random_device{}();
  const bool listing = o.list || benchmark_bool_flag(o.passthrough, "--benchmark_list_tests");
  if (int status = prepare_device(ctx, listing)) return status;

  const Registration reg = register_study(ctx);
  const std::string filter = benchmark_flag(o.passthrough, "--benchmark_filter").value_or("");
  print_skipped(reg, filter);
  if (o.list) {
    if (!print_list(ctx, reg, filter))
      return fail(kBadInput, "no benchmark matches --benchmark_filter='" + filter +
                                 "' with these options (--list without the filter shows them all)");
    return 0;
  }
  if (!ctx.device && !o.cpu_only)
    std::fprintf(stderr, "gemm-bench: no GPU here; the benchmarks below need one\n");
  add_context(ctx, reg);
  return run_benchmarks(ctx, reg);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fail(kRuntimeFailure, e.what());
  }
}
