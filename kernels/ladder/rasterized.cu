// Rung 7, rasterization: rung 6 with a swizzled block order (block_tile_coords in
// ladder_common.cuh): blocks resident together cover GROUP rows of tiles column by column, so
// they share GROUP row panels of A and a few column panels of B in L2 instead of streaming all of
// B for every band of rows. Shows at large shapes, in the L2 hit rate and DRAM bytes.
#include "families.h"
#include "ladder_families.h"
#include "pipelined_kernel.cuh"

namespace gemm {

void add_rasterized_variants(std::vector<Variant>& out) {
  auto add = [&](Variant v, bool representative) {
    set_ladder_facts(v, 7, "rasterization", "grouped block order (Triton matmul tutorial)",
                     v.outputs_per_thread, representative);
    v.note = representative ? "any shape: an unchecked fast path on whole tiles"
                            : "group sweep: whole tiles only";
    out.push_back(v);
  };
  add(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 8, 2>("rasterized"), true);
  add(pipelined_variant<double, 128, 64, 8, 32, 32, 8, 4, 3, 8, 1>("rasterized"), true);
  add(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 4, 2, 0>("rasterized"), false);
  add(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 16, 2, 0>("rasterized"), false);
}

}  // namespace gemm
