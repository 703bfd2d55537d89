// Split-K and stream-K over the wgmma + TMA mainloop (sm_90a; included only by split_k_wgmma.cu
// and stream_k_wgmma.cu, which the build compiles for that target alone). The block is
// wgmma_tma's (kernels/tensor/wgmma_tma.cu: one producer warpgroup issuing TMA, BN / 64 consumer
// warpgroups issuing wgmma, the stages' full/empty mbarriers); what changes is which k-tiles of
// which output tiles it multiplies, as in split_k_kernel.cuh for the mma.sync and CUDA-core
// tiles:
//   - split-K: block (x, y, z) multiplies slice z's k-tiles of tile (y, x); with more than one
//     slice it stores its partial tile into slice z's M x N matrix of the workspace, and the
//     slices are added in slice order (partial_tiles.cuh);
//   - stream-K: a block walks its segments (work_split.h's StreamK): whole tiles, or ranges of a
//     shared tile's k-tiles whose partial tiles go to per-block slots and are added in k order.
// Producer and consumers walk the same k-tiles in the same order with a State each, so the
// stages' phases run on across segments as across a persistent block's tiles.
//
// Who finishes a split tile: the consumer threads (threads 0 .. 128 * BN / 64 - 1). The
// producer warpgroup keeps 40 registers after setmaxnreg, too few for the epilogue, and leaves
// once its copies are issued (in stream-K it may still be issuing the next segment's); the
// consumers meet at a named barrier of their own (ConsumerBarrier) where the CUDA-core and
// mma.sync tiles use __syncthreads.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "shapes/split_k_kernel.cuh"  // SlotShares, partial_tiles.cuh, work_split.h
#include "shapes/split_launch.cuh"
#include "shapes/wgmma_row_tiles.cuh"
#include "tensor/wgmma_tile.cuh"

namespace gemm::shapes {

using tensor::FragmentSlot;
using tensor::WgmmaTmaConfig;
using tensor::WgPipeline;
using tensor::WgTile;

template <int BM, int BN, int STAGES>
struct WgSplit {
  using P = WgTile<BM, BN, STAGES>;
  static constexpr int CONSUMER_THREADS = P::CONSUMERS * 128;
  using Barrier = ConsumerBarrier<CONSUMER_THREADS>;

  // The consumers' part of finishing a split tile: 16-byte chunks where every row of C starts on
  // one (N % 4 == 0: the column origins are multiples of 64), else single elements.
  template <bool ALL_BLOCKS, typename Shares>
  __device__ __forceinline__ static void finish(const Shares& s, int share, unsigned* counters,
                                                int rows, int cols, float* out, int N) {
    if (N % 4 == 0)
      finish_tile<float, 4, CONSUMER_THREADS, ALL_BLOCKS, Barrier>(s, share, counters, rows, cols,
                                                                    out, N);
    else
      finish_tile<float, 1, CONSUMER_THREADS, ALL_BLOCKS, Barrier>(s, share, counters, rows, cols,
                                                                    out, N);
  }
};

template <int BM, int BN, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    split_k_wgmma_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                         const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b, SplitK split,
                         MatrixShares<float> shares, unsigned* counters, bool all_blocks) {
  using P = WgTile<BM, BN, STAGES>;
  using S = WgSplit<BM, BN, STAGES>;
  (void)A;
  (void)B;  // read through the tensor maps
  extern __shared__ unsigned char smem_raw[];
  const WgPipeline<BM, BN, STAGES> pipe(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, slice = blockIdx.z;
  const int kt_begin = split.begin(slice), kt_end = split.end(slice);

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    tensor::setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      typename WgPipeline<BM, BN, STAGES>::State s;
      for (int kt = kt_begin; kt < kt_end; ++kt, ++s) pipe.produce(s, kt, m0, n0, map_a, map_b);
    }
    return;
  }

  tensor::setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  float d[P::ACC];
#pragma unroll
  for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;
  typename WgPipeline<BM, BN, STAGES>::State s;
  for (int kt = kt_begin; kt < kt_end; ++kt, ++s) pipe.consume(d, s, slot, lane);
  if (split.slices == 1) {
    tensor::store_c_transposed<BM>(d, C, M, N, m0, n0, slot);
    return;
  }
  tensor::store_c_transposed<BM>(d, shares.matrix(slice), M, N, m0, n0, slot);
  shares.m0 = m0;
  shares.n0 = n0;
  unsigned* const tile_counters = counters + 2 * (blockIdx.y * gridDim.x + blockIdx.x);
  const int rows = min(BM, M - m0), cols = min(BN, N - n0);
  float* const out = C + std::int64_t(m0) * N + n0;
  if (all_blocks)
    S::template finish<true>(shares, slice, tile_counters, rows, cols, out, N);
  else
    S::template finish<false>(shares, slice, tile_counters, rows, cols, out, N);
}

// Block b's segments: iterations [iter, end) of the tiles laid end to end (tile t: t *
// iters_per_tile onwards), as stream_k_kernel walks them.
struct StreamKWalk {
  int iter, end;
  __device__ __forceinline__ explicit StreamKWalk(const StreamK& plan) {
    if (int(blockIdx.x) < plan.sk_blocks) {
      iter = int(plan.begin(blockIdx.x));
      end = int(plan.end(blockIdx.x));
    } else {
      iter = (plan.sk_tiles + int(blockIdx.x) - plan.sk_blocks) * plan.iters_per_tile;
      end = iter + plan.iters_per_tile;
    }
  }
  // The next segment: tile t, its k-tiles [kt_begin, kt_end); false when the walk is done.
  __device__ __forceinline__ bool next(int ipt, int& t, int& kt_begin, int& kt_end) {
    if (iter >= end) return false;
    t = iter / ipt;
    kt_begin = iter - t * ipt;
    kt_end = min(end - t * ipt, ipt);
    iter = t * ipt + kt_end;
    return true;
  }
};

template <int BM, int BN, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    stream_k_wgmma_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                          const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, StreamK plan, float* slots,
                          unsigned* counters) {
  using P = WgTile<BM, BN, STAGES>;
  using S = WgSplit<BM, BN, STAGES>;
  (void)A;
  (void)B;
  (void)K;  // the plan counts the k-tiles
  extern __shared__ unsigned char smem_raw[];
  const WgPipeline<BM, BN, STAGES> pipe(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int ipt = plan.iters_per_tile, tiles_n = (N + BN - 1) / BN;
  StreamKWalk walk(plan);
  int t, kt_begin, kt_end;

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    tensor::setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      typename WgPipeline<BM, BN, STAGES>::State s;  // runs on over the block's segments
      while (walk.next(ipt, t, kt_begin, kt_end))
        for (int kt = kt_begin; kt < kt_end; ++kt, ++s)
          pipe.produce(s, kt, (t / tiles_n) * BM, (t % tiles_n) * BN, map_a, map_b);
    }
    return;
  }

  tensor::setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  typename WgPipeline<BM, BN, STAGES>::State s;
  while (walk.next(ipt, t, kt_begin, kt_end)) {
    float d[P::ACC];
#pragma unroll
    for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;
    for (int kt = kt_begin; kt < kt_end; ++kt, ++s) pipe.consume(d, s, slot, lane);
    const int m0 = (t / tiles_n) * BM, n0 = (t % tiles_n) * BN;
    if (kt_begin == 0 && kt_end == ipt) {
      tensor::store_c_transposed<BM>(d, C, M, N, m0, n0, slot);
      continue;
    }
    // A segment: its whole partial tile (tails hold zeros: TMA fills them) into the block's
    // slot; the last of the tile's segments to arrive adds them up.
    const int block = blockIdx.x;
    tensor::store_c_transposed<BM>(d, slots + std::int64_t(plan.slot(t, block)) * (BM * BN), BM,
                                   BN, 0, 0, slot);
    const SlotShares<float, BM, BN> shares{slots, plan, t, plan.first_block(t), plan.segments(t)};
    S::template finish<false>(shares, block - shares.first, counters + 2 * t, min(BM, M - m0),
                              min(BN, N - n0), C + std::int64_t(m0) * N + n0, N);
  }
}

// --- host ----------------------------------------------------------------------------------
// The workspace: the padded operand copies TMA needs at K or N not a multiple of 4 first
// (tensor::TmaPadding, at the workspace's start, where tma_operands looks), then the split's
// counters and partial tiles.
inline Operands split_part(const Operands& ops) {
  const std::size_t pad = tensor::TmaPadding(ops.shape).bytes();
  Operands rest = ops;
  if (ops.workspace != nullptr && ops.workspace_bytes >= pad) {
    rest.workspace = static_cast<unsigned char*>(ops.workspace) + pad;
    rest.workspace_bytes = ops.workspace_bytes - pad;
  } else {
    rest.workspace = nullptr;
    rest.workspace_bytes = 0;
  }
  return rest;
}

// The resident blocks of a wgmma split kernel on this device (0 without one).
template <WgmmaTmaConfig C>
std::int64_t wg_resident_blocks(const void* kernel) {
  return resident_blocks(kernel, C.threads(), C.smem_bytes());
}

template <WgmmaTmaConfig C>
struct WgSplitK {
  static constexpr auto kernel = split_k_wgmma_kernel<C.bm, C.bn, C.stages, C.producer_registers(),
                                                      C.consumer_registers()>;
  static std::int64_t tiles(const GemmShape& s) { return ceil_div(s.m, C.bm) * ceil_div(s.n, C.bn); }
  static SplitK split(const GemmShape& s, int slices) {
    const int k_tiles = int(ceil_div(s.k, C.bk));
    if (slices > 0) return SplitK::make(k_tiles, slices);
    return SplitK::make(k_tiles,
                        slices_to_fill(tiles(s), k_tiles,
                                       wg_resident_blocks<C>(reinterpret_cast<const void*>(kernel)),
                                       1.0, min_k_tiles_per_slice(tiles(s), device_sms())));
  }
  static LaunchPlan plan(const GemmShape& s, int slices) {
    LaunchPlan p;
    p.grid = {ceil_div(s.n, C.bn), ceil_div(s.m, C.bm), split(s, slices).slices};
    p.block = {C.threads(), 1, 1};
    p.dynamic_smem_bytes = C.smem_bytes();
    p.kernel = reinterpret_cast<const void*>(kernel);
    return p;
  }
  static std::size_t workspace_bytes(const GemmShape& s, int slices) {
    return tensor::TmaPadding(s).bytes() +
           matrix_split_workspace<float>(tiles(s), split(s, slices).slices, s).bytes();
  }
  static void run(const Operands& ops, cudaStream_t stream, int slices) {
    const GemmShape& s = ops.shape;
    const SplitK k = split(s, slices);
    const MatrixSplit<float> w = matrix_split<float>(
        split_part(ops), matrix_split_workspace<float>(tiles(s), k.slices, s), k.slices,
        "split_k_wgmma");
    const tensor::TmaOperands t = tensor::tma_operands(ops, stream);
    const int m = int(s.m), n = int(s.n), kk = int(s.k);
    const tensor::TmaMapPair& maps =
        tensor::tma_maps_for(C.bm, C.bk, t.a, t.lda, t.b, t.ldb, m, n, kk);
    launch_split(plan(s, slices), stream, kernel, k.slices > 1, t.a, t.b,
                 static_cast<float*>(ops.c), m, n, kk, maps.a, maps.b, k, w.shares, w.counters);
  }
};

template <WgmmaTmaConfig C>
struct WgStreamK {
  static constexpr auto kernel = stream_k_wgmma_kernel<C.bm, C.bn, C.stages,
                                                       C.producer_registers(), C.consumer_registers()>;
  static StreamK split(const GemmShape& s) {
    const std::int64_t tiles = ceil_div(s.m, C.bm) * ceil_div(s.n, C.bn);
    return StreamK::make(int(tiles), int(ceil_div(s.k, C.bk)),
                         int(wg_resident_blocks<C>(reinterpret_cast<const void*>(kernel))),
                         kMinKTilesPerSlice);
  }
  static LaunchPlan plan(const GemmShape& s, int = -1) {
    LaunchPlan p;
    p.grid = {split(s).grid_blocks(), 1, 1};
    p.block = {C.threads(), 1, 1};
    p.dynamic_smem_bytes = C.smem_bytes();
    p.kernel = reinterpret_cast<const void*>(kernel);
    return p;
  }
  static SplitWorkspace split_workspace(const GemmShape& s) {
    const StreamK k = split(s);
    SplitWorkspace w;
    w.tiles = k.tiles;
    w.partial_bytes = std::size_t(k.partial_slots()) * C.bm * C.bn * sizeof(float);
    return w;
  }
  static std::size_t workspace_bytes(const GemmShape& s, int = -1) {
    return tensor::TmaPadding(s).bytes() + split_workspace(s).bytes();
  }
  static void run(const Operands& ops, cudaStream_t stream, int = -1) {
    const GemmShape& s = ops.shape;
    const StreamK k = split(s);
    const SplitWorkspace w = split_workspace(s);
    const Operands rest = split_part(ops);
    require_workspace(rest, w.bytes(), "stream_k_wgmma");
    float* slots = k.sk_tiles > 0 ? w.partials<float>(rest.workspace) : nullptr;
    unsigned* counters = k.sk_tiles > 0 ? SplitWorkspace::counters(rest.workspace) : nullptr;
    const tensor::TmaOperands t = tensor::tma_operands(ops, stream);
    const int m = int(s.m), n = int(s.n), kk = int(s.k);
    const tensor::TmaMapPair& maps =
        tensor::tma_maps_for(C.bm, C.bk, t.a, t.lda, t.b, t.ldb, m, n, kk);
    launch(plan(s), stream, kernel, t.a, t.b, static_cast<float*>(ops.c), m, n, kk, maps.a,
           maps.b, k, slots, counters);
  }
};

// A variant of a wgmma split over tile C: wgmma_variant's facts (the tile's parameters, TF32,
// the C^T note, the precondition), `Split`'s workspace and launch with its K split `slices`
// (-1: none, stream-K), the schedule's `how` after wgmma's note, and the unit roundoff of the
// operands' TF32 conversion.
template <WgmmaTmaConfig C, typename Split>
Variant wg_split_variant(const char* family, int slices, Role role, const std::string& schedule,
                         const std::string& how) {
  check_row_tile<C>();
  std::vector<Param> more;
  if (slices >= 0) more.push_back({"slices", slices});
  VariantBuilder b = tensor::wgmma_variant(family, C, more);
  KernelLaunch l;
  l.plan = [slices](const GemmShape& s) { return Split::plan(s, slices); };
  l.run = [slices](const Operands& ops, cudaStream_t stream) { Split::run(ops, stream, slices); };
  b.launch(l)
      .workspace([slices](const GemmShape& s) { return Split::workspace_bytes(s, slices); })
      .role(role)
      .origin("wgmma.mma_async m64n" + std::to_string(C.bm) +
              "k8 tf32 with TMA tiles on mbarriers (wgmma_rows' block), " + schedule);
  Variant v = b.build();
  v.note += "; " + how;
  v.unit_roundoff =
      tensor::tf32_unit_roundoff(tensor::kWgmmaRoundingA, tensor::kWgmmaRoundingB);
  return v;
}

}  // namespace gemm::shapes
