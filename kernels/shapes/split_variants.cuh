// The variants of the split families (split_k, split_k_mma, stream_k): one schedule over the
// instances of one block tile configuration, the instance following the shape (the copy mode or
// width its alignment allows), with the rung's preconditions, the workspace of the split and the
// K split in the name (slices:S; 0: from the device).
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "shapes/block_tiles.cuh"
#include "shapes/split_schedules.cuh"

namespace gemm::shapes {

// Whether a schedule's blocks may wait for each other (split-K with the grid resident at once);
// stream-K's never do.
template <typename Schedule>
constexpr bool waits_for_each_other() {
  return std::is_same_v<Schedule, SplitKSchedule<typename Schedule::Tile>>;
}

// The pipelined tile's instance for a shape: its copy mode (pipelined_kernel.cuh).
template <typename T, PipelinedConfig C>
int pipelined_instance_of(const GemmShape& s) {
  return pipelined_mode_for<T, C>(s);
}

// An mma.sync tile's instance for a shape: 16-byte copies (0) where the rows of A and B are whole
// 16-byte chunks, element copies (1) otherwise.
template <typename T>
int mma_instance_of(const GemmShape& s) {
  constexpr int V = 16 / int(sizeof(T));
  return s.k % V == 0 && s.n % V == 0 ? 0 : 1;
}

// A tile with its own blocks-per-SM bound (MINB 0) or another (WithMinBlocks).
template <typename P, int MINB>
using Bounded = std::conditional_t<MINB == 0, P, WithMinBlocks<P, MINB>>;

// A variant of `Schedule` over the pipelined CUDA-core tile of configuration C. slices < 0: the
// schedule has no K split parameter (stream-K). MINB: blocks per SM for __launch_bounds__ where
// not the rung's (0).
template <template <typename> class Schedule, typename T, PipelinedConfig C, int MINB = 0>
VariantBuilder pipelined_split_variant(const char* family, int slices) {
  using P0 = Bounded<PipelinedTile<T, C, 0>, MINB>;
  using P1 = Bounded<PipelinedTile<T, C, 1>, MINB>;
  using P2 = Bounded<PipelinedTile<T, C, 2>, MINB>;
  std::vector<Param> params = C.params();
  if (slices >= 0) params.push_back({"slices", slices});
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(params)
      .launch(schedule_launch<Schedule, P0, P1, P2>(&pipelined_instance_of<T, C>, slices, family))
      .workspace(schedule_workspace<Schedule, P0, P1, P2>(&pipelined_instance_of<T, C>, slices))
      .outputs_per_thread(C.tm * C.tn)
      .precondition([](const GemmShape& s, const DeviceLimits& d) {
        if (auto why = needs_sm80(d)) return why;
        return pipelined_offsets_reason<C>(s);
      });
  // Stages handed over on mbarriers, or split-K's slices waiting for each other: warps poll.
  if (C.mbar || waits_for_each_other<Schedule<P0>>()) b.spins();
  return b;
}

// A variant of `Schedule` over an mma.sync tile (Tf32PipeTile: TF32 arithmetic on FP32 storage;
// Fp64K16Tile: compute capability 9.0+) of configuration C.
template <template <typename> class Schedule, typename T,
          template <tensor::MmaSyncConfig, int> class Tile, tensor::MmaSyncConfig C, int MINB = 0>
VariantBuilder mma_split_variant(const char* family, int slices, std::vector<Param> extra = {}) {
  constexpr int V = 16 / int(sizeof(T));
  using P16 = Bounded<MmaTile<Tile<C, V>>, MINB>;
  using P1 = Bounded<MmaTile<Tile<C, 1>>, MINB>;
  std::vector<Param> params = extra;
  for (const Param& p : C.params()) params.push_back(p);
  if (slices >= 0) params.push_back({"slices", slices});
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(params)
      .launch(schedule_launch<Schedule, P16, P1>(&mma_instance_of<T>, slices, family))
      .workspace(schedule_workspace<Schedule, P16, P1>(&mma_instance_of<T>, slices))
      .outputs_per_thread(double(C.bm) * C.bn / C.threads());
  if constexpr (sizeof(T) == 4) {
    b.compute(Compute::tf32).precondition([](const GemmShape&, const DeviceLimits& d) {
      return needs_sm80(d);
    });
  } else {
    b.precondition(tensor::dmma_k16_reason);
  }
  if (waits_for_each_other<Schedule<P16>>()) b.spins();  // split-K's slices poll a counter
  return b;
}

}  // namespace gemm::shapes
