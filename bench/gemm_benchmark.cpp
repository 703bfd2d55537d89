#include "gemm_benchmark.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <iomanip>
#include <sstream>
#include <utility>

#include "benchmark_names.h"
#include "cuda_check.h"
#include "metric_catalogue.h"
#include "launched_kernels.h"
#include "nvml.h"
#include "nvtx_range.h"
#include "reference.h"
#include "reporters.h"
#include "run_log.h"
#include "tags.h"
#include "timing.h"
#include "variant_facts.h"
#include "workspace.h"

namespace gemm {
namespace {

// Adds the wall time of its scope to a stage's total.
class StageTimer {
 public:
  explicit StageTimer(double& total) : total_(total) {}
  ~StageTimer() {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// What one benchmark computes once and reports on every call Google Benchmark makes.
struct CaseState {
  // Wall seconds in each stage of this benchmark (summed over repetitions): the study's time
  // breakdown is built from these, so every change to the harness shows its cost.
  double inputs_s = 0, verify_s = 0, warmup_s = 0, timing_s = 0, reference_s = 0, counters_s = 0,
         total_s = 0;
  ProfileTiming counter_phases;  // inside counters_s: CUPTI's set-up, the replay, the decoding
  bool verified = false;
  Verification verification;
  double verify_launch_ms = 0;  // the verified launch's time (GPU kernels), for the pre-roll
  std::string error;
  bool counters_done = false;
  CounterValues counters;
  std::string kernels_json;  // "kernels": [...] of a library call, recorded once
  bool failure_counted = false;
};

struct BenchCase {
  const Variant* variant = nullptr;
  GemmShape shape;
  bool end_to_end = false;
  // Which counters this shape collects: above the SASS cap, hardware counters only; above the
  // hardware cap, none (sass_counters_cap, Variant::hardware_counters_max_work); the account's
  // details only for the variants it explains (Variant::account_counters).
  CounterSelection counters;
  bool counters_capped() const { return counters.scope != CounterScope::all; }
  std::string name;   // registered benchmark name (without /manual_time)
  std::string range;  // NVTX range name
  std::shared_ptr<CaseState> state = std::make_shared<CaseState>();
};

// cuBLAS per (precision, shape) in this run, for pct_of_cublas: median launch time and the
// median SM clock it ran at (0: unknown).
struct ReferenceTime {
  double ms = 0;
  RunClock clock;
};
std::map<std::string, ReferenceTime>& cublas_medians() {
  static std::map<std::string, ReferenceTime> medians;
  return medians;
}

// Sustained for the shapes the options name, a burst otherwise (a pre-roll long enough for the
// clock to leave its idle state). --profile: one launch before the one ncu profiles.
WarmupPolicy warmup_policy(const Options& o, const GemmShape& s) {
  WarmupPolicy p;
  if (o.profile) {
    p.preroll_s = 0;
    return p;
  }
  p.sustained = o.sustained_from_edge && s.work() >= std::pow(double(*o.sustained_from_edge), 3);
  p.soak_s = p.sustained ? o.sustained_s : 0;
  p.preroll_s = o.preroll_s;
  p.rest_max_s = o.cool_down_s;
  return p;
}

// --profile: one sample of one launch, for external profilers.
SamplingPolicy sampling_policy(const Options& o) {
  if (!o.profile) return o.sampling;
  SamplingPolicy p;
  p.min_samples = p.max_samples = 1;
  return p;
}

std::string cublas_key(Precision p, const GemmShape& s) { return to_string(p) + s.to_string(); }

const Variant& cublas_variant(Precision p) {
  for (const auto& v : all_variants())
    if (v.family == "cublas" && v.precision == p) return v;
  throw std::logic_error("the registry has no cublas variant");
}

// Runs the variant once on poisoned output and compares with the reference; `launch_ms`: how
// long that launch took (GPU variants).
Verification verify_once(const BenchCase& c, Workspace& ws, cudaStream_t stream, double& launch_ms) {
  const Variant& v = *c.variant;
  const double tolerance = verification_tolerance(v.unit_roundoff, ws.shape.k);
  NvtxRange range{kVerifyRange};
  if (v.backend == Backend::cpu) {
    const auto& reference = reference_for(ws, stream);
    const Operands ops = operands_for(ws, v, stream);  // makes the host buffers
    fill_poison(v.precision, ws.host_c.data(), ws.elements_c());
    v.run(ops, stream);
    return verify(v.precision, ws.host_c.data(), reference, tolerance);
  }
  const double* reference = device_reference_for(ws, stream);
  GEMM_CUDA_CHECK(cudaMemsetAsync(ws.dev_c.get(), 0xFF, ws.bytes_c(), stream));  // NaN
  const Operands ops = operands_for(ws, v, stream);
  launch_ms = time_single_launch_ms([&] { v.run(ops, stream); }, stream);  // synchronizes
  return verify_on_device(v.precision, ws.dev_c.get(), reference, ws.elements_c(), tolerance, stream);
}

std::string describe_failure(const Verification& r) {
  std::ostringstream s;
  s << "wrong result: ";
  if (r.unwritten > 0) s << r.unwritten << " elements not written or not finite; ";
  s << "max_rel_err " << r.max_rel_err << " > tolerance " << r.tolerance;
  return s.str();
}

// The launch to time: the kernel alone, or (end to end) copies in, kernel, copy out.
std::function<void()> timed_work(const BenchCase& c, Workspace& ws, cudaStream_t stream) {
  const Variant& v = *c.variant;
  const Operands ops = operands_for(ws, v, stream);
  if (!c.end_to_end) return [&v, ops, stream] { v.run(ops, stream); };
  host_buffers_for(ws);  // the copies' host side
  return [&v, &ws, ops, stream] {
    GEMM_CUDA_CHECK(cudaMemcpyAsync(ws.dev_a.get(), ws.host_a.data(), ws.bytes_a(),
                                    cudaMemcpyHostToDevice, stream));
    GEMM_CUDA_CHECK(cudaMemcpyAsync(ws.dev_b.get(), ws.host_b.data(), ws.bytes_b(),
                                    cudaMemcpyHostToDevice, stream));
    v.run(ops, stream);
    GEMM_CUDA_CHECK(cudaMemcpyAsync(ws.host_c.data(), ws.dev_c.get(), ws.bytes_c(),
                                    cudaMemcpyDeviceToHost, stream));
  };
}

ReferenceTime cublas_reference_time(Precision p, Workspace& ws, StudyContext& ctx) {
  const std::string key = cublas_key(p, ws.shape);
  auto& medians = cublas_medians();
  if (auto it = medians.find(key); it != medians.end()) return it->second;
  // The cuBLAS benchmark was filtered out: time it here, in the same power state and with the
  // same samples as the benchmarks it is compared with (one launch in --profile mode, so an
  // external profiler sees few launches beside its own), outside any "timed" range.
  NvtxRange range{"cublas_reference"};
  const Variant& ref = cublas_variant(p);
  const Operands ops = operands_for(ws, ref, ctx.stream);
  auto launch = [&] { ref.run(ops, ctx.stream); };
  const Nvml& nvml = Nvml::for_device(ctx.device->ordinal);
  const WarmupResult warm = warm_up(launch, ctx.stream, warmup_policy(ctx.options, ws.shape), nvml);
  const TimingResult t = time_gpu(launch, ctx.stream, ctx.options.flush_l2,
                                  launches_per_sample(warm.launch_ms), nvml, sampling_policy(ctx.options));
  return medians[key] = {t.median_ms, run_clock(t)};
}

// "kernels": [...], the kernels a library call ran for this shape, or why they are unknown.
std::string kernels_json(const std::function<void()>& launch) {
  try {
    std::string out = "\"kernels\": [";
    const auto names = launched_kernels(launch);
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + json_string(names[i]);
    return out + "]";
  } catch (const std::exception& e) {
    return "\"kernels_unavailable\": " + json_string(e.what());
  }
}

std::string timing_label(const BenchCase& c, const TimingResult& t, bool host, const Options& o) {
  std::ostringstream label;
  label << (host             ? "host time, one core"
            : !c.end_to_end  ? "kernel only, events"
            : o.pinned_host  ? "with H2D+D2H copies (pinned host memory), events"
                             : "with H2D+D2H copies (pageable host memory), events");
  label << ", median of " << t.samples.size() << " samples";
  if (const double w = t.interval.relative_half_width(t.median_ms); std::isfinite(w))
    label << " (95% CI +-" << std::fixed << std::setprecision(2) << 100 * w << "%)";
  if (host) return label.str();
  label << (o.flush_l2 ? ", cold L2" : ", warm L2");
  const WarmupResult& w = t.warmup;
  if (w.sustained) {
    label << ", sustained (" << std::fixed << std::setprecision(1) << w.under_load_s
          << " s under load" << (w.soaked ? (w.settled ? ", clock settled)" : ", clock unsettled)") : ")");
  } else if (w.under_load_s > 0) {
    label << ", burst (" << std::fixed << std::setprecision(w.rested_s > 0 ? 2 : 1) << w.under_load_s
          << " s under load";
    if (w.rested_s > 0) label << ", after a " << std::setprecision(3) << w.rested_s << " s rest";
    label << ")";
  }
  if (t.flagged) label << ", " << t.flagged << " samples below the median clock by >2% (kept)";
  return label.str();
}

void attach_counters(benchmark::State& state, const BenchCase& c, Workspace& ws,
                     StudyContext& ctx) {
  CaseState& cs = *c.state;
  const Variant& v = *c.variant;
  if (!cs.counters_done && v.backend != Backend::cpu && !c.end_to_end) {
    cs.counters_done = true;
    if (ctx.device) cs.counters = launch_facts(v, c.shape, ctx.device->limits);
    if (ctx.counters.available() && c.counters.scope != CounterScope::none) {
      StageTimer stage{cs.counters_s};
      GpuLoadScope load;
      NvtxRange range{kCountersRange};
      const Operands ops = operands_for(ws, v, ctx.stream);
      // Counters see the cache state the timing saw: warm, or flushed before every pass
      // (--flush-l2). Warm means an unprofiled launch right before every pass where A, B and C
      // fit in L2 (a pass does not start with L2 as the previous pass left it); a larger
      // working set streams from HBM on every launch anyway, and the extra launch would
      // double the counters' cost of the largest shapes for nothing.
      std::function<void()> before_each_pass;
      if (ctx.options.flush_l2) before_each_pass = [&] { flush_l2(ctx.stream); };
      const bool warm_up = !ctx.options.flush_l2 && ctx.device &&
                           ws.bytes_a() + ws.bytes_b() + ws.bytes_c() <= std::size_t(ctx.device->l2_bytes);
      try {
        // Above the variant's counter cap only the SASS-instrumented metrics are left out.
        CounterValues measured = ctx.counters.collect(
            [&] { v.run(ops, ctx.stream); }, before_each_pass, warm_up, c.counters);
        cs.counters.insert(measured.begin(), measured.end());
        cs.counters["counter_passes"] = double(ctx.counters.last_passes());
        cs.counter_phases = ctx.counters.last_timing();
      } catch (const CountersUnavailable&) {
        // Reported once by the collector; this benchmark goes on without counters.
      }
    }
    add_derived_metrics(cs.counters);
  }
  const bool have_hw = cs.counters.count("gld_requests") > 0;
  state.counters["counters_available"] = have_hw ? 1 : 0;
  // 1: hardware counters only; 2: none (launch facts alone).
  if (c.counters_capped())
    state.counters["counters_capped"] = c.counters.scope == CounterScope::none ? 2 : 1;
  for (const auto& [name, value] : cs.counters) state.counters[name] = value;
}

// A wrong result or a runtime error: an error entry in the results, never a number.
void report_failure(benchmark::State& state, CaseState& cs) {
  if (!cs.failure_counted) {
    cs.failure_counted = true;
    ++study().failed_benchmarks;
  }
  state.SkipWithError(cs.error.c_str());
}

// The timed part of one benchmark: warm-up, then samples until the median is known (one
// Google Benchmark iteration holds them all: the reported time is their median).
// `just_ran_ms`: a launch of the work that ended just now (0: none), which can be the pre-roll.
TimingResult measure(benchmark::State& state, const BenchCase& c, const std::function<void()>& work,
                     StudyContext& ctx, double just_ran_ms) {
  CaseState& cs = *c.state;
  TimingResult t;
  for (auto _ : state) {
    if (c.variant->backend == Backend::cpu) {
      StageTimer stage{cs.timing_s};
      t = time_host(work, sampling_policy(ctx.options));
    } else {
      const Nvml& nvml = Nvml::for_device(ctx.device->ordinal);
      WarmupResult warm;
      {
        StageTimer stage{cs.warmup_s};
        WarmupPolicy policy = warmup_policy(ctx.options, c.shape);
        policy.just_ran_ms = std::exchange(just_ran_ms, 0.0);
        warm = warm_up(work, ctx.stream, policy, nvml);
      }
      StageTimer stage{cs.timing_s};
      const int batch = ctx.options.profile || c.end_to_end ? 1 : launches_per_sample(warm.launch_ms);
      t = time_gpu(work, ctx.stream, ctx.options.flush_l2, batch, nvml, sampling_policy(ctx.options));
      t.warmup = warm;
      GEMM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      GEMM_CUDA_CHECK(cudaGetLastError());
    }
    state.SetIterationTime(t.median_ms / 1e3);
  }
  return t;
}

void record_timing(benchmark::State& state, const BenchCase& c, const TimingResult& t, bool host) {
  state.counters["gflops"] = c.shape.flops() / (t.median_ms * 1e6);
  state.counters["median_ms"] = t.median_ms;
  state.counters["median_ms_unflagged"] = t.median_ms_unflagged;
  state.counters["median_ci_low_ms"] = t.interval.low;
  state.counters["median_ci_high_ms"] = t.interval.high;
  state.counters["median_ci_pct"] = 100 * t.interval.relative_half_width(t.median_ms);
  state.counters["timed_samples"] = double(t.samples.size());
  state.counters["launches_per_sample"] = t.launches_per_sample;
  if (host) return;
  if (t.median_clock_mhz > 0) state.counters["sm_clock_mhz"] = t.median_clock_mhz;
  if (t.median_counted_clock_mhz > 0) state.counters["sm_clock_counted_mhz"] = t.median_counted_clock_mhz;
  if (t.median_power_w > 0) state.counters["power_w"] = t.median_power_w;
  state.counters["samples_flagged"] = double(t.flagged);
  state.counters["sustained"] = t.warmup.sustained ? 1 : 0;
  state.counters["soaked"] = t.warmup.soaked ? 1 : 0;
  state.counters["warmup_s"] = t.warmup.seconds;
  state.counters["rested_s"] = t.warmup.rested_s;
}

void record_stages(benchmark::State& state, const CaseState& cs) {
  state.counters["stage_inputs_s"] = cs.inputs_s;
  state.counters["stage_verify_s"] = cs.verify_s;
  state.counters["stage_warmup_s"] = cs.warmup_s;
  state.counters["stage_timing_s"] = cs.timing_s;
  state.counters["stage_reference_s"] = cs.reference_s;
  state.counters["stage_counters_s"] = cs.counters_s;
  state.counters["counters_setup_s"] = cs.counter_phases.setup_s;
  state.counters["counters_replay_s"] = cs.counter_phases.replay_s;
  state.counters["counters_decode_s"] = cs.counter_phases.decode_s;
  state.counters["stage_total_s"] = cs.total_s;
}

void run_case(benchmark::State& state, const BenchCase& c) {
  StudyContext& ctx = study();
  CaseState& cs = *c.state;
  const auto begin = std::chrono::steady_clock::now();
  const double total_before = cs.total_s;
  const Variant& v = *c.variant;
  const bool host = v.backend == Backend::cpu;
  NvtxRange outer{c.range};
  try {
    Workspace* inputs = nullptr;
    {
      StageTimer stage{cs.inputs_s};
      // Page-locked only where end-to-end copies read them (--end-to-end=on).
      inputs = &workspace_for(v.precision, c.shape, ctx.seed, ctx.device.has_value(),
                              ctx.options.pinned_host && ctx.options.end_to_end);
    }
    Workspace& ws = *inputs;
    const bool verifies_now = !cs.verified;
    if (verifies_now) {
      StageTimer stage{cs.verify_s};
      GpuLoadScope load;
      cs.verified = true;
      cs.verification = verify_once(c, ws, ctx.stream, cs.verify_launch_ms);
      if (!cs.verification.passed) cs.error = describe_failure(cs.verification);
    }
    if (!cs.error.empty()) {
      report_failure(state, cs);
      return;
    }
    const auto work = timed_work(c, ws, ctx.stream);
    // The verification launch serves as the pre-roll of the call that made it: it brought the
    // clock out of idle for the end-to-end work too, whose copies come from host memory
    // already touched when the inputs were made.
    // Not a dispatcher's: its first launch at a shape off its table times its candidates.
    const bool preroll = verifies_now && !v.has_tag(tag::dispatch);
    const TimingResult t = measure(state, c, work, ctx, preroll ? cs.verify_launch_ms : 0);
    std::optional<bool> throttled;
    if (!host) {
      if (Nvml::for_device(ctx.device->ordinal).available()) throttled = is_slowdown(t.reasons);
      if (v.backend == Backend::cublas && !c.end_to_end && !ctx.options.profile &&
          cs.kernels_json.empty())
        cs.kernels_json = kernels_json(work);
    }
    if (v.family == "cublas" && !c.end_to_end)
      cublas_medians()[cublas_key(v.precision, c.shape)] = {t.median_ms, run_clock(t)};

    record_timing(state, c, t, host);
    state.counters["max_rel_err"] = cs.verification.max_rel_err;
    if (throttled) state.counters["clock_throttled"] = *throttled ? 1 : 0;
    if (!host && !c.end_to_end) {
      ReferenceTime ref;
      {
        StageTimer stage{cs.reference_s};
        ref = cublas_reference_time(v.precision, ws, ctx);
      }
      state.counters["pct_of_cublas"] = 100.0 * ref.ms / t.median_ms;
      // The same comparison in SM cycles: a clock difference between the two runs cancels.
      const auto [ref_mhz, own_mhz] = comparable_clocks(ref.clock, run_clock(t));
      if (ref_mhz > 0 && own_mhz > 0)
        state.counters["pct_of_cublas_cycles"] = 100.0 * ref.ms * ref_mhz / (t.median_ms * own_mhz);
    }
    if (!ctx.options.profile && !host) attach_counters(state, c, ws, ctx);
    cs.total_s = total_before +
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    record_stages(state, cs);

    state.SetLabel(timing_label(c, t, host, ctx.options));
    std::string logged = samples_json(t);
    if (!cs.kernels_json.empty()) logged += ", " + cs.kernels_json;
    if (v.choice)
      if (const std::string chosen = v.choice(c.shape); !chosen.empty())
        logged += ", \"choice\": " + chosen;
    run_log().record(c.name, state.iterations(), logged);
  } catch (const std::exception& e) {
    cs.error = e.what();
    report_failure(state, cs);
  }
}

}  // namespace

StudyContext& study() {
  static StudyContext ctx;
  return ctx;
}

namespace {

bool selected(const Variant& v, Precision p, const StudyContext& ctx) {
  const Options& o = ctx.options;
  const bool on_host = v.backend == Backend::cpu;
  if (v.precision != p || !selects_tags(o, v.tags)) return false;
  if (o.cpu_only) return on_host;
  return !(o.profile && on_host);
}

// The variant's own precondition and the launch limits, on this device. Without a device the
// limits (and preconditions that read them) are unknown, so nothing is refused: --list then
// shows every benchmark a GPU might run, and the GPU's own check decides.
std::optional<std::string> why_refused(const Variant& v, const GemmShape& s,
                                       const StudyContext& ctx) {
  if (ctx.device && v.backend != Backend::cpu) return check_launch(v, s, ctx.device->limits);
  return std::nullopt;
}

// Largest M*N*K at which a variant collects the SASS-instrumented metrics (instruction counts,
// shared-memory wavefronts per request): they run the kernel 30 to 150 times slower, their
// counts are exact and scale with the shape, so the smaller shapes carry them; the hardware
// counters are collected at every size.
double sass_counters_cap(const Variant& v, const Options& o) {
  if (o.counters_cap_edge) return std::pow(double(*o.counters_cap_edge), 3);
  if (v.counters_max_work > 0) return v.counters_max_work;
  return std::pow(double(kSassCountersEdge), 3);
}

}  // namespace

Registration register_study(const StudyContext& ctx) {
  Registration reg;
  const Options& o = ctx.options;
  // Without a device nothing runs (main stops first), but --list shows what would.
  auto add = [&](const Variant& v, const GemmShape& s, bool end_to_end) {
    const std::string name = end_to_end ? end_to_end_name(v.precision, v.name(), s)
                                        : benchmark_name(v.precision, v.name(), s);
    if (auto refused = why_refused(v, s, ctx)) {
      reg.skipped.push_back({name, *refused, ""});
      return;
    }
    if (!o.uncapped && v.default_max_work > 0 && s.work() > v.default_max_work) {
      std::ostringstream why;
      why << "capped: " << v.family << " runs only up to M*N*K = " << v.default_max_work
          << " by default (--uncapped lifts it)";
      reg.skipped.push_back({name, why.str(), v.family});
      return;
    }
    BenchCase c;
    c.variant = &v;
    c.shape = s;
    c.end_to_end = end_to_end;
    c.name = name;
    c.range = nvtx_range_name(name);
    const bool collects_counters =
        o.counters && !o.profile && !end_to_end && v.backend != Backend::cpu;
    c.counters.account_detail = o.uncapped || v.account_counters;
    if (collects_counters && !o.uncapped) {
      const double sass_cap = sass_counters_cap(v, o);
      const double hardware_cap = o.counters_cap_edge ? 0 : v.hardware_counters_max_work;
      std::ostringstream why;
      if (hardware_cap > 0 && s.work() > hardware_cap) {
        c.counters.scope = CounterScope::none;
        why << "counters capped: " << v.family << " collects counters only up to M*N*K = "
            << hardware_cap << " (its launches take long enough that the replay passes would "
            << "cost seconds each; --counters-cap or --uncapped lifts it)";
      } else if (s.work() > sass_cap) {
        c.counters.scope = CounterScope::hardware;
        why << "counters capped: " << v.family << " collects its SASS-instrumented counters "
            << "(instruction counts, shared-memory wavefronts) only up to M*N*K = " << sass_cap
            << ", hardware counters at every size (--counters-cap sets it, --uncapped lifts it)";
      }
      if (c.counters_capped()) reg.counters_capped.push_back({name, why.str(), v.family});
    }
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& st) {
      run_case(st, c);
    });
    // MinTime() and Iterations() would append "/min_time:..." or "/iterations:..." to the
    // name: the time goes in as a flag (main), which --profile sets to one iteration.
    b->UseManualTime()->Unit(benchmark::kMillisecond);
    const bool on_device = ctx.device.has_value();
    // A dispatcher's facts are made again when the result is written (it settles on a kernel at
    // its first run); the facts at registration stand for every other variant, and where that
    // fails (a device left in an error state by a failed run).
    std::string at_registration = variant_facts_json(v, s, end_to_end, on_device);
    const bool settles = v.has_tag(tag::dispatch);
    reg.registered.push_back({name, &v, [&v, s, end_to_end, on_device, settles, at_registration] {
                                if (!settles) return at_registration;
                                try {
                                  return variant_facts_json(v, s, end_to_end, on_device);
                                } catch (const std::exception&) {
                                  return at_registration;
                                }
                              }});
  };

  for (const auto& shape : o.shapes) {
    for (Precision p : o.precisions) {
      std::vector<std::pair<const Variant*, bool>> group;  // (variant, end to end)
      for (const auto& v : all_variants())
        if (selected(v, p, ctx)) group.emplace_back(&v, false);
      if (o.end_to_end && !o.cpu_only)
        for (const auto& v : all_variants())
          if (v.has_tag(tag::e2e) && selected(v, p, ctx)) group.emplace_back(&v, true);
      if (o.reversed_order) std::reverse(group.begin(), group.end());
      for (const auto& [v, end_to_end] : group) add(*v, shape, end_to_end);
    }
  }
  return reg;
}

}  // namespace gemm
