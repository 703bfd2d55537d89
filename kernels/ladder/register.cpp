// The CUDA-core ladder families, in ladder order: one line per family.
#include "families.h"
#include "ladder_families.h"

namespace gemm {

void add_ladder_variants(std::vector<Variant>& out) {
  add_blocktile_1d_variants(out);
  add_blocktile_2d_variants(out);
  add_vectorized_variants(out);
  add_conflict_free_variants(out);
  add_warptile_variants(out);
  add_async_pipeline_variants(out);
  add_rasterized_variants(out);
  add_mbarrier_stages_variants(out);
  add_tuned_variants(out);
}

}  // namespace gemm
