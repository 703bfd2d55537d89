#include "counters.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "cuda_check.h"
#include "metric_catalogue.h"

namespace gemm {
namespace {

bool is_additive(const std::string& cupti_name) {
  return cupti_name.size() > 4 && cupti_name.compare(cupti_name.size() - 4, 4, ".sum") == 0;
}

// The current driver context, looked up through the runtime so that nothing links libcuda:
// binaries must start (and say "no GPU") on machines without a driver.
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult found{};
  GEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &symbol, 12000,
                                                   cudaEnableDefault, &found));
  CUcontext context = nullptr;
  if (found != cudaDriverEntryPointSuccess || symbol == nullptr ||
      reinterpret_cast<GetCurrent>(symbol)(&context) != CUDA_SUCCESS)
    throw CountersUnavailable("cannot read the current CUDA context");
  return context;
}

}  // namespace

std::size_t set_index(CounterSelection s) {
  return (s.scope == CounterScope::all ? 0 : 1) + (s.account_detail ? 0 : 2);
}

void CounterCollector::start(const DeviceInfo& device, bool enabled,
                             const std::string& disabled_reason,
                             const std::vector<std::string>& extra_metrics,
                             const std::vector<std::string>& only) {
  if (!enabled) {
    status_ = "unavailable: " + disabled_reason;
    return;
  }
  // One metric set per CounterSelection (set_index): every metric, or without the
  // SASS-instrumented ones, each with or without the account's details.
  std::vector<std::vector<std::string>> sets(4);
  std::map<std::string, std::string> short_name_of;  // CUPTI name -> catalogue short name
  auto add = [&](const std::string& cupti, const std::string& short_name, bool account_detail) {
    short_name_of[cupti] = short_name;
    for (CounterScope scope : {CounterScope::all, CounterScope::hardware})
      for (bool with_detail : {true, false}) {
        if (scope == CounterScope::hardware && is_sass_instrumented(cupti)) continue;
        if (!with_detail && account_detail) continue;
        sets[set_index({scope, with_detail})].push_back(cupti);
      }
  };
  for (const auto& m : metric_catalogue())
    if (only.empty() || std::find(only.begin(), only.end(), m.short_name) != only.end())
      add(m.cupti_name, m.short_name, is_account_detail(m.short_name));
  for (const auto& extra : extra_metrics) add(extra, extra, false);
  // The user's --metrics must exist; a catalogue metric this chip lacks is left out and named.
  const auto required = [extra_metrics](const std::string& cupti) {
    return std::find(extra_metrics.begin(), extra_metrics.end(), cupti) != extra_metrics.end();
  };
  try {
    GEMM_CUDA_CHECK(cudaSetDevice(device.ordinal));
    GEMM_CUDA_CHECK(cudaFree(nullptr));  // create the primary context
    CUcontext context = current_context();
    session_ = std::make_unique<CounterSession>(context, device.ordinal, sets, required);
    short_names_.assign(session_->sets(), {});
    for (std::size_t set = 0; set < session_->sets(); ++set)
      for (const auto& cupti : session_->metric_names(set))
        short_names_[set].push_back(short_name_of.at(cupti));
    const auto passes = [&](CounterSelection s) {
      return std::to_string(session_->passes(set_index(s)));
    };
    status_ = "collected: CUPTI range profiler, auto range, user replay (the launch re-run per pass), " +
              passes({CounterScope::all, true}) + " passes per kernel (" +
              passes({CounterScope::hardware, true}) + " for the hardware counters alone, above a " +
              "counter cap; " + passes({CounterScope::all, false}) + " and " +
              passes({CounterScope::hardware, false}) + " without the warp states and ALU/LSU " +
              "pipes, for kernels outside the bottleneck account), each after an unprofiled " +
              "launch where A, B and C fit in L2 (warm L2) or an L2 flush (--flush-l2)";
    if (!session_->dropped().empty()) {
      status_ += "; not on this chip, left out:";
      for (const auto& name : session_->dropped()) status_ += " " + name;
    }
  } catch (const CountersUnavailable& e) {
    session_.reset();
    status_ = std::string("unavailable: ") + e.what();
  }
  if (!session_) std::fprintf(stderr, "gemm-bench: counters %s\n", status_.c_str());
}

CounterValues CounterCollector::collect(const std::function<void()>& launch,
                                       const std::function<void()>& before_each_pass,
                                       bool warm_up_before_pass, CounterSelection selection) {
  if (!session_) throw CountersUnavailable(status_);
  const std::size_t set = set_index(selection);
  last_passes_ = 0;
  last_timing_ = {};
  if (session_->metric_names(set).empty()) return {};  // --counter-metrics left none here
  std::vector<KernelCounters> kernels;
  try {
    // The first profile of a process read A and B from HBM again even after a warm-up launch
    // (H100, 1024^3 FP32: 8.4 MB against 0 from ncu): it is run twice, and the first discarded.
    const auto add_timing = [this] {
      const ProfileTiming& t = session_->last_timing();
      last_timing_.setup_s += t.setup_s;
      last_timing_.replay_s += t.replay_s;
      last_timing_.decode_s += t.decode_s;
    };
    if (!primed_) {
      session_->profile(set, launch, before_each_pass, warm_up_before_pass);
      add_timing();
    }
    primed_ = true;
    kernels = session_->profile(set, launch, before_each_pass, warm_up_before_pass);
    add_timing();
    last_passes_ = session_->passes(set);
  } catch (const CountersUnavailable& e) {
    session_.reset();
    status_ = std::string("unavailable: ") + e.what();
    std::fprintf(stderr, "gemm-bench: counters %s\n", status_.c_str());
    throw;
  }
  CounterValues sums = aggregate_kernels(session_->metric_names(set), short_names_[set], kernels);
  sums["profiled_kernels"] = double(kernels.size());
  return sums;
}

CounterValues aggregate_kernels(const std::vector<std::string>& cupti_names,
                                const std::vector<std::string>& short_names,
                                const std::vector<KernelCounters>& kernels) {
  CounterValues out;
  if (kernels.empty()) return out;
  std::optional<std::size_t> time_index;
  for (std::size_t i = 0; i < short_names.size(); ++i)
    if (short_names[i] == "gpu_time_ns") time_index = i;
  double total_time = 0;
  if (time_index)
    for (const auto& k : kernels) total_time += k.values[*time_index];
  for (std::size_t m = 0; m < cupti_names.size(); ++m) {
    double value = 0;
    for (const auto& k : kernels) {
      if (is_additive(cupti_names[m]))
        value += k.values[m];
      else if (total_time > 0)
        value += k.values[m] * k.values[*time_index] / total_time;
      else
        value += k.values[m] / double(kernels.size());
    }
    out[short_names[m]] = value;
  }
  return out;
}

double occupancy_percent(int blocks_per_sm, long long threads_per_block, int max_threads_per_sm,
                         int warp_size) {
  if (max_threads_per_sm <= 0 || warp_size <= 0) return 0;
  const long long warps_per_block = (threads_per_block + warp_size - 1) / warp_size;
  const double max_warps = double(max_threads_per_sm) / warp_size;
  return 100.0 * double(blocks_per_sm) * double(warps_per_block) / max_warps;
}

void add_wave_facts(CounterValues& facts, long long grid_blocks, int blocks_per_sm, int sm_count) {
  facts["grid_blocks"] = double(grid_blocks);
  facts["blocks_per_sm"] = blocks_per_sm;
  const long long slots = static_cast<long long>(blocks_per_sm) * sm_count;
  if (slots <= 0 || grid_blocks <= 0) return;
  facts["waves"] = double(grid_blocks) / double(slots);
  const long long last = grid_blocks % slots;
  facts["last_wave_fill"] = last == 0 ? 1.0 : double(last) / double(slots);
}

CounterValues launch_facts(const Variant& v, const GemmShape& shape,
                           const DeviceLimits& limits) {
  CounterValues facts;
  if (v.backend != Backend::cuda_kernel) return facts;
  const LaunchPlan plan = v.plan(shape);
  cudaFuncAttributes attr{};
  GEMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, plan.kernel));
  int blocks = 0;
  GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, plan.kernel, int(plan.block.count()), plan.dynamic_smem_bytes));
  facts["theoretical_occupancy"] =
      occupancy_percent(blocks, plan.block.count(), limits.max_threads_per_sm, limits.warp_size);
  facts["registers_per_thread"] = attr.numRegs;
  facts["smem_per_block_bytes"] = double(attr.sharedSizeBytes + plan.dynamic_smem_bytes);
  add_wave_facts(facts, plan.grid.count(), blocks, limits.sm_count);
  return facts;
}

}  // namespace gemm
