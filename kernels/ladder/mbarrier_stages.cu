// Rung 8, mbarrier stages: rung 7 with its stages handed over on mbarriers instead of a
// __syncthreads per k-tile (pipelined_kernel.cuh, MBAR). Each stage has a "landed" barrier that
// every thread's cp.async copies arrive on, and a "freed" barrier every thread arrives on after
// its last shared read of the stage; a warp waits only for the k-tile it is about to read and,
// before refilling a stage, for the reads of the k-tile two back. So a warp may run up to a
// k-tile ahead of the slowest one instead of meeting it at every barrier, and one block per SM
// no longer stalls all its warps at once: the stall on the block-wide barrier goes (stall_barrier),
// and the larger block tiles this allows cut the L2 -> SM traffic per FMA (to 2/3 at 128 x 128
// against 64 x 128). 4 stages: rung 7's two k-tiles in flight plus the one of slack.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_mbarrier_stages_variants(std::vector<Variant>& out) {
  // Rung 7's tiles and block order, 4 stages on mbarriers.
  constexpr PipelinedConfig fp32{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8,
                                 .tn = 8, .stages = 4, .group = 8, .minb = 2, .mbar = true};
  constexpr PipelinedConfig fp64{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8,
                                 .tn = 4, .stages = 4, .group = 8, .minb = 1, .mbar = true};
  add_pipelined_rung<fp32, fp64>(out, "mbarrier_stages");
}

}  // namespace gemm
