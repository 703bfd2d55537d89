#include "device_info.h"

#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <cctype>
#include <sstream>

namespace gemm {
namespace {

struct Lanes {
  int fp32;
  int fp64;
};

// FMA lanes per SM, from the CUDA C Programming Guide's throughput table.
std::optional<Lanes> lanes_per_sm(int major, int minor) {
  const int cc = major * 10 + minor;
  switch (cc) {
    case 70: case 72: case 80: return Lanes{64, 32};
    case 75: return Lanes{64, 2};
    case 86: case 87: case 89: case 120: case 121: return Lanes{128, 2};
    case 90: case 100: case 103: return Lanes{128, 64};
    default: return std::nullopt;
  }
}

// Dense tensor-core FLOP per SM per cycle (NVIDIA's A100 and H100 whitepapers: A100 156 TFLOP/s
// TF32 and 19.5 FP64 over 108 SMs at 1,410 MHz; H100 SXM 495 TF32 at 1,830 MHz and 67 FP64 at
// 1,980 MHz over 132 SMs).
struct TensorFlops {
  int tf32;
  int fp64;
};
std::optional<TensorFlops> tensor_flops_per_sm(int major, int minor) {
  switch (major * 10 + minor) {
    case 80: return TensorFlops{1024, 128};
    case 90: return TensorFlops{2048, 256};
    default: return std::nullopt;
  }
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) return 0;
  return value;
}

}  // namespace

namespace {

bool driver_library_present() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) dlclose(lib);
  return lib != nullptr;
}

}  // namespace

std::optional<DeviceInfo> query_device(int ordinal, std::string& why_not) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    // Without any driver the runtime reports an "insufficient" one; say what is really missing.
    if (status == cudaErrorInsufficientDriver && !driver_library_present())
      why_not = "no GPU: no NVIDIA driver on this machine (libcuda.so.1 not found)";
    else if (status == cudaErrorNoDevice)
      why_not = "no GPU: the NVIDIA driver sees no CUDA device";
    else
      why_not = std::string("no CUDA device: cudaGetDeviceCount failed with ") +
                cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    return std::nullopt;
  }
  if (count <= ordinal) {
    why_not = "no CUDA device: " + std::to_string(count) + " device(s) visible";
    return std::nullopt;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) {
    why_not = "no CUDA device: cudaGetDeviceProperties failed";
    return std::nullopt;
  }
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  // cudaDeviceProp::clockRate and memoryClockRate are gone in CUDA 13: ask for attributes.
  d.max_sm_clock_khz = attribute(cudaDevAttrClockRate, ordinal);
  d.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  d.memory_bus_width_bits = prop.memoryBusWidth;
  d.l2_bytes = prop.l2CacheSize;
  if (cudaDriverGetVersion(&d.driver_version) != cudaSuccess ||
      cudaRuntimeGetVersion(&d.runtime_version) != cudaSuccess) {
    why_not = "no CUDA device: the driver or runtime version cannot be read";
    return std::nullopt;
  }
  d.total_memory = prop.totalGlobalMem;
  d.limits.max_threads_per_block = prop.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    d.limits.max_block_dim[i] = prop.maxThreadsDim[i];
    d.limits.max_grid_dim[i] = prop.maxGridSize[i];
  }
  d.limits.max_smem_per_block = prop.sharedMemPerBlock;
  d.limits.max_smem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.limits.cc_major = prop.major;
  d.limits.cc_minor = prop.minor;
  d.limits.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.limits.sm_count = prop.multiProcessorCount;
  d.limits.warp_size = prop.warpSize;
  return d;
}

std::optional<double> peak_gflops(int cc_major, int cc_minor, int sm_count, int clock_khz,
                                  Precision p) {
  const auto lanes = lanes_per_sm(cc_major, cc_minor);
  if (!lanes || sm_count <= 0 || clock_khz <= 0) return std::nullopt;
  const int per_sm = p == Precision::fp32 ? lanes->fp32 : lanes->fp64;
  return 2.0 * per_sm * sm_count * (clock_khz / 1e6);  // 2 FLOP per FMA, GHz
}

std::optional<double> peak_tensor_gflops(int cc_major, int cc_minor, int sm_count, int clock_khz,
                                         Compute c) {
  const auto flops = tensor_flops_per_sm(cc_major, cc_minor);
  if (!flops || sm_count <= 0 || clock_khz <= 0 || c == Compute::fp32) return std::nullopt;
  const int per_sm = c == Compute::tf32 ? flops->tf32 : flops->fp64;
  return double(per_sm) * sm_count * (clock_khz / 1e6);
}

double peak_bandwidth_gbs(int memory_clock_khz, int bus_width_bits) {
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

std::map<std::string, std::string> context_entries(const DeviceInfo& d) {
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  };
  std::map<std::string, std::string> c;
  c["gpu_name"] = d.name;
  c["gpu_slug"] = gpu_slug(d.name);
  c["gpu_compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  c["gpu_sm_count"] = std::to_string(d.sm_count);
  c["gpu_max_sm_clock_mhz"] = std::to_string(d.max_sm_clock_khz / 1000);
  c["gpu_memory_clock_mhz"] = std::to_string(d.memory_clock_khz / 1000);
  c["gpu_memory_bus_width_bits"] = std::to_string(d.memory_bus_width_bits);
  c["gpu_l2_bytes"] = std::to_string(d.l2_bytes);
  c["gpu_max_threads_per_sm"] = std::to_string(d.limits.max_threads_per_sm);
  c["gpu_memory_bytes"] = std::to_string(d.total_memory);
  c["cuda_driver_version"] = version(d.driver_version);
  c["cuda_runtime_version"] = version(d.runtime_version);
  for (Precision p : {Precision::fp32, Precision::fp64})
    if (auto peak = peak_gflops(d.cc_major, d.cc_minor, d.sm_count, d.max_sm_clock_khz, p))
      c["peak_" + to_string(p) + "_gflops"] = std::to_string(*peak);
  for (Compute t : {Compute::tf32, Compute::fp64})
    if (auto peak = peak_tensor_gflops(d.cc_major, d.cc_minor, d.sm_count, d.max_sm_clock_khz, t))
      c[std::string("peak_") + (t == Compute::tf32 ? "tf32" : "fp64_tensor") + "_gflops"] =
          std::to_string(*peak);
  c["peak_dram_gbs"] =
      std::to_string(peak_bandwidth_gbs(d.memory_clock_khz, d.memory_bus_width_bits));
  return c;
}

std::string gpu_slug(const std::string& name) {
  std::string slug;
  std::string text = name;
  if (text.rfind("NVIDIA ", 0) == 0) text = text.substr(7);
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      slug += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-gpu" : slug;
}

}  // namespace gemm
