// Each kernel family appends its variants, in study order. Called only by the registry.
#pragma once

#include <vector>

#include "tags.h"
#include "variant.h"

namespace gemm {

void add_cpu_variants(std::vector<Variant>& out);
void add_naive_variants(std::vector<Variant>& out);
void add_grid_stride_variants(std::vector<Variant>& out);
void add_shared_tiled_variants(std::vector<Variant>& out);
void add_shared_dynamic_variants(std::vector<Variant>& out);
void add_shared_register_variants(std::vector<Variant>& out);
void add_cublas_variants(std::vector<Variant>& out);

// The rungs above the write-ups: kernels/ladder/register.cpp and kernels/tensor/register.cpp.
void add_ladder_variants(std::vector<Variant>& out);
void add_tensor_core_variants(std::vector<Variant>& out);

}  // namespace gemm
