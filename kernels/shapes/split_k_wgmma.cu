// split_k_wgmma: split-K (split_k.cu) over the wgmma + TMA mainloop (wgmma_splits.cuh), with
// wgmma_rows' 64- and 128-row tiles: for short M with long K, where even 64-row tiles leave most
// SMs without a tile (128 x 4096 x 14336: 64 tiles of 64 x 128 on 132 SMs; 200 x 5120 x 5120:
// 80 tiles of 128 x 128), and the mma.sync tiles that split_k_mma splits run the tensor pipe at
// two thirds of wgmma's rate (HMMA.1688 1,363 and HGMMA 2,047 FLOP per clock per SM on the H100:
// reports/h100-80gb-hbm3/pipe_peaks.json). slices:0 takes as many slices as give one wave of resident blocks
// (one block per SM), at least 4 k-tiles each, 16 where the tiles alone cover three quarters of
// the SMs (work_split.h: min_k_tiles_per_slice); slices:S asks for S (tuning instances).
//
// SASS: HGMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "shapes/wgmma_splits.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  for (int slices : {0, 2, 4, 8, 16})
    out.push_back(wg_split_variant<C, WgSplitK<C>>(
        "split_k_wgmma", slices, slices == 0 ? Role::none : Role::sweep, "K cut into slices",
        "K cut into slices (slices:0: as many as fill the SMs once); partial tiles in the "
        "workspace after the padded operand copies, added in slice order by the consumer "
        "warpgroups"));
}

}  // namespace

void add_split_k_wgmma_variants(std::vector<Variant>& out) {
  for_each_entry<kWgmmaRowTiles>([&]<auto C>() { add_config<C>(out); });
}

}  // namespace gemm
