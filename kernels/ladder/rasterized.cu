// Rung 7, rasterization: rung 6 with a swizzled block order (block_tile_coords in
// ladder_common.cuh): blocks resident together cover GROUP rows of tiles column by column, so
// they share GROUP row panels of A and a few column panels of B in L2 instead of streaming all of
// B for every band of rows. Shows at large shapes, in the L2 hit rate and DRAM bytes.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_rasterized_variants(std::vector<Variant>& out) {
  // Rung 6's configurations in groups of 8 block rows; the group sweep (FP32, whole tiles) runs
  // 4 and 16 next to it.
  constexpr PipelinedConfig fp32{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8,
                                 .tn = 8, .stages = 3, .group = 8, .minb = 2};
  constexpr PipelinedConfig fp64{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8,
                                 .tn = 4, .stages = 3, .group = 8, .minb = 1};
  add_pipelined_rung<fp32, fp64, fp32.with_group(4), fp32.with_group(16)>(
      out, "rasterized", "group sweep: whole tiles only");
}

}  // namespace gemm
