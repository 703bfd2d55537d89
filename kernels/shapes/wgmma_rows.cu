// wgmma_rows: the wgmma + TMA block (kernels/tensor/wgmma_tma_kernel.cuh) with 64- and 128-row
// tiles, for short M. wgmma's N is BM, the rows of C a block computes (the block computes C^T).
// 64 rows: a 16- to 64-row problem wastes at most three quarters of one tile where the rung's
// 256-row tile wastes up to 63/64, and the block holds 32 accumulators per consumer thread; BN =
// 128 (two consumer warpgroups) and 64 (one, twice the blocks for N that gives too few tiles),
// with more stages than the rung since a stage is small. 128 rows: for 65 to 128 rows one row of
// tiles reads B once, where 64-row tiles read it twice (at 96 x 28672 x 8192, 940 MB of B, more
// than L2 holds, read twice from DRAM).
#include "tensor/wgmma_tma_kernel.cuh"

namespace gemm {
namespace {

using tensor::WgmmaTmaConfig;

constexpr WgmmaTmaConfig kConfigs[] = {
    {.bm = 64, .bn = 128, .stages = 6, .role = Role::none},
    {.bm = 64, .bn = 64, .stages = 8, .role = Role::none},
    {.bm = 128, .bn = 128, .stages = 4, .role = Role::none},
};

template <WgmmaTmaConfig C>
void add_config(std::vector<Variant>& out) {
  static_assert(C.bm == 64 || C.bm == 128, "this family's tiles are 64 or 128 rows of C");
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
  for_each_entry<kConfigs>([&]<auto C>() { add_config<C>(out); });
}

}  // namespace gemm
