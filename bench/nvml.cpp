#include "nvml.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>

namespace gemm {
namespace {

// The few NVML entry points used, looked up once. Return codes: 0 is NVML_SUCCESS.
struct NvmlApi {
  using Init = int (*)();
  using HandleByBusId = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  using Milliwatts = int (*)(void*, unsigned*);
  HandleByBusId handle_by_bus_id = nullptr;
  ClockInfo clock_info = nullptr, max_clock_info = nullptr;
  Reasons reasons = nullptr;
  Milliwatts power_usage = nullptr, power_limit = nullptr;
  std::string why;  // empty when loaded and initialized

  NvmlApi() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return;
    }
    auto find = [lib](const char* name) { return dlsym(lib, name); };
    auto init = reinterpret_cast<Init>(find("nvmlInit_v2"));
    handle_by_bus_id = reinterpret_cast<HandleByBusId>(find("nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info = reinterpret_cast<ClockInfo>(find("nvmlDeviceGetClockInfo"));
    max_clock_info = reinterpret_cast<ClockInfo>(find("nvmlDeviceGetMaxClockInfo"));
    reasons = reinterpret_cast<Reasons>(find("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons)  // the name before NVML 12.2
      reasons = reinterpret_cast<Reasons>(find("nvmlDeviceGetCurrentClocksThrottleReasons"));
    power_usage = reinterpret_cast<Milliwatts>(find("nvmlDeviceGetPowerUsage"));
    power_limit = reinterpret_cast<Milliwatts>(find("nvmlDeviceGetEnforcedPowerLimit"));
    if (!init || !handle_by_bus_id || !clock_info || !reasons)
      why = "libnvidia-ml.so.1 lacks the clock queries";
    else if (init() != 0)
      why = "nvmlInit failed";
  }
};

const NvmlApi& api() {
  static const NvmlApi instance;
  return instance;
}

constexpr int kClockSm = 1;  // NVML_CLOCK_SM

struct ReasonName {
  unsigned long long bit;
  const char* name;
};
// nvmlClocksEventReasons bits that lower the clock for power or heat.
constexpr ReasonName kSlowdowns[] = {
    {0x4, "sw_power_cap"},         {0x8, "hw_slowdown"},          {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake"},
};

}  // namespace

Nvml::Nvml(int ordinal) {
  const NvmlApi& nvml = api();
  if (!nvml.why.empty()) {
    why_ = nvml.why;
    return;
  }
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), ordinal) != cudaSuccess) {
    cudaGetLastError();
    why_ = "the CUDA device's PCI bus id cannot be read";
    return;
  }
  if (nvml.handle_by_bus_id(bus_id, &device_) != 0) {
    device_ = nullptr;
    why_ = std::string("NVML does not know the device at ") + bus_id;
  }
}

Nvml& Nvml::for_device(int ordinal) {
  static std::mutex lock;
  static std::map<int, std::unique_ptr<Nvml>> instances;
  std::lock_guard<std::mutex> guard(lock);
  auto& slot = instances[ordinal];
  if (!slot) slot.reset(new Nvml(ordinal));
  return *slot;
}

std::optional<ClockReading> Nvml::clock() const {
  if (!device_) return std::nullopt;
  unsigned mhz = 0;
  ClockReading r;
  if (api().clock_info(device_, kClockSm, &mhz) != 0 || api().reasons(device_, &r.reasons) != 0)
    return std::nullopt;
  r.sm_mhz = mhz;
  return r;
}

std::optional<double> Nvml::max_sm_mhz() const {
  unsigned mhz = 0;
  if (!device_ || !api().max_clock_info || api().max_clock_info(device_, kClockSm, &mhz) != 0)
    return std::nullopt;
  return double(mhz);
}

std::optional<double> Nvml::power_w() const {
  unsigned mw = 0;
  if (!device_ || !api().power_usage || api().power_usage(device_, &mw) != 0) return std::nullopt;
  return mw / 1e3;
}

std::optional<double> Nvml::power_limit_w() const {
  unsigned mw = 0;
  if (!device_ || !api().power_limit || api().power_limit(device_, &mw) != 0) return std::nullopt;
  return mw / 1e3;
}

bool is_slowdown(unsigned long long reasons) {
  for (const auto& r : kSlowdowns)
    if (reasons & r.bit) return true;
  return false;
}

std::vector<std::string> slowdown_names(unsigned long long reasons) {
  std::vector<std::string> names;
  for (const auto& r : kSlowdowns)
    if (reasons & r.bit) names.push_back(r.name);
  return names;
}

}  // namespace gemm
