// What the study records about the GPU: limits for launch checks, and the context that goes
// into every results file so runs on different GPUs, drivers or clocks are never confused.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gemm_types.h"
#include "variant.h"

namespace gemm {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_sm_clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int l2_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  std::size_t total_memory = 0;
  DeviceLimits limits;
};

// The device, or a one-line reason why there is none.
std::optional<DeviceInfo> query_device(int ordinal, std::string& why_not);

// Theoretical peak from FMA lanes per SM x 2 x SMs x max clock; nothing for an unknown
// architecture (never a guess).
std::optional<double> peak_gflops(int cc_major, int cc_minor, int sm_count, int clock_khz,
                                  Precision p);
// Dense tensor-core peak (TF32 or FP64 arithmetic) at the given clock; nothing for FP32 (no
// tensor path) or an unknown architecture.
std::optional<double> peak_tensor_gflops(int cc_major, int cc_minor, int sm_count, int clock_khz,
                                         Compute c);
// DDR: two transfers per memory clock.
double peak_bandwidth_gbs(int memory_clock_khz, int bus_width_bits);

// Key/value pairs for the results file's context section.
std::map<std::string, std::string> context_entries(const DeviceInfo& d);

// A directory-safe GPU name for reports/<gpu>/: "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
std::string gpu_slug(const std::string& name);

}  // namespace gemm
