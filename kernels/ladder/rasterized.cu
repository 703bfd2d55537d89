// Rung 7, rasterization: rung 6 with a swizzled block order (block_tile_coords in
// ladder_common.cuh): blocks resident together cover GROUP rows of tiles column by column, so
// they share GROUP row panels of A and a few column panels of B in L2 instead of streaming all of
// B for every band of rows. Shows at large shapes, in the L2 hit rate and DRAM bytes.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_rasterized_variants(std::vector<Variant>& out) {
  auto representative = [&](VariantBuilder b) {
    out.push_back(b.representative().note("any shape: an unchecked fast path on whole tiles").build());
  };
  auto sweep = [&](VariantBuilder b) {
    out.push_back(b.sweep().note("group sweep: whole tiles only").build());
  };
  representative(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 8, 2>("rasterized"));
  representative(pipelined_variant<double, 128, 64, 8, 32, 32, 8, 4, 3, 8, 1>("rasterized"));
  sweep(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 4, 2, 0>("rasterized"));
  sweep(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 16, 2, 0>("rasterized"));
}

}  // namespace gemm
