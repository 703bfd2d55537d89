// wgmma_rows: the wgmma + TMA block (kernels/tensor/wgmma_tma_kernel.cuh) with 64- and 128-row
// tiles, for short M (wgmma_row_tiles.cuh says why these tiles).
#include "shapes/wgmma_row_tiles.cuh"
#include "tensor/wgmma_tma_kernel.cuh"

namespace gemm {
namespace {

using tensor::WgmmaTmaConfig;

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  shapes::check_row_tile<C>();
  const auto grid = [](const GemmShape& s) {
    return Dim3{ceil_div(s.n, C.bn), ceil_div(s.m, C.bm), 1};
  };
  out.push_back(tensor::wgmma_config_variant<C>(
      "wgmma_rows", {}, grid,
      tensor::wgmma_tma_kernel<C.bm, C.bn, C.stages, C.producer_registers(), C.consumer_registers()>,
      [](VariantBuilder& b) {
        b.origin("wgmma.mma_async m64n" + std::to_string(C.bm) +
                 "k8 tf32 (A operand in registers), TMA tiles on mbarriers, producer warpgroup: "
                 "wgmma_tma's block with " + std::to_string(C.bm) + "-row tiles");
      }));
}

}  // namespace

void add_wgmma_rows_variants(std::vector<Variant>& out) {
  for_each_entry<shapes::kWgmmaRowTiles>([&]<auto C>() { add_config<C>(out); });
}

}  // namespace gemm
