// Host-side facts of the wgmma_tma family, shared by its sm_90a kernels (wgmma_tma.cu, built only
// with GEMM_SM90A) and its registration (wgmma_tma_variants.cpp, always built), so the variants
// exist, with their parameters, whether or not the kernels were compiled.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

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

#ifdef GEMM_HAVE_SM90A
// Defined in wgmma_tma.cu (sm_90a). `config` indexes kWgmmaTmaConfigs.
const void* wgmma_tma_kernel(int config);
void wgmma_tma_run(int config, const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream);
#endif

}  // namespace gemm::tensor
