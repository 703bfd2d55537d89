// The structured facts of a variant at one shape, as the JSON object each benchmark entry
// carries: family, parameters as separate fields, tags, rung, launch geometry and resources.
#pragma once

#include <optional>
#include <string>

#include "variant.h"

namespace gemm {

// Elements of C per thread: declared by the variant, or M*N over the threads of the grid.
double outputs_per_thread(const Variant& v, const LaunchPlan& plan, const GemmShape& shape);

// with_device: registers and shared memory come from cudaFuncGetAttributes (needs a GPU).
std::string variant_facts_json(const Variant& v, const GemmShape& shape, bool end_to_end,
                               bool with_device);

}  // namespace gemm
