// mbarrier stages: rasterized with its stages handed over on mbarriers instead of a
// __syncthreads per k-tile (pipelined_kernel.cuh, MBAR). Each stage has a "landed" barrier that
// every thread's cp.async copies arrive on, and a "freed" barrier every thread arrives on after
// its last shared read of the stage; a warp waits only for the k-tile it is about to read and,
// before refilling a stage, for the reads of the k-tile two back. So a warp may run up to a
// k-tile ahead of the slowest one instead of meeting it at every barrier, and one block per SM
// no longer stalls all its warps at once: the stall on the block-wide barrier goes (stall_barrier),
// and the larger block tiles this allows cut the L2 -> SM traffic per FMA (to 2/3 at 128 x 128
// against 64 x 128). The same 4 stages as rasterized: the stage a warp may run ahead into is one
// that a barrier pipeline keeps a k-tile in flight in, so 2 k-tiles are in flight against its 3.
#include "pipelined_kernel.cuh"

namespace gemm {

void add_mbarrier_stages_variants(std::vector<Variant>& out) {
  // rasterized's configurations, stages on mbarriers.
  constexpr PipelinedConfig fp32 = kPipelinedRungFp32.with_group(8).with_mbarriers();
  constexpr PipelinedConfig fp64 = kPipelinedRungFp64.with_group(8).with_mbarriers();
  add_pipelined_rung<fp32, fp64>(out, "mbarrier_stages");
}

}  // namespace gemm
