// split_k_wgmma: split-K (split_k.cu) over the wgmma + TMA mainloop (wgmma_splits.cuh), with
// wgmma_rows' 64- and 128-row tiles: for short M with long K, where even 64-row tiles leave most
// SMs without a tile (128 x 4096 x 14336: 64 tiles of 64 x 128 on 132 SMs; 200 x 5120 x 5120:
// 80 tiles of 128 x 128), and the mma.sync tiles that split_k_mma splits run the tensor pipe at
// about 60% of wgmma's rate. slices:0 takes as many slices as give one wave of resident blocks
// (one block per SM), at least 4 k-tiles each; slices:S asks for S (tuning instances).
//
// SASS: HGMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "shapes/wgmma_splits.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;

constexpr WgmmaTmaConfig kConfigs[] = {
    {.bm = 64, .bn = 128, .stages = 6, .role = Role::none},
    {.bm = 64, .bn = 64, .stages = 8, .role = Role::none},
    {.bm = 128, .bn = 128, .stages = 4, .role = Role::none},
};

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  static_assert(C.bm == 64 || C.bm == 128, "wgmma_rows' tiles: 64 or 128 rows of C");
  using Split = WgSplitK<C>;
  for (int slices : {0, 2, 4, 8, 16}) {
    VariantBuilder b = tensor::wgmma_variant("split_k_wgmma", C, {{"slices", slices}});
    b.role(slices == 0 ? Role::none : Role::sweep)
        .origin("wgmma.mma_async m64n" + std::to_string(C.bm) +
                "k8 tf32 with TMA tiles on mbarriers (wgmma_rows' block), K cut into slices");
    out.push_back(wg_split_variant(
        std::move(b), [slices](const GemmShape& s) { return Split::plan(s, slices); },
        [slices](const Operands& ops, cudaStream_t stream) { Split::run(ops, stream, slices); },
        [slices](const GemmShape& s) { return Split::workspace_bytes(s, slices); },
        "K cut into slices (slices:0: as many as fill the SMs once); partial tiles in the "
        "workspace after the padded operand copies, added in slice order by the consumer "
        "warpgroups"));
  }
}

}  // namespace

void add_split_k_wgmma_variants(std::vector<Variant>& out) {
  for_each_entry<kConfigs>([&]<auto C>() { add_config<C>(out); });
}

}  // namespace gemm
