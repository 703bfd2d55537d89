// split_k: the pipelined CUDA-core kernel of rungs 6-9 with every output tile's K cut into
// slices, one block each: a shape whose tiles alone leave most SMs idle (128 x 128 x 65536 is one
// 128 x 128 tile: 1 of 132 SMs) gets tiles x slices blocks. Each slice stores its partial tile in
// the workspace; the slices of a tile are then added in slice order (partial_tiles.cuh), so the
// result is the same bit for bit in every run. When the whole grid fits on the GPU at once (a
// cooperative launch) every slice's block sums 1/slices of its tile; otherwise the last slice to
// finish sums all of it.
//
// slices:0 takes as many slices as give one wave of resident blocks, at least 4 k-tiles each, 16
// where the tiles alone cover three quarters of the SMs (slices_to_fill, min_k_tiles_per_slice);
// slices:S asks for S (the tuning instances). Block tiles narrow in M or N
// (64 x 128, 32 x 128, 128 x 64) serve the decode and the tall and wide shapes; slices:1 is the
// plain pipelined kernel at that tile.
#include "shapes/split_variants.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;

// The configurations: the tuned rung's at 4096^3 (FP32) and 1024^3 (FP64) and tiles narrow in M
// or N, without the grouped block order (a split grid does not use it) and, where a slice's
// range took the registers the rung's blocks per SM left, with one block per SM fewer. FP64 at
// large tiles is the tensor cores' (split_k_mma).
constexpr PipelinedConfig kFp32Wide{.bm = 128, .bn = 128, .bk = 32, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                                    .stages = 3, .group = 0, .minb = 2, .mbar = true};
constexpr PipelinedConfig kFp32Mid{.bm = 64, .bn = 128, .bk = 16, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                                   .stages = 3, .group = 0, .minb = 3};
constexpr PipelinedConfig kFp32Short{.bm = 32, .bn = 128, .bk = 16, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                                     .stages = 3, .group = 0, .minb = 4};
constexpr PipelinedConfig kFp32Narrow{.bm = 128, .bn = 64, .bk = 16, .wm = 64, .wn = 32, .tm = 8, .tn = 8,
                                      .stages = 3, .group = 0, .minb = 3};
constexpr PipelinedConfig kFp64Mid{.bm = 64, .bn = 64, .bk = 8, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                                   .stages = 3, .group = 0, .minb = 4};

// The device-split instance, then the tuning instances of fixed splits.
template <typename T, PipelinedConfig C>
void add_config(std::vector<Variant>& out) {
  for (int slices : {0, 1, 2, 4, 8, 16})
    out.push_back(pipelined_split_variant<SplitKSchedule, T, C>("split_k", slices)
                      .role(slices == 0 ? Role::none : Role::sweep)
                      .note("K cut into slices (slices:0: as many as fill the SMs once); partial "
                            "tiles in the workspace, added in slice order")
                      .build());
}

}  // namespace

void add_split_k_variants(std::vector<Variant>& out) {
  add_config<float, kFp32Wide>(out);
  add_config<float, kFp32Mid>(out);
  add_config<float, kFp32Short>(out);
  add_config<float, kFp32Narrow>(out);
  add_config<double, kFp64Mid>(out);
}

}  // namespace gemm
