// Rung 6, cp.async pipeline: rung 5's warp tiling fed by STAGES-deep cp.async copies
// (pipelined_kernel.cuh): global loads of the next k-tiles overlap the FMAs of this one, with one
// __syncthreads per k-tile. The representative takes any shape (a bounds-checked instance where
// the shape is not whole tiles); the `stages` sweep shows what depth buys.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_async_pipeline_variants(std::vector<Variant>& out) {
  // Rung 5's tiles, 3 stages, row-major block order; the depth sweep (FP32, whole tiles) runs 2
  // and 4 stages next to it.
  constexpr PipelinedConfig fp32{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8,
                                 .tn = 8, .stages = 3, .group = 0, .minb = 2};
  constexpr PipelinedConfig fp64{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8,
                                 .tn = 4, .stages = 3, .group = 0, .minb = 1};
  add_pipelined_rung<fp32, fp64, fp32.with_stages(2), fp32.with_stages(4)>(
      out, "async_pipeline", "stages sweep: whole tiles only");
}

}  // namespace gemm
