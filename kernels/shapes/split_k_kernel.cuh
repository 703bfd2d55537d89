// Split-K and stream-K kernels over any block tile (a rung's mainloop and epilogue taken as a
// "tile" type, below), so that the CUDA-core pipeline, the TF32 mma.sync tile and the FP64 DMMA
// tile each get both schedules from one piece of code.
//
// A tile type P provides:
//   using T;  BM, BN, BK, THREADS, SMEM_BYTES;  VEC (1, or 16 / sizeof(T) where the instance
//   stores 16-byte chunks: N % VEC == 0)
//   struct Acc;                                     one thread's accumulators
//   static void mainloop(Acc&, A, B, M, N, K, m0, n0, kt_begin, kt_end, smem);
//                                                   Acc = the product of k-tiles [kt_begin,
//                                                   kt_end) of tile (m0, n0); no copy in flight
//                                                   when it returns
//   static void store(const Acc&, T* C, int M, int N, int m0, int n0);
//                                                   the tile at (m0, n0) of a row-major M x N
//                                                   matrix (rows >= M, columns >= N left out)
//   MIN_BLOCKS                                      blocks per SM for __launch_bounds__
//
// Split-K: block (x, y, z) multiplies k-tiles split.begin(z) .. split.end(z) of tile (y, x);
// with one slice it stores C, otherwise its partial tile into slice z's M x N matrix of the
// workspace, and the slices are added in slice order (partial_tiles.cuh).
// Stream-K: blocks 0 .. sk_blocks - 1 walk equal ranges of the shared tiles' k-tiles
// (work_split.h), the others one whole tile each; a shared tile's segments are stored as BM x BN
// partial tiles in per-block slots and added in k order by the segment that finishes last.
#pragma once

#include <cstdint>

#include "common/tile_order.cuh"
#include "shapes/partial_tiles.cuh"
#include "shapes/work_split.h"

namespace gemm::shapes {

// Where the segments of a stream-K tile lie: segment k of shared tile t, covered by block
// first + k, is the BM x BN tile in slot plan.slot(t, first + k) (leading dimension BN).
template <typename T, int BM, int BN>
struct SlotShares {
  T* slots;
  StreamK plan;  // a copy: the address of a kernel parameter would put it in local memory
  int tile, first, count;

  __device__ __forceinline__ const T* at(int k, int r, int c) const {
    return slots + std::int64_t(plan.slot(tile, first + k)) * (BM * BN) + r * BN + c;
  }
};

// all_blocks: the grid is resident all at once (a cooperative launch): every slice's block sums
// a share of its tile. Otherwise the last slice to arrive sums the whole tile.
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    split_k_kernel(const typename P::T* A, const typename P::T* B, typename P::T* C, int M, int N,
                   int K, SplitK split, MatrixShares<typename P::T> shares, unsigned* counters,
                   bool all_blocks) {
  using T = typename P::T;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  typename P::Acc acc;
  P::mainloop(acc, A, B, M, N, K, blockIdx.y * P::BM, blockIdx.x * P::BN, split.begin(blockIdx.z),
              split.end(blockIdx.z), smem_raw);
  // The epilogue's coordinates are computed again rather than held in registers across the
  // mainloop, where the accumulators leave little room.
  const int2 block = reread_block_index();
  int slice;
  asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(slice));
  const int m0 = block.y * P::BM, n0 = block.x * P::BN;
  if (split.slices == 1) {
    P::store(acc, C, M, N, m0, n0);
    return;
  }
  P::store(acc, shares.matrix(slice), M, N, m0, n0);
  shares.m0 = m0;
  shares.n0 = n0;
  unsigned* const tile_counters = counters + 2 * (block.y * gridDim.x + block.x);
  const int rows = min(P::BM, M - m0), cols = min(P::BN, N - n0);
  T* const out = C + std::int64_t(m0) * N + n0;
  if (all_blocks)
    finish_tile<T, P::VEC, P::THREADS, true>(shares, slice, tile_counters, rows, cols, out, N);
  else
    finish_tile<T, P::VEC, P::THREADS, false>(shares, slice, tile_counters, rows, cols, out, N);
}

// Block b walks iterations [iter, end) of the tiles laid end to end (tile t: t * iters_per_tile
// onwards): a stream-K block its range of the shared tiles, any other block one whole tile after
// them. One mainloop for both, so that a block's registers are those of one segment's state.
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    stream_k_kernel(const typename P::T* A, const typename P::T* B, typename P::T* C, int M, int N,
                    int K, StreamK plan, typename P::T* slots, unsigned* counters) {
  using T = typename P::T;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int ipt = plan.iters_per_tile;
  int iter, end;
  if (int(blockIdx.x) < plan.sk_blocks) {
    iter = int(plan.begin(blockIdx.x));
    end = int(plan.end(blockIdx.x));
  } else {
    iter = (plan.sk_tiles + int(blockIdx.x) - plan.sk_blocks) * ipt;
    end = iter + ipt;
  }
  while (iter < end) {
    const int t = iter / ipt;
    const int kt_begin = iter - t * ipt, kt_end = min(end - t * ipt, ipt);
    iter = t * ipt + kt_end;
    const int tiles_n = (N + P::BN - 1) / P::BN;
    typename P::Acc acc;
    P::mainloop(acc, A, B, M, N, K, (t / tiles_n) * P::BM, (t % tiles_n) * P::BN, kt_begin, kt_end,
                smem_raw);
    const int m0 = (t / tiles_n) * P::BM, n0 = (t % tiles_n) * P::BN;
    if (kt_begin == 0 && kt_end == ipt) {
      P::store(acc, C, M, N, m0, n0);
    } else {
      // A segment: its partial tile (whole, tails included: they hold zeros) into the block's
      // slot; the last of the tile's segments to arrive adds them up.
      const int block = blockIdx.x;
      P::store(acc, slots + std::int64_t(plan.slot(t, block)) * (P::BM * P::BN), P::BM, P::BN, 0, 0);
      const SlotShares<T, P::BM, P::BN> shares{slots, plan, t, plan.first_block(t), plan.segments(t)};
      finish_tile<T, P::VEC, P::THREADS, false>(shares, block - shares.first, counters + 2 * t,
                                                min(P::BM, M - m0), min(P::BN, N - n0),
                                                C + std::int64_t(m0) * N + n0, N);
    }
    // The next segment's mainloop refills the stages (and sets up its barriers again): every
    // thread must be done with this one's.
    __syncthreads();
  }
}

}  // namespace gemm::shapes
