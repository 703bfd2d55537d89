// Host side of the split schedules (split-K, stream-K, the GEMV's K slices): what the device
// holds at once, the workspace layout (tile counters, then partial tiles), and the cooperative
// launch that guarantees every block of a grid is resident when blocks wait for each other.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "cuda_check.h"
#include "launch.cuh"
#include "shapes/work_split.h"

namespace gemm::shapes {

// SMs of the current device; 0 without one (--list on a machine without a GPU).
inline int device_sms() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error: no device is not a failure here
    return 0;
  }
  return sms;
}

// Blocks of `kernel` that one SM holds at once with this block size and shared memory (the
// occupancy calculator), cached per kernel; 0 without a device.
inline int blocks_per_sm(const void* kernel, int threads, std::size_t smem) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, std::size_t>, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(kernel, smem * 4096 + std::size_t(threads));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (device_sms() == 0) return 0;
  if (smem > kDefaultSmemPerBlock) allow_dynamic_smem(kernel, smem);
  int blocks = 0;
  GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  return cache[key] = blocks;
}

// Resident blocks of the whole device (0 without a device).
inline std::int64_t resident_blocks(const void* kernel, int threads, std::size_t smem) {
  return std::int64_t(blocks_per_sm(kernel, threads, smem)) * device_sms();
}

// The workspace of a split: 2 counters per tile (arrivals, departures), then the partial tiles,
// 256-byte aligned.
struct SplitWorkspace {
  std::int64_t tiles = 0;
  std::size_t partial_bytes = 0;

  std::size_t counter_bytes() const {
    return std::size_t(div_up(std::int64_t(2 * sizeof(unsigned)) * tiles, 256) * 256);
  }
  std::size_t bytes() const { return partial_bytes == 0 ? 0 : counter_bytes() + partial_bytes; }
  static unsigned* counters(void* workspace) { return static_cast<unsigned*>(workspace); }
  template <typename T>
  T* partials(void* workspace) const {
    return reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + counter_bytes());
  }
};

// A launch whose blocks all run at once, or an error (cudaErrorCooperativeLaunchTooLarge): the
// precondition of blocks that wait for each other.
template <typename... KernelArgs, typename... Args>
void launch_cooperative(const LaunchPlan& plan, cudaStream_t stream, void (*kernel)(KernelArgs...),
                        Args... args) {
  if (plan.dynamic_smem_bytes > kDefaultSmemPerBlock)
    allow_dynamic_smem(reinterpret_cast<const void*>(kernel), plan.dynamic_smem_bytes);
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = to_dim3(plan.grid);
  config.blockDim = to_dim3(plan.block);
  config.dynamicSmemBytes = plan.dynamic_smem_bytes;
  config.stream = stream;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  GEMM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<KernelArgs>(args)...));
}

// A workspace that is needed and missing is a caller's error, named before anything launches.
inline void require_workspace(const Operands& ops, std::size_t bytes, const char* family) {
  if (bytes > 0 && (ops.workspace == nullptr || ops.workspace_bytes < bytes))
    throw std::invalid_argument(std::string(family) + ": needs a workspace of " +
                                std::to_string(bytes) + " bytes for " + ops.shape.to_string() +
                                " (Operands::workspace)");
}

// The workspace of K cut into `slices` (one M x N matrix of T each) over `tiles` tiles; none for
// one slice.
template <typename T>
SplitWorkspace matrix_split_workspace(std::int64_t tiles, int slices, const GemmShape& s) {
  SplitWorkspace w;
  w.tiles = tiles;
  w.partial_bytes = slices > 1 ? std::size_t(slices) * s.m * s.n * sizeof(T) : 0;
  return w;
}

// What the kernels of such a split take from the workspace: the slices' matrices and the tile
// counters (none for one slice: the blocks store C).
template <typename T>
struct MatrixSplit {
  MatrixShares<T> shares;
  unsigned* counters = nullptr;
};
template <typename T>
MatrixSplit<T> matrix_split(const Operands& ops, const SplitWorkspace& w, int slices,
                            const char* family) {
  require_workspace(ops, w.bytes(), family);
  const GemmShape& s = ops.shape;
  MatrixSplit<T> m{{nullptr, s.m * s.n, int(s.n), slices, 0, 0}, nullptr};
  if (slices > 1) {
    m.shares.base = w.partials<T>(ops.workspace);
    m.counters = SplitWorkspace::counters(ops.workspace);
  }
  return m;
}

// Launches a split's kernel; `all_blocks` (its blocks wait for each other) when the grid fits on
// the device at once, and then cooperatively, which the driver refuses otherwise. The kernel's
// last argument says which.
template <typename... KernelArgs, typename... Args>
void launch_split(const LaunchPlan& plan, cudaStream_t stream, void (*kernel)(KernelArgs...),
                  bool split, Args... args) {
  const bool all_blocks =
      split && plan.grid.count() <=
                   resident_blocks(plan.kernel, int(plan.block.count()), plan.dynamic_smem_bytes);
  if (all_blocks)
    launch_cooperative(plan, stream, kernel, args..., true);
  else
    launch(plan, stream, kernel, args..., false);
}

}  // namespace gemm::shapes
