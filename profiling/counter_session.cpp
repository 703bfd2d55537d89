#include "counter_session.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <cstdlib>

namespace gemm {
namespace {

// Zero-initialised CUPTI parameter struct with its size set, as every CUPTI call requires.
template <typename Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}
#define CUPTI_PARAMS(Type) cupti_params<Type>(Type##_STRUCT_SIZE)

std::string cupti_message(CUptiResult status) {
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  return std::string(text ? text : "unknown CUPTI error") + " (" + std::to_string(int(status)) +
         ")";
}

// Statuses that mean "counters are not available in this environment" rather than a bug.
bool is_environmental(CUptiResult status) {
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

std::string hint(CUptiResult status) {
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return ": GPU performance counters are restricted to administrators "
             "(NVreg_RestrictProfilingToAdminUsers=1); run as root or lift the restriction";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return ": another profiling tool (ncu, nsys, compute-sanitizer) is attached";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return ": another client (for example DCGM) holds the counters";
    default:
      return "";
  }
}

void check(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  const std::string what = std::string(call) + ": " + cupti_message(status) + hint(status);
  if (status == CUPTI_ERROR_INVALID_METRIC_NAME) throw UnknownMetric(what);
  if (is_environmental(status)) throw CountersUnavailable(what);
  throw std::runtime_error(what);
}

#define CUPTI_CHECK(call) check((call), #call)

}  // namespace

std::optional<std::string> profiler_tool_attached() {
  // Set by ncu, nsys and compute-sanitizer in the profiled process.
  for (const char* name : {"NV_COMPUTE_PROFILER_PERFWORKS_DIR", "NV_TPS_LAUNCH_TOKEN",
                           "NSYS_PROFILING_SESSION_ID", "NV_SANITIZER_INJECTION_PORT_RANGE_BEGIN"})
    if (std::getenv(name))
      return std::string("a profiling tool is attached (") + name +
             " is set): it holds the counters";
  return std::nullopt;
}

// One config image over a group of metrics. The catalogue is collected in two groups: the
// counts, stalls and utilizations (several passes, some instrumented and slow), and the
// cache-state metrics (DRAM bytes, L2 hit rate, duration), which need the caches as a repeated
// launch leaves them and fit in one cheap pass.
struct MetricGroup {
  std::vector<std::size_t> positions;  // of each metric in the session's metric_names()
  std::vector<const char*> c_names;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> config;
  std::size_t passes = 0;
  bool cache_state = false;
};

struct CounterSession::Impl {
  CUcontext context = nullptr;
  std::vector<std::string> names;
  std::vector<std::string> cache_state_names;
  std::string chip;
  std::vector<std::uint8_t> availability, counter_data;
  std::vector<MetricGroup> groups;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  bool initialized = false;
  static constexpr std::size_t kMaxRanges = 64;  // kernels per profiled pass (cuBLAS: 1-3 per launch)

  void teardown() {
    if (profiler) {
      auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      p.pRangeProfilerObject = profiler;
      cuptiRangeProfilerDisable(&p);
      profiler = nullptr;
    }
    for (auto& g : groups) {
      if (!g.host) continue;
      auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      p.pHostObject = g.host;
      cuptiProfilerHostDeinitialize(&p);
      g.host = nullptr;
    }
    if (initialized) {
      auto p = CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
      cuptiProfilerDeInitialize(&p);
      initialized = false;
    }
  }

  std::size_t passes() const {
    std::size_t total = 0;
    for (const auto& g : groups) total += g.passes;
    return total;
  }

  void setup(int device) {
    auto init = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    CUPTI_CHECK(cuptiProfilerInitialize(&init));
    initialized = true;

    auto chip_params = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    chip_params.deviceIndex = std::size_t(device);
    CUPTI_CHECK(cuptiDeviceGetChipName(&chip_params));
    chip = chip_params.pChipName;

    auto avail = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    avail.ctx = context;
    CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));  // size query
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));

    MetricGroup counts, cache;
    cache.cache_state = true;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const bool is_cache = std::find(cache_state_names.begin(), cache_state_names.end(),
                                      names[i]) != cache_state_names.end();
      MetricGroup& g = is_cache ? cache : counts;
      g.positions.push_back(i);
      g.c_names.push_back(names[i].c_str());
    }
    for (MetricGroup* g : {&counts, &cache})
      if (!g->positions.empty()) groups.push_back(std::move(*g));
    for (auto& g : groups) build_config(g);

    auto enable = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    enable.ctx = context;
    CUPTI_CHECK(cuptiRangeProfilerEnable(&enable));
    profiler = enable.pRangeProfilerObject;
  }

  void build_config(MetricGroup& g) {
    auto host_init = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = chip.c_str();
    host_init.pCounterAvailabilityImage = availability.data();
    CUPTI_CHECK(cuptiProfilerHostInitialize(&host_init));
    g.host = host_init.pHostObject;

    // Ask about each name first: adding an unknown one fails with a status that names nothing.
    for (const char* name : g.c_names) {
      auto props = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
      props.pHostObject = g.host;
      props.pMetricName = name;
      if (cuptiProfilerHostGetMetricProperties(&props) != CUPTI_SUCCESS)
        throw UnknownMetric(std::string("the ") + chip + " chip has no metric '" + name +
                            "'; list valid names with `ncu --query-metrics --chip " + chip + "`");
    }
    auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = g.host;
    add.ppMetricNames = g.c_names.data();
    add.numMetrics = g.c_names.size();
    const CUptiResult added = cuptiProfilerHostConfigAddMetrics(&add);
    if (added == CUPTI_ERROR_INVALID_METRIC_NAME)
      throw UnknownMetric("the " + chip + " chip does not know one of the requested metrics (" +
                          cupti_message(added) + "); list valid names with `ncu " +
                          "--query-metrics --chip " + chip + "`");
    CUPTI_CHECK(added);

    auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = g.host;
    CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
    g.config.resize(size.configImageSize);
    auto image = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = g.host;
    image.configImageSize = g.config.size();
    image.pConfigImage = g.config.data();
    CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));

    auto num_passes = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    num_passes.configImageSize = g.config.size();
    num_passes.pConfigImage = g.config.data();
    CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&num_passes));
    g.passes = num_passes.numOfPasses;
  }

  static void synchronize(const char* what) {
    if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error(what);
  }

  // The group's values per kernel of one launch (written into `kernels` at its positions).
  void profile_group(MetricGroup& g, const std::function<void()>& launch,
                     const std::function<void()>& before_each_pass, bool warm_up,
                     std::vector<KernelCounters>& kernels) {
    // A fresh counter-data image per profiled launch.
    auto size = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    size.pRangeProfilerObject = profiler;
    size.pMetricNames = g.c_names.data();
    size.numMetrics = g.c_names.size();
    size.maxNumOfRanges = kMaxRanges;
    size.maxNumRangeTreeNodes = kMaxRanges;
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data.assign(size.counterDataSize, 0);
    auto data_init = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    data_init.pRangeProfilerObject = profiler;
    data_init.counterDataSize = counter_data.size();
    data_init.pCounterData = counter_data.data();
    CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&data_init));

    auto set = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    set.pRangeProfilerObject = profiler;
    set.configSize = g.config.size();
    set.pConfig = g.config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_AutoRange;
    // User replay: the harness runs the launch once per pass. GEMM launches overwrite C and
    // never read it, so every pass computes the same thing and nothing needs saving; kernel
    // replay instead saves and restores device memory around every pass, which cost seconds
    // per benchmark at 4096^3 and left the caches in whatever state the restore left them.
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = kMaxRanges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    CUPTI_CHECK(cuptiRangeProfilerSetConfig(&set));

    for (bool all_passes_submitted = false; !all_passes_submitted;) {
      if (before_each_pass) before_each_pass();
      synchronize("the work before a counter pass failed");
      auto start = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
      start.pRangeProfilerObject = profiler;
      CUPTI_CHECK(cuptiRangeProfilerStart(&start));
      if (warm_up) {
        // Starting a pass leaves L2 without the launch's data (on an H100 a 1024^3 FP32 GEMM
        // right after its timed launches read A and B from HBM again), so a warm-cache count
        // needs a launch inside the pass first; its kernels' ranges are dropped below.
        launch();
        synchronize("a kernel failed while its counters were collected");
      }
      launch();
      synchronize("a kernel failed while its counters were collected");
      auto stop = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      stop.pRangeProfilerObject = profiler;
      CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
      all_passes_submitted = stop.isAllPassSubmitted != 0;
    }

    auto decode = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    decode.pRangeProfilerObject = profiler;
    CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped != 0)
      throw std::runtime_error("CUPTI dropped " + std::to_string(decode.numOfRangeDropped) +
                               " kernel ranges: more than " + std::to_string(kMaxRanges) +
                               " kernels in one profiled pass");

    auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));

    // With a warm-up launch the pass held two identical launches: keep the second one's kernels.
    std::size_t first = 0;
    if (warm_up) {
      if (info.numTotalRanges % 2 != 0)
        throw std::runtime_error("a warm-up launch and the measured launch gave " +
                                 std::to_string(info.numTotalRanges) +
                                 " kernel ranges: the launch does not repeat the same kernels");
      first = info.numTotalRanges / 2;
    }
    const std::size_t count = info.numTotalRanges - first;
    if (kernels.empty()) {
      kernels.resize(count);
      for (auto& k : kernels) k.values.assign(names.size(), 0.0);
    } else if (kernels.size() != count) {
      throw std::runtime_error("the metric groups saw " + std::to_string(kernels.size()) +
                               " and " + std::to_string(count) +
                               " kernels: the launch does not repeat the same kernels");
    }
    std::vector<double> values(g.c_names.size());
    for (std::size_t i = 0; i < count; ++i) {
      auto eval = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      eval.pHostObject = g.host;
      eval.pCounterDataImage = counter_data.data();
      eval.counterDataImageSize = counter_data.size();
      eval.rangeIndex = first + i;
      eval.ppMetricNames = g.c_names.data();
      eval.numMetrics = g.c_names.size();
      eval.pMetricValues = values.data();
      CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
      for (std::size_t m = 0; m < values.size(); ++m) kernels[i].values[g.positions[m]] = values[m];
    }
  }

  std::vector<KernelCounters> profile(const std::function<void()>& launch,
                                      const std::function<void()>& before_each_pass,
                                      bool warm_cache_state) {
    std::vector<KernelCounters> kernels;
    for (auto& g : groups)
      profile_group(g, launch, before_each_pass, g.cache_state && warm_cache_state, kernels);
    return kernels;
  }
};

CounterSession::CounterSession(CUcontext context, int device,
                               std::vector<std::string> metric_names,
                               std::vector<std::string> cache_state_names)
    : impl_(std::make_unique<Impl>()) {
  if (auto tool = profiler_tool_attached()) throw CountersUnavailable(*tool);
  impl_->context = context;
  impl_->names = std::move(metric_names);
  impl_->cache_state_names = std::move(cache_state_names);
  try {
    impl_->setup(device);
  } catch (...) {
    impl_->teardown();
    throw;
  }
}

CounterSession::~CounterSession() { impl_->teardown(); }

const std::vector<std::string>& CounterSession::metric_names() const { return impl_->names; }

std::size_t CounterSession::passes() const { return impl_->passes(); }

std::vector<KernelCounters> CounterSession::profile(const std::function<void()>& launch,
                                                   const std::function<void()>& before_each_pass,
                                                   bool warm_cache_state) {
  return impl_->profile(launch, before_each_pass, warm_cache_state);
}

}  // namespace gemm
