// Rung 6, cp.async pipeline: rung 5's warp tiling fed by STAGES-deep cp.async copies
// (pipelined_kernel.cuh): global loads of the next k-tiles overlap the FMAs of this one, with one
// __syncthreads per k-tile. The representative takes any shape (a bounds-checked instance where
// the shape is not whole tiles); the `stages` sweep shows what depth buys.
#include "pipelined_kernel.cuh"

namespace gemm {
namespace {

// Rung 5's tiles, 3 stages, row-major block order; the depth sweep (FP32, whole tiles) runs 2
// and 4 stages next to it.
constexpr PipelinedConfig kFp32{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8,
                                .tn = 8, .stages = 3, .group = 0, .minb = 2};
constexpr PipelinedConfig kFp64{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8,
                                .tn = 4, .stages = 3, .group = 0, .minb = 1};
constexpr PipelinedConfig with_stages(PipelinedConfig c, int stages) {
  c.stages = stages;
  return c;
}

}  // namespace

void add_async_pipeline_variants(std::vector<Variant>& out) {
  const char* any = "any shape: an unchecked fast path on whole tiles";
  const char* sweep = "stages sweep: whole tiles only";
  out.push_back(pipelined_variant<float, kFp32>("async_pipeline").representative().note(any).build());
  out.push_back(pipelined_variant<double, kFp64>("async_pipeline").representative().note(any).build());
  out.push_back(pipelined_variant<float, with_stages(kFp32, 2), Shapes::whole_tiles>("async_pipeline")
                    .sweep().note(sweep).build());
  out.push_back(pipelined_variant<float, with_stages(kFp32, 4), Shapes::whole_tiles>("async_pipeline")
                    .sweep().note(sweep).build());
}

}  // namespace gemm
