// Each kernel family appends its variants, in study order. Called only by the registry.
#pragma once

#include <vector>

#include "variant.h"

namespace gemm {

void add_cpu_variants(std::vector<Variant>& out);
void add_naive_variants(std::vector<Variant>& out);
void add_grid_stride_variants(std::vector<Variant>& out);
void add_shared_tiled_variants(std::vector<Variant>& out);
void add_shared_dynamic_variants(std::vector<Variant>& out);
void add_shared_register_variants(std::vector<Variant>& out);
void add_cublas_variants(std::vector<Variant>& out);

}  // namespace gemm
