// The tensor-core families (kernels/tensor/*.cu), called in ladder order by register.cpp.
#pragma once

#include <vector>

#include "variant.h"

namespace gemm {

// Ladder positions, continuing the CUDA-core ladder of design.md ("The ladder above the
// write-ups": 1-D blocking .. tuned are rungs 1-8). One place, so the order cannot drift.
inline constexpr int kRungMmaTf32 = 9;
inline constexpr int kRungMmaTf32Pipelined = 10;
inline constexpr int kRungWgmmaTma = 11;
inline constexpr int kRungWgmmaPersistent = 12;
inline constexpr int kRungMmaFp64 = 13;
inline constexpr int kRungMmaFp64M16n8k16 = 14;

void add_mma_tf32_variants(std::vector<Variant>& out);
void add_mma_tf32_pipelined_variants(std::vector<Variant>& out);
void add_wgmma_tma_variants(std::vector<Variant>& out);
void add_wgmma_persistent_variants(std::vector<Variant>& out);
void add_mma_fp64_variants(std::vector<Variant>& out);
void add_mma_fp64_m16n8k16_variants(std::vector<Variant>& out);

}  // namespace gemm
