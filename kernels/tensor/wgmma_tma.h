// Host-side facts of the wgmma_tma family, shared by its sm_90a kernels (wgmma_tma.cu, built only
// with GEMM_SM90A) and its registration (wgmma_tma_variants.cpp, always built), so the variants
// exist, with their parameters, whether or not the kernels were compiled.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "variant.h"

namespace gemm::tensor {

// One configuration: a block computes a BM x BN tile of C with BN / 64 consumer warpgroups and
// one producer warpgroup, through STAGES k-tiles of BK = 32 in shared memory.
struct WgmmaTmaConfig {
  int bm;
  int bn;
  int stages;
  bool representative;

  static constexpr int bk = 32;  // one 128-byte swizzle row of FP32 along K
  constexpr int consumers() const { return bn / 64; }
  constexpr int threads() const { return consumers() * 128 + 128; }
  // Registers per thread after setmaxnreg: the producer keeps few, the consumers share the rest
  // of the 64K-register file (multiples of 8).
  constexpr int producer_registers() const { return consumers() <= 2 ? 40 : 24; }
  constexpr int consumer_registers() const {
    return ((65536 - 128 * producer_registers()) / (128 * consumers()) / 8) * 8 > 256
               ? 256
               : ((65536 - 128 * producer_registers()) / (128 * consumers()) / 8) * 8;
  }
  constexpr std::size_t stage_bytes() const {
    return std::size_t(bm) * bk * 4 + std::size_t(bk) * bn * 4;
  }
  // The stages, the full/empty mbarriers, and 1 KB of slack to align the tiles to 1024 bytes
  // (the 128-byte swizzle pattern repeats every 1024 bytes and wgmma assumes it starts aligned).
  constexpr std::size_t smem_bytes() const {
    return stages * stage_bytes() + 2 * stages * 8 + 1024;
  }
};

inline constexpr WgmmaTmaConfig kWgmmaTmaConfigs[] = {
    {256, 128, 4, true},
    {128, 128, 4, false},
    {256, 128, 3, false},
    // No BN = 256: four consumer warpgroups plus the producer (640 threads) at the kernel's
    // entry register count exceed the register file; on an H100 that launch never finished.
};
inline constexpr int kWgmmaTmaConfigCount = sizeof(kWgmmaTmaConfigs) / sizeof(kWgmmaTmaConfigs[0]);

// The persistent rung (wgmma_persistent.cu): the same block tile, one block per SM walking the
// tiles in groups of `group` block rows.
struct WgmmaPersistentConfig {
  WgmmaTmaConfig tile;
  int group;
  bool representative;
};

inline constexpr WgmmaPersistentConfig kWgmmaPersistentConfigs[] = {
    {{256, 128, 4, false}, 8, true},
    {{256, 128, 4, false}, 16, false},
    {{128, 128, 4, false}, 8, false},
};
inline constexpr int kWgmmaPersistentConfigCount =
    sizeof(kWgmmaPersistentConfigs) / sizeof(kWgmmaPersistentConfigs[0]);

// The facts the wgmma rungs share: FP32 storage with TF32 arithmetic, the tags of a representative
// or a tuning instance, the C^T note, and the preconditions (sm_90a on a 9.0 device, TMA's
// 16-byte row strides).
Variant wgmma_variant(const std::string& family, std::vector<Param> fields, bool representative);

// Blocks of the persistent grid for an M x N output: one per SM of the current device (one
// block fits an SM), at most one per tile; without a device, one per tile.
int wgmma_persistent_blocks(const WgmmaPersistentConfig& c, int M, int N);

// A family's sm_90a entry points: the kernel of configuration `config` (an index into the
// family's table above) and its launch on the variant's plan. Defined in wgmma_tma.cu and
// wgmma_persistent.cu; null where the sm_90a object library was not built.
struct WgmmaEntryPoints {
  const void* (*kernel)(int config);
  void (*launch)(int config, const LaunchPlan& plan, const Operands& ops, cudaStream_t stream);
};
#ifdef GEMM_HAVE_SM90A
const void* wgmma_tma_kernel(int config);
void wgmma_tma_launch(int config, const LaunchPlan& plan, const Operands& ops, cudaStream_t stream);
const void* wgmma_persistent_kernel(int config);
void wgmma_persistent_launch(int config, const LaunchPlan& plan, const Operands& ops,
                             cudaStream_t stream);
inline constexpr WgmmaEntryPoints kWgmmaTmaEntryPoints{wgmma_tma_kernel, wgmma_tma_launch};
inline constexpr WgmmaEntryPoints kWgmmaPersistentEntryPoints{wgmma_persistent_kernel,
                                                             wgmma_persistent_launch};
#else
inline constexpr WgmmaEntryPoints kWgmmaTmaEntryPoints{nullptr, nullptr};
inline constexpr WgmmaEntryPoints kWgmmaPersistentEntryPoints{nullptr, nullptr};
#endif

// The plan and run of configuration `config` of a family: `tile`'s block and shared memory,
// `grid` for the shape, the family's kernel. Without sm_90a the run throws (the variants refuse
// every shape before it could be called).
void set_wgmma_launch(Variant& v, const WgmmaTmaConfig& tile, int config,
                      std::function<Dim3(const GemmShape&)> grid, WgmmaEntryPoints entry);

}  // namespace gemm::tensor
