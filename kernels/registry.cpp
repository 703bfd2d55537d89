#include "families.h"

namespace gemm {

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> v;
    add_cublas_variants(v);  // first: every other variant is reported as a share of cuBLAS
    add_cpu_variants(v);
    add_naive_variants(v);
    add_grid_stride_variants(v);
    add_shared_tiled_variants(v);
    add_shared_dynamic_variants(v);
    add_shared_register_variants(v);
    add_ladder_variants(v);
    add_tensor_core_variants(v);
    return v;
  }();
  return variants;
}

}  // namespace gemm
