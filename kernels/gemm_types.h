// Shared vocabulary of the kernel library: precisions, problem shapes, launch plans and the
// device limits a plan is checked against. Host-only header (no CUDA runtime calls), so the
// validation logic is testable on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gemm {

enum class Precision { fp32, fp64 };

std::string to_string(Precision p);
Precision precision_from_string(const std::string& text);  // throws std::invalid_argument
std::size_t element_size(Precision p);

// C (M x N) = A (M x K) * B (K x N), all row-major.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  double work() const { return double(m) * double(n) * double(k); }
  std::string to_string() const;  // "MxNxK"
};

struct Dim3 {
  std::int64_t x = 1, y = 1, z = 1;
  std::int64_t count() const { return x * y * z; }
};

// Everything needed to launch one kernel and to reason about its resources.
struct LaunchPlan {
  Dim3 grid;
  Dim3 block;
  std::size_t static_smem_bytes = 0;   // known from the kernel's template parameters
  std::size_t dynamic_smem_bytes = 0;  // passed at launch
  const void* kernel = nullptr;        // for occupancy and attribute queries
  // The block's output tile and k-tile where the kernel has them (0: none, or not said): what
  // the dispatcher's model scales a time by, also for a variant whose name carries no tile (the
  // tuned rung picks a configuration per shape).
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;
};

// The subset of cudaDeviceProp that decides whether a launch is legal.
struct DeviceLimits {
  int max_threads_per_block = 1024;
  std::int64_t max_block_dim[3] = {1024, 1024, 64};
  std::int64_t max_grid_dim[3] = {2147483647, 65535, 65535};
  std::size_t max_smem_per_block = 48 * 1024;        // without the opt-in carve-out
  std::size_t max_smem_per_block_optin = 48 * 1024;  // cudaFuncAttributeMaxDynamicSharedMemorySize
  int max_threads_per_sm = 2048;
  int sm_count = 0;
  int warp_size = 32;
  int cc_major = 0, cc_minor = 0;  // compute capability (0.0: unknown)
};

// Above this a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize) before launch.
inline constexpr std::size_t kDefaultSmemPerBlock = 48 * 1024;

}  // namespace gemm
