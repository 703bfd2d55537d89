// split_k_mma: split-K (split_k.cu) on the tensor cores, with the block tiles of the mma.sync
// rungs: TF32 m16n8k8 (mma_tf32_pipelined's tile, FP32 storage) and FP64 m16n8k16 (DMMA,
// mma_fp64_m16n8k16's tile, compute capability 9.0+). 128 x 128 tiles for shapes that need only
// more blocks (128 x 128 x 65536: one tile, a slice per SM), 64- and 32-row tiles for the decode
// shapes (32 to 128 rows against thousands of columns), 64-column tiles for the tall ones.
#include "shapes/split_variants.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;
using tensor::MmaSyncConfig;

constexpr MmaSyncConfig kTf32Wide{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                  .min_blocks = 2};
constexpr MmaSyncConfig kTf32Mid{.bm = 64, .bn = 128, .bk = 32, .wm = 32, .wn = 64, .stages = 4,
                                 .min_blocks = 2};
constexpr MmaSyncConfig kTf32Short{.bm = 32, .bn = 128, .bk = 32, .wm = 16, .wn = 64, .stages = 4,
                                   .min_blocks = 3};
constexpr MmaSyncConfig kTf32Narrow{.bm = 128, .bn = 64, .bk = 32, .wm = 64, .wn = 32, .stages = 4,
                                    .min_blocks = 2};
constexpr MmaSyncConfig kFp64Wide{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 4};
constexpr MmaSyncConfig kFp64Narrow{.bm = 128, .bn = 64, .bk = 16, .wm = 64, .wn = 32, .stages = 4};
constexpr MmaSyncConfig kFp64Mid{.bm = 64, .bn = 64, .bk = 16, .wm = 32, .wn = 32, .stages = 4};
constexpr MmaSyncConfig kFp64Short{.bm = 32, .bn = 128, .bk = 16, .wm = 16, .wn = 64, .stages = 4};

// The device-split instance, then the tuning instances of fixed splits.
template <typename T, template <MmaSyncConfig, int> class Tile, MmaSyncConfig C>
void add_config(std::vector<Variant>& out) {
  for (int slices : {0, 1, 2, 4, 8, 16})
    out.push_back(mma_split_variant<SplitKSchedule, T, Tile, C>("split_k_mma", slices)
                      .role(slices == 0 ? Role::none : Role::sweep)
                      .note("K cut into slices (slices:0: as many as fill the SMs once); partial "
                            "tiles in the workspace, added in slice order")
                      .build());
}

}  // namespace

void add_split_k_mma_variants(std::vector<Variant>& out) {
  add_config<float, tensor::Tf32PipeTile, kTf32Wide>(out);
  add_config<float, tensor::Tf32PipeTile, kTf32Mid>(out);
  add_config<float, tensor::Tf32PipeTile, kTf32Short>(out);
  add_config<float, tensor::Tf32PipeTile, kTf32Narrow>(out);
  add_config<double, tensor::Fp64K16Tile, kFp64Wide>(out);
  add_config<double, tensor::Fp64K16Tile, kFp64Mid>(out);
  add_config<double, tensor::Fp64K16Tile, kFp64Short>(out);
  add_config<double, tensor::Fp64K16Tile, kFp64Narrow>(out);
}

}  // namespace gemm
