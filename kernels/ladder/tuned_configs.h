// The tuned rung's configurations, for the tests (kernels/ladder/tuned.cu).
#pragma once

#include <vector>

#include "variant.h"

namespace gemm {

// The tuned rung's configurations (tuned_configs.inc; one that won at several sizes once), each
// taking any shape in its three modes. `tuned` runs the one of the size nearest a shape; the
// tests run them all.
std::vector<Variant> tuned_configurations();

}  // namespace gemm
