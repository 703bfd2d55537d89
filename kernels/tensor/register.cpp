// The tensor-core families, in ladder order: one line per family.
#include "families.h"
#include "tensor_families.h"

namespace gemm {

void add_tensor_core_variants(std::vector<Variant>& out) {
  add_mma_tf32_variants(out);
  add_mma_tf32_pipelined_variants(out);
  add_wgmma_tma_variants(out);
  add_wgmma_persistent_variants(out);
  add_mma_fp64_variants(out);
  add_mma_fp64_m16n8k16_variants(out);
}

}  // namespace gemm
