// stream_k_wgmma: stream-K (stream_k.cu; Osama et al., PPoPP 2023) over the wgmma + TMA mainloop
// (wgmma_splits.cuh): whole waves of output tiles run one per block, and the tiles of the last,
// partial wave (with the full wave before it) are shared by one wave of blocks that each take an
// equal range of their k-tiles. At 200 x 5120 x 5120 in 128 x 128 tiles (80 tiles on 132 SMs, one
// block each) the 80 tiles' k-tiles are spread over 132 blocks. The producer's k-tile count
// runs on across a block's segments, as a persistent block's does across its tiles
// (wgmma_persistent.cu), so a segment's first stages load while the consumers store the last.
//
// SASS: HGMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "shapes/wgmma_splits.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;

// The 128- and the 64-row tile with two consumer warpgroups (wgmma_row_tiles.cuh).
constexpr WgmmaTmaConfig kConfigs[] = {kWgmmaRowTiles[2], kWgmmaRowTiles[0]};

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  out.push_back(wg_split_variant<C, WgStreamK<C>>(
      "stream_k_wgmma", -1, Role::none, "scheduled by stream-K",
      "one wave of blocks shares the last waves' tiles by k-tiles; partial tiles in the "
      "workspace after the padded operand copies, added in k order by the consumer warpgroups"));
}

}  // namespace

void add_stream_k_wgmma_variants(std::vector<Variant>& out) {
  for_each_entry<kConfigs>([&]<auto C>() { add_config<C>(out); });
}

}  // namespace gemm
