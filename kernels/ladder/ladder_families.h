// The CUDA-core ladder's families, in rung order (kernels/ladder/*.cu), called by register.cpp.
#pragma once

#include <vector>

#include "variant.h"

namespace gemm {

void add_blocktile_1d_variants(std::vector<Variant>& out);    // rung 1
void add_blocktile_2d_variants(std::vector<Variant>& out);    // rung 2
void add_vectorized_variants(std::vector<Variant>& out);      // rung 3
void add_conflict_free_variants(std::vector<Variant>& out);   // rung 4
void add_warptile_variants(std::vector<Variant>& out);        // rung 5
void add_async_pipeline_variants(std::vector<Variant>& out);  // rung 6
void add_rasterized_variants(std::vector<Variant>& out);      // rung 7
void add_mbarrier_stages_variants(std::vector<Variant>& out); // rung 8
void add_tuned_variants(std::vector<Variant>& out);           // rung 9

}  // namespace gemm
