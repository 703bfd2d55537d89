// TF32 wgmma fed by TMA (sm_90a): tiles come into shared memory by cp.async.bulk.tensor,
// completing on mbarriers, STAGES k-tiles deep; warpgroups multiply them with wgmma.mma_async.
//
// The operand problem. wgmma takes TF32 operands from shared memory only K-major ("tf32 requires
// K-major for both A and B": the transpose immediates exist for 16-bit types alone). A (M x K,
// row-major) is K-major; B (K x N, row-major) is N-major, and no tensor-map trick makes TMA
// transpose 4-byte elements (the box's inner dimension is always the contiguous one). Kernels may
// not allocate a transposed copy. What the ISA does allow is an A operand in *registers*, where
// the layout in memory no longer matters. So each block computes the transposed tile
//     C^T (N x M) = B^T (N x K) * A^T (K x M):
//   - wgmma's A operand is B^T, 64 rows (= columns n of C) per consumer warpgroup, loaded by the
//     threads from the TMA tile of B (n contiguous) into the m16n8k8-style fragment;
//   - wgmma's B operand is A^T, i.e. the TMA tile of A exactly as it lands (K-major, 128-byte
//     swizzle), described to wgmma by a matrix descriptor; its "N" is BM (128 or 256);
//   - the accumulators hold C^T; each thread writes its elements of C directly.
// Shared-memory traffic is what an all-shared-memory wgmma would cost: the fragment loads replace
// the tensor core's own reads of the A operand.
//
// Fragment loads of B^T. Lane (g, t) of warp w needs, per k8 step, the elements (row g, k t) and
// (g + 8, t), (g, t + 4), (g + 8, t + 4). Rows of the fragment are free to map to any columns n
// of B (the accumulator rows follow the same map), so rows g and g + 8 are given two adjacent
// columns: one 8-byte load per k. The B tile arrives as 32 x 32 boxes, 128-byte swizzled (chunk
// c of row k stored at chunk c ^ (k % 8)); the pairs of a warp are spread as
//     n = 8 (w % 2) + 2 (g % 2) + 16 ((g / 2) % 2) + 4 (g / 4)   inside box 2 * warpgroup + w / 2
// so that a half-warp's 4 rows k = t x 4 pairs fall on 16 distinct (chunk, half) slots after the
// swizzle: conflict-free 8-byte loads.
//
// Block: BN / 64 consumer warpgroups (warps 0 .. 4c-1, so each starts at a warp index divisible
// by 4) and one producer warpgroup, one thread of which issues the copies (a whole warpgroup, not
// a warp, because registers are handed out per warpgroup: setmaxnreg gives the producer 40 (24)
// registers and the consumers the rest, 232 (120) each, where the 256 x 128 tile's 128
// accumulators need them; without it ptxas caps every thread at 168 and serializes the wgmmas).
// The producer thread waits for a stage's "empty"
// barrier (one arrival per consumer warp), announces the stage's bytes on its "full" barrier and
// issues one TMA for A (BM x 32) and BN / 32 for B (32 x 32 boxes). Consumers wait on "full",
// load their fragments, issue the 4 wgmmas of the k-tile, wait for them, and release the stage.
// The two or more consumer warpgroups interleave on the tensor pipe: while one loads fragments,
// the other's wgmmas run.
//
// Tails: TMA zero-fills outside the tensor (M, N, K tails), stores are bounds-checked. TMA needs
// 16-byte row strides: where K or N is not a multiple of 4 the variant runs on copies of A (B
// and C) with padded rows in the workspace (tma_padded.cuh), the copies inside its time.
//
// SASS: HGMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "wgmma_tma_kernel.cuh"

namespace gemm::tensor {
namespace {

// The configurations: the representative first. It has the stages of mma_tf32_pipelined below
// it (and its 256 x 128 block tile), so that the step changes the technique alone.
constexpr WgmmaTmaConfig kConfigs[] = {
    {.bm = 256, .bn = 128, .stages = 3, .role = Role::representative},
    {.bm = 256, .bn = 128, .stages = 4},
    {.bm = 128, .bn = 128, .stages = 4},
    // No BN = 256: four consumer warpgroups plus the producer (640 threads) at the kernel's
    // entry register count exceed the register file; on an H100 that launch never finished.
};

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  const auto grid = [](const GemmShape& s) {
    return Dim3{ceil_div(s.n, C.bn), ceil_div(s.m, C.bm), 1};
  };
  out.push_back(wgmma_config_variant<C>(
      "wgmma_tma", {}, grid,
      wgmma_tma_kernel<C.bm, C.bn, C.stages, C.producer_registers(), C.consumer_registers()>,
      [](VariantBuilder& b) {
        b.origin("wgmma.mma_async m64n" + std::to_string(C.bm) +
                 "k8 tf32 (A operand in registers), TMA tiles on mbarriers, producer warpgroup");
      }));
}

}  // namespace
}  // namespace gemm::tensor

namespace gemm {

void add_wgmma_tma_variants(std::vector<Variant>& out) {
  for_each_entry<tensor::kConfigs>([&]<auto C>() { tensor::add_config<C>(out); });
}

}  // namespace gemm
