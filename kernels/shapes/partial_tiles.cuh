// Partial tiles and their fixed-order sum: what split-K and stream-K blocks do once each has
// multiplied its share of K for an output tile. Every share is stored in the workspace as a
// partial tile; the shares of a tile are then added in k order (share 0 first), so C is the same
// bit for bit in every run, whichever block finishes last (no floating-point atomics).
//
// Two ways to finish a tile, both with one 32-bit arrival counter per tile in the workspace:
//   - last block: each block counts its arrival; the block that arrives last sums all shares
//     into C and sets the counter back to zero for the next launch. Any grid; the sum is one
//     block's work, fine for a few shares.
//   - all blocks: every share's block waits until all have arrived, then sums its 1/shares of
//     the tile. Needs every block of the grid resident at once (the launch is cooperative, so
//     the driver refuses it otherwise); for many shares of few tiles (128 x 128 x 65536).
//     A second counter, of departures, lets the block that leaves last reset both.
// The counters start at zero (the workspace contract: zeroed when the harness hands it to a
// variant) and every launch leaves them at zero.
//
// Ordering: a block's partial-tile stores are made visible before its arrival by
// __threadfence() + a barrier of the finishing threads (the CUDA programming guide's last-block
// pattern); the summing block reads the partials through L2 (ld.global.cg), never from a stale
// L1 line.
//
// The finishing threads: the whole block (BlockBarrier), or the consumer warpgroups of a
// warp-specialized block (ConsumerBarrier), whose producer warpgroup takes no part (it has left,
// or is issuing a stream-K block's next segment): they are threads 0 .. THREADS - 1 of the block
// and meet at a named barrier of their own count.
#pragma once

#include <cstdint>
#include <type_traits>

namespace gemm::shapes {

struct BlockBarrier {
  __device__ __forceinline__ static void sync() { __syncthreads(); }
};

// Named barrier 1 (0 is __syncthreads') for the first THREADS threads of the block.
template <int THREADS>
struct ConsumerBarrier {
  static_assert(THREADS % 32 == 0, "whole warps");
  __device__ __forceinline__ static void sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(THREADS) : "memory");
  }
};

// Where the shares of a split-K tile lie: share k of element (r, c) of the tile at (m0, n0) is
// element (m0 + r, n0 + c) of the k-th M x N matrix after `base` (one matrix per slice, ld = N).
template <typename T>
struct MatrixShares {
  T* base;
  std::int64_t stride;  // elements from one slice's matrix to the next
  int ld;
  int count;
  int m0, n0;

  __device__ __forceinline__ const T* at(int k, int r, int c) const {
    return base + k * stride + std::int64_t(m0 + r) * ld + (n0 + c);
  }
  // Where this block (slice k) stores its partial tile: the matrix origin of its slice.
  __device__ __forceinline__ T* matrix(int k) const { return base + k * stride; }
};

template <typename T>
__device__ __forceinline__ T load_l2(const T* p) {
  return __ldcg(p);
}

// Sums the shares (`s.at(k, r, c)`, k = 0 .. s.count - 1, in that order: the same sum in every
// run) of chunks [first, last) of a tile region `cols` wide, flattened row by row in chunks of
// VEC elements, into `out` (the region's origin in C, leading dimension ldc). VEC > 1: cols,
// column origins and leading dimensions are multiples of VEC (16-byte aligned chunks).
template <typename T, int VEC, int THREADS, typename Shares>
__device__ __forceinline__ void sum_shares(const Shares& s, int cols, int first, int last, T* out,
                                           int ldc) {
  const int chunks_per_row = cols / VEC;
  for (int i = first + int(threadIdx.x); i < last; i += THREADS) {
    const int r = i / chunks_per_row;
    const int c = i % chunks_per_row * VEC;
    T* dst = out + std::int64_t(r) * ldc + c;
    if constexpr (VEC == 1) {
      T sum = load_l2(s.at(0, r, c));
      for (int k = 1; k < s.count; ++k) sum += load_l2(s.at(k, r, c));
      *dst = sum;
    } else {
      using V = std::conditional_t<sizeof(T) == 4, float4, double2>;
      static_assert(VEC * sizeof(T) == 16, "16-byte chunks");
      V sum = load_l2(reinterpret_cast<const V*>(s.at(0, r, c)));
      for (int k = 1; k < s.count; ++k) {
        const V v = load_l2(reinterpret_cast<const V*>(s.at(k, r, c)));
        if constexpr (sizeof(T) == 4) {
          sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
        } else {
          sum.x += v.x, sum.y += v.y;
        }
      }
      *reinterpret_cast<V*>(dst) = sum;
    }
  }
}

// Counts this block's arrival at a tile's counter once its partial tile is stored; true in the
// block that arrived last (which then sees every other block's partial tile). Every thread of
// the block calls it; the counter is back at zero when it returns true.
template <typename Barrier = BlockBarrier>
__device__ __forceinline__ bool arrive_last(unsigned* counter, int shares) {
  __shared__ bool last;
  __threadfence();  // this thread's partial-tile stores, before the arrival
  Barrier::sync();
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1u) == unsigned(shares - 1);
    if (last) *counter = 0;  // every share has arrived: nobody reads it again in this launch
  }
  Barrier::sync();
  if (last) __threadfence();
  return last;
}

// Waits until all `shares` blocks of a tile have arrived (each block calls it once, every
// thread); then every partial tile of the tile is visible. Only in a grid that is resident all
// at once. `counters` holds arrivals then departures.
template <typename Barrier = BlockBarrier>
__device__ __forceinline__ void arrive_and_wait_all(unsigned* counters, int shares) {
  __threadfence();
  Barrier::sync();
  if (threadIdx.x == 0) {
    atomicAdd(&counters[0], 1u);
    // Polls with pauses: a tile's waiting blocks poll one L2 line, which the blocks still
    // streaming their inputs share the L2 with.
    for (;;) {
      unsigned seen;
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(&counters[0]) : "memory");
      if (seen >= unsigned(shares)) break;
      __nanosleep(100);
    }
  }
  Barrier::sync();
}

// After arrive_and_wait_all and the block's share of the sum: the last block to leave resets
// both counters.
template <typename Barrier = BlockBarrier>
__device__ __forceinline__ void depart(unsigned* counters, int shares) {
  Barrier::sync();  // the block's reads of the counters are done
  if (threadIdx.x == 0 && atomicAdd(&counters[1], 1u) == unsigned(shares - 1)) {
    counters[0] = 0;
    counters[1] = 0;
  }
}

// Finishes a split tile once this block's share (number `share`) is stored: the rows x cols
// region of the tile, whose origin in C is `out`. ALL_BLOCKS: every block sums 1/count of the
// region (2 counters per tile); otherwise the last block to arrive sums all of it (1 counter).
// THREADS: the finishing threads, which meet at Barrier.
template <typename T, int VEC, int THREADS, bool ALL_BLOCKS, typename Barrier = BlockBarrier,
          typename Shares>
__device__ __forceinline__ void finish_tile(const Shares& s, int share, unsigned* counters,
                                            int rows, int cols, T* out, int ldc) {
  // A tile region has at most 2^14 chunks and a grid dimension at most 2^16 - 1 shares: their
  // products fit 32 bits (a 64-bit division would be a called subroutine).
  const unsigned chunks = unsigned(rows) * unsigned(cols / VEC);
  if constexpr (ALL_BLOCKS) {
    arrive_and_wait_all<Barrier>(counters, s.count);
    sum_shares<T, VEC, THREADS>(s, cols, int(chunks * unsigned(share) / unsigned(s.count)),
                                int(chunks * unsigned(share + 1) / unsigned(s.count)), out, ldc);
    depart<Barrier>(counters, s.count);
  } else {
    if (arrive_last<Barrier>(counters, s.count)) sum_shares<T, VEC, THREADS>(s, cols, 0, int(chunks), out, ldc);
  }
}

}  // namespace gemm::shapes
