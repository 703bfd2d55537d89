#include "counter_session.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "metric_catalogue.h"

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

// One metric set: its host object (the metric evaluator), config image and pass count.
struct MetricSet {
  std::vector<std::string> names;
  std::vector<const char*> c_names;
  std::vector<std::uint8_t> config;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::size_t passes = 0;
  bool instrumented = false;  // holds SASS-instrumented metrics (smsp__sass_*)

  void teardown() {
    if (!host) return;
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = host;
    cuptiProfilerHostDeinitialize(&p);
    host = nullptr;
  }

  void setup(const std::string& chip, std::vector<std::uint8_t>& availability,
             const std::function<bool(const std::string&)>& required,
             std::vector<std::string>& dropped) {
    if (names.empty()) return;  // a selection that leaves nothing to collect: no passes
    instrumented = std::any_of(names.begin(), names.end(), is_sass_instrumented);
    auto host_init = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = chip.c_str();
    host_init.pCounterAvailabilityImage = availability.data();
    CUPTI_CHECK(cuptiProfilerHostInitialize(&host_init));
    host = host_init.pHostObject;

    // Ask about each name first: adding an unknown one fails with a status that names nothing.
    // A name the chip lacks stops the program if it is required (asked for by the user), and
    // is left out, with its name kept for the status line, if not (a catalogue metric of
    // another architecture).
    std::vector<std::string> known;
    for (const auto& name : names) {
      auto props = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
      props.pHostObject = host;
      props.pMetricName = name.c_str();
      if (cuptiProfilerHostGetMetricProperties(&props) == CUPTI_SUCCESS) {
        known.push_back(name);
        continue;
      }
      if (!required || required(name))
        throw UnknownMetric(std::string("the ") + chip + " chip has no metric '" + name +
                            "'; list valid names with `ncu --query-metrics --chip " + chip + "`");
      if (std::find(dropped.begin(), dropped.end(), name) == dropped.end()) dropped.push_back(name);
    }
    names = std::move(known);
    if (names.empty()) return;
    for (const auto& n : names) c_names.push_back(n.c_str());
    auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = host;
    add.ppMetricNames = c_names.data();
    add.numMetrics = c_names.size();
    const CUptiResult added = cuptiProfilerHostConfigAddMetrics(&add);
    if (added == CUPTI_ERROR_INVALID_METRIC_NAME)
      throw UnknownMetric("the " + chip + " chip does not know one of the requested metrics (" +
                          cupti_message(added) + "); list valid names with `ncu " +
                          "--query-metrics --chip " + chip + "`");
    CUPTI_CHECK(added);

    auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host;
    CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
    config.resize(size.configImageSize);
    auto image = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));

    auto num_passes = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    num_passes.configImageSize = config.size();
    num_passes.pConfigImage = config.data();
    CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&num_passes));
    passes = num_passes.numOfPasses;
  }
};

struct CounterSession::Impl {
  CUcontext context = nullptr;
  std::vector<MetricSet> sets;
  std::string chip;
  std::vector<std::uint8_t> availability, counter_data;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  bool initialized = false;
  std::function<bool(const std::string&)> required;
  std::vector<std::string> dropped;
  ProfileTiming timing;
  bool last_instrumented = false;  // the last profile's set had SASS-instrumented metrics
  static constexpr std::size_t kMaxRanges = 64;  // kernels per profiled launch (cuBLAS: 1-3)

  void teardown() {
    if (profiler) {
      auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      p.pRangeProfilerObject = profiler;
      cuptiRangeProfilerDisable(&p);
      profiler = nullptr;
    }
    for (auto& set : sets) set.teardown();
    if (initialized) {
      auto p = CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
      cuptiProfilerDeInitialize(&p);
      initialized = false;
    }
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

    for (auto& set : sets) set.setup(chip, availability, required, dropped);

    // One range profiler per context; each profile sets the config of the set it collects.
    enable_profiler();
  }

  void enable_profiler() {
    auto enable = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    enable.ctx = context;
    CUPTI_CHECK(cuptiRangeProfilerEnable(&enable));
    profiler = enable.pRangeProfilerObject;
  }

  void disable_profiler() {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = profiler;
    CUPTI_CHECK(cuptiRangeProfilerDisable(&p));
    profiler = nullptr;
  }

  std::vector<KernelCounters> profile(MetricSet& metrics, const std::function<void()>& launch,
                                      const std::function<void()>& before_each_pass,
                                      bool warm_up_before_pass) {
    auto& c_names = metrics.c_names;
    const auto& config = metrics.config;
    using Clock = std::chrono::steady_clock;
    const auto seconds_since = [](Clock::time_point t) {
      return std::chrono::duration<double>(Clock::now() - t).count();
    };
    timing = {};
    auto phase = Clock::now();
    // After a set with SASS-instrumented metrics, the passes of a set without them ran 2-6x
    // slower than in a process that never instrumented (H100, 4096^3 FP32: 2.47 s against
    // 0.44 s for 10 passes of shared/tile:32, the same counts): CUPTI goes on running the
    // kernels it patched. A fresh range profiler (20 ms) runs them unpatched again.
    if (last_instrumented && !metrics.instrumented) {
      disable_profiler();
      enable_profiler();
    }
    last_instrumented = metrics.instrumented;
    // A fresh counter-data image per profiled launch.
    auto size = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    size.pRangeProfilerObject = profiler;
    size.pMetricNames = c_names.data();
    size.numMetrics = c_names.size();
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
    set.configSize = config.size();
    set.pConfig = config.data();
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
    timing.setup_s = seconds_since(phase);
    phase = Clock::now();

    for (bool all_passes_submitted = false; !all_passes_submitted;) {
      if (before_each_pass) before_each_pass();
      // A pass does not start with L2 as the previous pass left it: on an H100 the DRAM
      // counters of a 1024^3 FP32 GEMM profiled pass after pass read A and B from HBM every
      // time. One launch right before the pass (not profiled, at full speed) puts them back.
      if (warm_up_before_pass) launch();
      if (cudaDeviceSynchronize() != cudaSuccess)
        throw std::runtime_error("the work before a counter pass failed");
      auto start = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
      start.pRangeProfilerObject = profiler;
      CUPTI_CHECK(cuptiRangeProfilerStart(&start));
      launch();
      if (cudaDeviceSynchronize() != cudaSuccess)
        throw std::runtime_error("a kernel failed while its counters were collected");
      auto stop = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      stop.pRangeProfilerObject = profiler;
      CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
      all_passes_submitted = stop.isAllPassSubmitted != 0;
    }
    timing.replay_s = seconds_since(phase);
    phase = Clock::now();

    auto decode = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    decode.pRangeProfilerObject = profiler;
    CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped != 0)
      throw std::runtime_error("CUPTI dropped " + std::to_string(decode.numOfRangeDropped) +
                               " kernel ranges: more than " + std::to_string(kMaxRanges) +
                               " kernels in one profiled launch");

    auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));

    std::vector<KernelCounters> kernels(info.numTotalRanges);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      kernels[i].values.resize(c_names.size());
      auto eval = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      eval.pHostObject = metrics.host;
      eval.pCounterDataImage = counter_data.data();
      eval.counterDataImageSize = counter_data.size();
      eval.rangeIndex = i;
      eval.ppMetricNames = c_names.data();
      eval.numMetrics = c_names.size();
      eval.pMetricValues = kernels[i].values.data();
      CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
    }
    timing.decode_s = seconds_since(phase);
    return kernels;
  }
};

CounterSession::CounterSession(CUcontext context, int device,
                               std::vector<std::vector<std::string>> metric_sets,
                               std::function<bool(const std::string&)> required)
    : impl_(std::make_unique<Impl>()) {
  if (auto tool = profiler_tool_attached()) throw CountersUnavailable(*tool);
  impl_->context = context;
  impl_->required = std::move(required);
  impl_->sets.resize(metric_sets.size());
  for (std::size_t i = 0; i < metric_sets.size(); ++i) impl_->sets[i].names = std::move(metric_sets[i]);
  try {
    impl_->setup(device);
  } catch (...) {
    impl_->teardown();
    throw;
  }
}

CounterSession::~CounterSession() { impl_->teardown(); }

std::size_t CounterSession::sets() const { return impl_->sets.size(); }

const std::vector<std::string>& CounterSession::metric_names(std::size_t set) const {
  return impl_->sets.at(set).names;
}

std::size_t CounterSession::passes(std::size_t set) const { return impl_->sets.at(set).passes; }

const std::vector<std::string>& CounterSession::dropped() const { return impl_->dropped; }

const ProfileTiming& CounterSession::last_timing() const { return impl_->timing; }

std::vector<KernelCounters> CounterSession::profile(std::size_t set,
                                                   const std::function<void()>& launch,
                                                   const std::function<void()>& before_each_pass,
                                                   bool warm_up_before_pass) {
  return impl_->profile(impl_->sets.at(set), launch, before_each_pass, warm_up_before_pass);
}

}  // namespace gemm
