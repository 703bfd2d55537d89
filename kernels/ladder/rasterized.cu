// Rung 7, rasterization: rung 6 with a swizzled block order (block_tile_coords in
// ladder_common.cuh): blocks resident together cover GROUP rows of tiles column by column, so
// they share GROUP row panels of A and a few column panels of B in L2 instead of streaming all of
// B for every band of rows. Shows at large shapes, in the L2 hit rate and DRAM bytes.
#include "pipelined_kernel.cuh"

namespace gemm {
namespace {

// Rung 6's configurations in groups of 8 block rows; the group sweep (FP32, whole tiles) runs 4
// and 16 next to it.
constexpr PipelinedConfig kFp32{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8,
                                .tn = 8, .stages = 3, .group = 8, .minb = 2};
constexpr PipelinedConfig kFp64{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8,
                                .tn = 4, .stages = 3, .group = 8, .minb = 1};
constexpr PipelinedConfig with_group(PipelinedConfig c, int group) {
  c.group = group;
  return c;
}

}  // namespace

void add_rasterized_variants(std::vector<Variant>& out) {
  const char* any = "any shape: an unchecked fast path on whole tiles";
  const char* sweep = "group sweep: whole tiles only";
  out.push_back(pipelined_variant<float, kFp32>("rasterized").representative().note(any).build());
  out.push_back(pipelined_variant<double, kFp64>("rasterized").representative().note(any).build());
  out.push_back(pipelined_variant<float, with_group(kFp32, 4), Shapes::whole_tiles>("rasterized")
                    .sweep().note(sweep).build());
  out.push_back(pipelined_variant<float, with_group(kFp32, 16), Shapes::whole_tiles>("rasterized")
                    .sweep().note(sweep).build());
}

}  // namespace gemm
