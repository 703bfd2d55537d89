// Rung 6, cp.async pipeline: rung 5's warp tiling fed by STAGES-deep cp.async copies
// (pipelined_kernel.cuh): global loads of the next k-tiles overlap the FMAs of this one, with one
// __syncthreads per k-tile. The representative takes any shape (a bounds-checked instance where
// the shape is not whole tiles); the `stages` sweep shows what depth buys.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_async_pipeline_variants(std::vector<Variant>& out) {
  auto representative = [&](VariantBuilder b) {
    out.push_back(b.representative().note("any shape: an unchecked fast path on whole tiles").build());
  };
  auto sweep = [&](VariantBuilder b) {
    out.push_back(b.sweep().note("stages sweep: whole tiles only").build());
  };
  // Representatives: rung 5's tiles, 3 stages, row-major block order.
  representative(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 3, 0, 2>("async_pipeline"));
  representative(pipelined_variant<double, 128, 64, 8, 32, 32, 8, 4, 3, 0, 1>("async_pipeline"));
  // The depth sweep (FP32, whole tiles): 2 and 4 stages next to the representative's 3.
  sweep(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 2, 0, 2, 0>("async_pipeline"));
  sweep(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 4, 0, 2, 0>("async_pipeline"));
}

}  // namespace gemm
