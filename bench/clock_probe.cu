#include <dlfcn.h>

#include <cstdint>
#include <mutex>

#include "clock_probe.h"
#include "cuda_check.h"

namespace gemm {
namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(std::uint64_t span_ns, unsigned long long* cycles,
                                   unsigned long long* nanoseconds) {
  const std::uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  std::uint64_t t1 = t0;
  while (t1 - t0 < span_ns) t1 = global_timer_ns();
  const long long c1 = clock64();
  *cycles = static_cast<unsigned long long>(c1 - c0);
  *nanoseconds = t1 - t0;
}

// The few NVML entry points used, looked up once with dlopen.
struct Nvml {
  using Init = int (*)();
  using HandleByBusId = int (*)(const char*, void**);
  using Reasons = int (*)(void*, unsigned long long*);
  bool ok = false;
  HandleByBusId handle_by_bus_id = nullptr;
  Reasons reasons = nullptr;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    handle_by_bus_id = reinterpret_cast<HandleByBusId>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    reasons = reinterpret_cast<Reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons)  // the name before NVML 12.2
      reasons = reinterpret_cast<Reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    ok = init && handle_by_bus_id && reasons && init() == 0;
  }
};

// NVML's reasons that do not mean "slowed down by power or heat".
constexpr unsigned long long kGpuIdle = 0x1, kApplicationsClocks = 0x2, kDisplayClock = 0x100;

}  // namespace

double measure_sm_clock_mhz(cudaStream_t stream) {
  static unsigned long long* results = [] {
    unsigned long long* p = nullptr;
    GEMM_CUDA_CHECK(cudaMalloc(&p, 2 * sizeof(unsigned long long)));
    return p;
  }();
  clock_probe_kernel<<<1, 1, 0, stream>>>(100000, results, results + 1);
  GEMM_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  GEMM_CUDA_CHECK(cudaMemcpyAsync(host, results, sizeof(host), cudaMemcpyDeviceToHost, stream));
  GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host[1] > 0 ? 1e3 * double(host[0]) / double(host[1]) : 0.0;
}

std::optional<bool> clock_throttled(int device) {
  static Nvml nvml;
  if (!nvml.ok) return std::nullopt;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device) != cudaSuccess) return std::nullopt;
  void* handle = nullptr;
  unsigned long long reasons = 0;
  if (nvml.handle_by_bus_id(bus_id, &handle) != 0 || nvml.reasons(handle, &reasons) != 0)
    return std::nullopt;
  return (reasons & ~(kGpuIdle | kApplicationsClocks | kDisplayClock)) != 0;
}

}  // namespace gemm
