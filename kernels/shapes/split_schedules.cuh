// Host side of split-K and stream-K over a tile type (split_k_kernel.cuh): the plan for a shape
// (the split from the variant's parameter, or from the device when it is 0), the workspace, the
// launch, and the variant of a tile configuration whose instance follows the shape.
//
// The K split of a variant: `slices:S` asks split-K for S slices of every tile's k-tiles (fewer
// where some slice would be empty: SplitK::make); `slices:0` takes as many as give the tiles one
// wave of resident blocks (slices_to_fill). Stream-K has no parameter: its blocks are one wave of
// the device (StreamK::make).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "shapes/split_k_kernel.cuh"
#include "shapes/split_launch.cuh"

namespace gemm::shapes {

// At least this many k-tiles per stream-K block: fewer would cost more in pipeline fill and
// partial tiles than the parallelism gains (split-K slices: min_k_tiles_per_slice).
inline constexpr int kMinKTiles = kMinKTilesPerSlice;

template <typename P>
struct SplitKSchedule {
  using Tile = P;
  using T = typename P::T;
  static const void* kernel() { return reinterpret_cast<const void*>(split_k_kernel<P>); }
  static std::int64_t tiles(const GemmShape& s) { return div_up(s.m, P::BM) * div_up(s.n, P::BN); }
  static SplitK split(const GemmShape& s, int slices) {
    const int k_tiles = int(div_up(s.k, P::BK));
    if (slices > 0) return SplitK::make(k_tiles, slices);
    return SplitK::make(k_tiles, slices_to_fill(tiles(s), k_tiles,
                                                resident_blocks(kernel(), P::THREADS, P::SMEM_BYTES),
                                                1.0, min_k_tiles_per_slice(tiles(s), device_sms())));
  }
  static LaunchPlan plan(const GemmShape& s, int slices) {
    LaunchPlan p;
    p.grid = {div_up(s.n, P::BN), div_up(s.m, P::BM), split(s, slices).slices};
    p.block = {P::THREADS, 1, 1};
    p.dynamic_smem_bytes = P::SMEM_BYTES;
    p.kernel = kernel();
    return p;
  }
  static SplitWorkspace workspace(const GemmShape& s, int slices) {
    return matrix_split_workspace<T>(tiles(s), split(s, slices).slices, s);
  }
  static void run(const Operands& ops, cudaStream_t stream, int slices, const char* family) {
    const GemmShape& s = ops.shape;
    const SplitK k = split(s, slices);
    const MatrixSplit<T> w = matrix_split<T>(ops, workspace(s, slices), k.slices, family);
    launch_split(plan(s, slices), stream, split_k_kernel<P>, k.slices > 1,
                 static_cast<const T*>(ops.a), static_cast<const T*>(ops.b), static_cast<T*>(ops.c),
                 int(s.m), int(s.n), int(s.k), k, w.shares, w.counters);
  }
};

template <typename P>
struct StreamKSchedule {
  using Tile = P;
  using T = typename P::T;
  static const void* kernel() { return reinterpret_cast<const void*>(stream_k_kernel<P>); }
  static StreamK split(const GemmShape& s, int) {
    const std::int64_t tiles = div_up(s.m, P::BM) * div_up(s.n, P::BN);
    return StreamK::make(int(tiles), int(div_up(s.k, P::BK)),
                         int(resident_blocks(kernel(), P::THREADS, P::SMEM_BYTES)), kMinKTiles);
  }
  static LaunchPlan plan(const GemmShape& s, int) {
    LaunchPlan p;
    p.grid = {split(s, 0).grid_blocks(), 1, 1};
    p.block = {P::THREADS, 1, 1};
    p.dynamic_smem_bytes = P::SMEM_BYTES;
    p.kernel = kernel();
    return p;
  }
  static SplitWorkspace workspace(const GemmShape& s, int) {
    const StreamK k = split(s, 0);
    SplitWorkspace w;
    w.tiles = k.tiles;  // counters for every tile, as split-K's: one layout to check
    w.partial_bytes = std::size_t(k.partial_slots()) * P::BM * P::BN * sizeof(T);
    return w;
  }
  static void run(const Operands& ops, cudaStream_t stream, int, const char* family) {
    const GemmShape& s = ops.shape;
    const StreamK k = split(s, 0);
    const SplitWorkspace w = workspace(s, 0);
    require_workspace(ops, w.bytes(), family);
    T* slots = k.sk_tiles > 0 ? w.partials<T>(ops.workspace) : nullptr;
    unsigned* counters = k.sk_tiles > 0 ? SplitWorkspace::counters(ops.workspace) : nullptr;
    launch(plan(s, 0), stream, stream_k_kernel<P>, static_cast<const T*>(ops.a),
           static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(s.m), int(s.n), int(s.k), k,
           slots, counters);
  }
};

// Calls fn.template operator()<P>() for the index-th of the tile types Ps.
template <typename... Ps, typename Fn>
decltype(auto) with_tile(int index, Fn&& fn) {
  int i = 0;
  using R = decltype(fn.template operator()<std::tuple_element_t<0, std::tuple<Ps...>>>());
  if constexpr (std::is_void_v<R>) {
    ((i++ == index ? (fn.template operator()<Ps>(), 0) : 0), ...);
  } else {
    R out{};
    ((i++ == index ? (out = fn.template operator()<Ps>(), 0) : 0), ...);
    return out;
  }
}

// The launch of a schedule over the tile instances Ps of one configuration, `pick(shape)` saying
// which instance a shape needs (the copy width its alignment allows).
template <template <typename> class Schedule, typename... Ps>
KernelLaunch schedule_launch(int (*pick)(const GemmShape&), int slices, const char* family) {
  KernelLaunch l;
  l.plan = [pick, slices](const GemmShape& s) {
    return with_tile<Ps...>(pick(s), [&]<typename P>() { return Schedule<P>::plan(s, slices); });
  };
  l.run = [pick, slices, family](const Operands& ops, cudaStream_t stream) {
    with_tile<Ps...>(pick(ops.shape), [&]<typename P>() { Schedule<P>::run(ops, stream, slices, family); });
  };
  return l;
}

template <template <typename> class Schedule, typename... Ps>
std::function<std::size_t(const GemmShape&)> schedule_workspace(int (*pick)(const GemmShape&),
                                                                int slices) {
  return [pick, slices](const GemmShape& s) {
    return with_tile<Ps...>(pick(s), [&]<typename P>() { return Schedule<P>::workspace(s, slices).bytes(); });
  };
}

}  // namespace gemm::shapes
