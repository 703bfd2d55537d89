// stream_k: the pipelined CUDA-core kernel (rungs 6-9) and the mma.sync tiles (TF32, FP64
// DMMA) scheduled by stream-K (Osama et al., PPoPP 2023; work_split.h): whole waves of output
// tiles run one per block as usual, and the tiles of the last, partial wave (with the full wave
// before it) are shared by one wave of blocks that each take an equal range of their k-tiles. A
// 4097 x 4097 GEMM in 128 x 128 tiles is 33 x 33 = 1089 tiles: 8.25 waves on 132 SMs at one block
// each, whose last quarter-wave leaves 3/4 of the SMs idle for a whole tile's time; here 165
// tiles' k-tiles are spread over 132 blocks, 1.25 tiles each.
//
// A tile split between blocks is finished by the segment that arrives last: the segments'
// partial tiles (per-block slots in the workspace) are added in k order, so the result is the
// same bit for bit in every run. No block waits for another. The loop over segments keeps more
// state than a rung's kernel: one block per SM, where the rung holds two, rather than spill.
#include "shapes/split_variants.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;
using tensor::MmaSyncConfig;

constexpr PipelinedConfig kFp32Wide{.bm = 128, .bn = 128, .bk = 32, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                                    .stages = 3, .group = 0, .minb = 2, .mbar = true};
constexpr MmaSyncConfig kTf32Wide{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                  .min_blocks = 2};
constexpr MmaSyncConfig kFp64Wide{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 4};

const char* const kNote =
    "one wave of blocks shares the last waves' tiles by k-tiles; partial tiles in the workspace, "
    "added in k order";

}  // namespace

void add_stream_k_variants(std::vector<Variant>& out) {
  out.push_back(pipelined_split_variant<StreamKSchedule, float, kFp32Wide, 1>("stream_k", -1)
                    .note(kNote)
                    .build());
  out.push_back(mma_split_variant<StreamKSchedule, float, tensor::Tf32PipeTile, kTf32Wide, 1>(
                    "stream_k", -1, {{"mma", 1}})
                    .note(kNote)
                    .build());
  out.push_back(mma_split_variant<StreamKSchedule, double, tensor::Fp64K16Tile, kFp64Wide, 1>(
                    "stream_k", -1, {{"mma", 1}})
                    .note(kNote)
                    .build());
}

}  // namespace gemm
