// Rasterization: async_pipeline with a swizzled block order (block_tile_coords in
// ladder_common.cuh): blocks resident together cover GROUP rows of tiles column by column, so
// they share GROUP row panels of A and a few column panels of B in L2 instead of streaming all of
// B for every band of rows. Shows at large shapes, in the L2 hit rate and DRAM bytes.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_rasterized_variants(std::vector<Variant>& out) {
  // async_pipeline's configurations in groups of 8 block rows; the group sweep (FP32, whole
  // tiles) runs 4 and 16 next to it.
  constexpr PipelinedConfig fp32 = kPipelinedRungFp32.with_group(8);
  constexpr PipelinedConfig fp64 = kPipelinedRungFp64.with_group(8);
  add_pipelined_rung<fp32, fp64, fp32.with_group(4), fp32.with_group(16)>(
      out, "rasterized", "group sweep: whole tiles only");
}

}  // namespace gemm
