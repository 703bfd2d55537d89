// cp.async pipeline: warptile's warp tiling fed by STAGES-deep cp.async copies
// (pipelined_kernel.cuh): global loads of the next k-tiles overlap the FMAs of this one, with one
// __syncthreads per k-tile. The representative takes any shape (a bounds-checked instance where
// the shape is not whole tiles); the `stages` sweep shows what depth buys.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_async_pipeline_variants(std::vector<Variant>& out) {
  // warptile's tiles, 4 stages, row-major block order; the depth sweep (FP32, whole tiles) runs
  // 2 and 3 stages next to it.
  constexpr PipelinedConfig fp32 = kPipelinedRungFp32, fp64 = kPipelinedRungFp64;
  add_pipelined_rung<fp32, fp64, fp32.with_stages(2), fp32.with_stages(3)>(
      out, "async_pipeline", "stages sweep: whole tiles only");
}

}  // namespace gemm
