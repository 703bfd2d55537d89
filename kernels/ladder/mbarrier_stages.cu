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
  auto representative = [&](VariantBuilder b) {
    out.push_back(b.representative().note("any shape: an unchecked fast path on whole tiles").build());
  };
  representative(pipelined_variant<float, 128, 128, 8, 32, 64, 8, 8, 4, 8, 2, -1, true>("mbarrier_stages"));
  representative(pipelined_variant<double, 128, 64, 8, 32, 32, 8, 4, 4, 8, 1, -1, true>("mbarrier_stages"));
}

}  // namespace gemm
