// gemm-bench: parses the study's options, checks the device, registers every benchmark and
// hands over to Google Benchmark. Exit status: 0 success, 1 runtime failure or a wrong result,
// 2 bad input (options, shapes, no GPU, unknown metric).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "benchmark_names.h"
#include "cuda_check.h"
#include "gemm_benchmark.h"

#ifndef GEMM_GIT_REVISION
#define GEMM_GIT_REVISION "unknown"
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

void add_context(const gemm::StudyContext& ctx, const gemm::Registration& reg) {
  if (ctx.device)
    for (const auto& [key, value] : gemm::context_entries(*ctx.device))
      benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext(
      "timing", ctx.options.profile
                    ? "profile mode: one launch per benchmark, for external profilers"
                    : "kernel only: CUDA events around the launches after a warm-up launch; "
                      "gflops and pct_of_cublas from the median launch time; gemm_e2e "
                      "benchmarks include the host-device copies; cpu_serial is host time");
  benchmark::AddCustomContext("l2_state", ctx.options.flush_l2
                                              ? "cold: L2 flushed before every timed iteration"
                                              : "warm: inputs reused across launches");
  benchmark::AddCustomContext("counters", ctx.counters.status());
  benchmark::AddCustomContext("verification",
                              "once per benchmark on NaN-poisoned output against an FP64 "
                              "(host) or double-double (device) reference; counter max_rel_err");
  benchmark::AddCustomContext("input_seed", std::to_string(ctx.seed));
  benchmark::AddCustomContext("git_revision", GEMM_GIT_REVISION);
  benchmark::AddCustomContext("gemm_build_type", GEMM_BUILD_TYPE);
  std::string skipped;
  for (const auto& s : reg.skipped) skipped += s.benchmark + ": " + s.reason + "; ";
  benchmark::AddCustomContext("skipped", skipped.empty() ? "none" : skipped);
}

int run(int argc, char** argv) {
  using namespace gemm;
  StudyContext& ctx = study();
  try {
    ctx.options = parse_options(std::vector<std::string>(argv, argv + argc));
  } catch (const OptionError& e) {
    return fail(kBadInput, e.what());
  }
  const Options& o = ctx.options;
  if (o.help) {
    std::cout << help_text() << "\nGoogle Benchmark's flags:\n";
    char help_flag[] = "--help";
    char* gb_argv[] = {argv[0], help_flag, nullptr};
    int gb_argc = 2;
    benchmark::Initialize(&gb_argc, gb_argv);  // prints its usage and exits
    return 0;
  }
  if (o.ncu_command_for) {
    try {
      std::cout << ncu_command(*o.ncu_command_for, argv[0]) << "\n";
      return 0;
    } catch (const std::invalid_argument& e) {
      return fail(kBadInput, e.what());
    }
  }

  ctx.seed = o.seed ? *o.seed : std::random_device{}();
  std::string no_gpu;
  ctx.device = query_device(0, no_gpu);
  if (!ctx.device && !o.cpu_only && !o.list)
    return fail(kBadInput, no_gpu + " (--cpu-only runs the serial CPU baseline; results "
                                    "measured on GPUs are committed under reports/)");
  if (ctx.device) {
    std::size_t free_bytes = 0, total_bytes = 0;
    GEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    for (const auto& shape : o.shapes)
      for (Precision p : o.precisions)
        if (auto bad = check_fits_memory(shape, p, free_bytes)) return fail(kBadInput, *bad);
    GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  }

  const bool want_counters = o.counters && !o.profile && ctx.device.has_value();
  const std::string why_off = !o.counters  ? "disabled by --counters=off"
                              : o.profile  ? "off in --profile mode (for external profilers)"
                                           : "no GPU";
  try {
    if (ctx.device) ctx.counters.start(*ctx.device, want_counters, why_off, o.extra_metrics);
  } catch (const UnknownMetric& e) {
    return fail(kBadInput, e.what());
  }

  const Registration reg = register_study(ctx);
  for (const auto& s : reg.skipped)
    std::fprintf(stderr, "skipped %s: %s\n", s.benchmark.c_str(), s.reason.c_str());
  if (o.list) {
    for (const auto& name : reg.registered) std::cout << name << "\n";
    return 0;
  }
  add_context(ctx, reg);

  // --min-time becomes Google Benchmark's flag unless that was given, spelled for the version
  // we were built against (1.7: plain seconds; 1.8: with a unit, "x" for iterations).
  std::vector<std::string> passthrough = o.passthrough;
  const bool min_time_given =
      std::any_of(passthrough.begin(), passthrough.end(), [](const std::string& a) {
        return a.rfind("--benchmark_min_time", 0) == 0;
      });
#ifdef GEMM_MIN_TIME_HAS_UNITS
  const std::string one_iteration = "1x", seconds_unit = "s";
#else
  const std::string one_iteration = "1e-9", seconds_unit = "";  // 1 ns: a single iteration
#endif
  if (!min_time_given)
    passthrough.push_back("--benchmark_min_time=" +
                          (o.profile ? one_iteration : std::to_string(o.min_time_s) + seconds_unit));
  std::vector<char*> gb_args;
  for (const auto& a : passthrough) gb_args.push_back(const_cast<char*>(a.c_str()));
  gb_args.push_back(nullptr);
  int gb_argc = int(passthrough.size());
  benchmark::Initialize(&gb_argc, gb_args.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_args.data())) return kBadInput;
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (ran == 0) return fail(kBadInput, "no benchmark matched (see --list)");
  if (ctx.failed_benchmarks > 0)
    return fail(kRuntimeFailure, std::to_string(ctx.failed_benchmarks) +
                                     " benchmark(s) failed: see error_message in the output");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fail(kRuntimeFailure, e.what());
  }
}
