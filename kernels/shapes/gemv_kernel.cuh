// The kernel for a few rows of A (M <= 16: a language model's decode step, one row per token in
// flight): C (M x N) = A (M x K) B (K x N), bound by reading B once. Each B element feeds M
// multiply-adds, against the 64 of a 128 x 128 tile's 16 KB k-tile row, so the question is only
// how fast B streams in: the kernel keeps many 16-byte loads of B in flight on every SM and
// touches each byte of B exactly once.
//
// Work split. A block of WARPS warps owns BN = 32 * CPL consecutive columns of C (CPL columns
// per lane: VPL 16-byte vectors, lane l's vector j at columns (32 j + l) * V .. + V - 1, so one
// load instruction of a warp reads 512 contiguous bytes of a row of B) and one K slice (of
// k_slices) of the K range; its warps take consecutive sub-ranges of that slice. Per step of V
// rows (V = 16 / sizeof(T): one 16-byte vector of a row of A), a lane loads V x VPL vectors of B
// and, per row m of A, the vector A[m][k .. k + V - 1] (the same address for the whole warp:
// one transaction, from L1 after the first block that reads it), and does MT x V x CPL FMAs.
// UNROLL steps of B loads are issued before the first FMA.
//
// Sums. The warps' partial sums meet in shared memory and are added in warp order; with more
// than one K slice each block stores its sum as a partial tile (split-K's layout: one M x N
// matrix per slice in the workspace) and the slices are added in slice order
// (partial_tiles.cuh): the result is the same bit for bit in every run.
//
// MT >= M rows are computed (the instance with the smallest MT of 1, 2, 4, 8, 16 runs), rows of
// A past M read as zeros. ALIGNED (K and N multiples of V): 16-byte loads of A and B and stores
// of C; otherwise the same walk with element loads, each checked.
#pragma once

#include <cstdint>
#include <type_traits>

#include "shapes/partial_tiles.cuh"

namespace gemm::shapes {

// One configuration: warps per block (each a K sub-range), 16-byte vectors of B per lane
// (columns per lane = vectors x 16 / sizeof(T)), steps of B loads in flight at up to 4 rows.
struct GemvConfig {
  int warps;
  int vectors;
  int unroll;
};

// A configuration's geometry for element type T and MT rows (the largest M the instance takes).
// Kernels take it as their type parameter.
template <typename T_, GemvConfig C, int MT_>
struct GemvShape {
  using T = T_;
  static constexpr GemvConfig CONFIG = C;
  static constexpr int MT = MT_;
  static constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte vector
  static constexpr int CPL = C.vectors * V;      // columns per lane
  static constexpr int BN = 32 * CPL;            // columns per block
  static constexpr int WARPS = C.warps;
  static constexpr int THREADS = 32 * C.warps;
  static constexpr int STEP = V;                 // rows of B per step (one vector of A)
  // Steps of B in flight: fewer as the rows of A grow, whose vectors take registers too.
  static constexpr int UNROLL = C.unroll * 4 / (MT > 4 ? MT : 4) > 0 ? C.unroll * 4 / (MT > 4 ? MT : 4) : 1;
  static constexpr int K_UNIT = WARPS * STEP;    // a K slice is whole steps of every warp
  // Eight or more rows leave registers for one step of B per batch: batches are double-buffered.
  static constexpr bool PREFETCH = MT >= 8;
  // Blocks per SM for __launch_bounds__: a register budget of 128 per thread for one row, 255
  // for the sums of more.
  static constexpr int MIN_BLOCKS =
      65536 / (THREADS * (MT >= 2 ? 256 : 128)) > 0 ? 65536 / (THREADS * (MT >= 2 ? 256 : 128)) : 1;
  static constexpr std::size_t SMEM_BYTES = std::size_t(WARPS) * MT * BN * sizeof(T);
  static_assert(C.warps >= 1 && C.warps <= 16, "1 to 16 warps");
  static_assert(C.vectors == 1 || C.vectors == 2, "one or two vectors of B per lane");
  static_assert(MT == 1 || MT == 2 || MT == 4 || MT == 8 || MT == 16, "rows: 1, 2, 4, 8, 16");
  static_assert(C.unroll >= 1 && C.unroll <= 8, "1 to 8 steps in flight");
};

// k_slice: the K rows per slice (a multiple of K_UNIT); shares.count slices (gridDim.y), each
// stored as an M x N matrix (`shares`, origin n0 set per block). With one slice the block stores
// C directly and the workspace is unused. all_blocks: the grid is resident all at once (a
// cooperative launch) and every slice's block sums a share of its columns; otherwise the last
// slice to arrive sums them (partial_tiles.cuh).
template <typename S, bool ALIGNED>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    gemv_kernel(const typename S::T* __restrict__ A, const typename S::T* __restrict__ B,
                typename S::T* __restrict__ Cm, int M, int N, int K, int k_slice,
                MatrixShares<typename S::T> shares, unsigned* counters, bool all_blocks) {
  using T = typename S::T;
  constexpr GemvConfig C = S::CONFIG;
  constexpr int V = S::V, CPL = S::CPL, MT = S::MT, STEP = S::STEP, U = S::UNROLL;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const sums = reinterpret_cast<T*>(smem_raw);  // [warp][m][column of the block]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int n0 = blockIdx.x * S::BN;
  const int slice = blockIdx.y;
  // This warp's rows of B: a contiguous share of the slice, in whole steps.
  const int per_warp = k_slice / C.warps;
  const int k_begin = slice * k_slice + warp * per_warp;
  const int k_end = min(k_begin + per_warp, K);

  // Column of element e (0 <= e < CPL) of this lane: vector e / V, element e % V.
  auto column = [&](int e) { return n0 + ((e / V) * 32 + lane) * V + e % V; };

  T acc[MT][CPL];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int e = 0; e < CPL; ++e) acc[m][e] = T(0);

  using Vec = std::conditional_t<sizeof(T) == 4, float4, double2>;
  auto vec_elem = [](const Vec& v, int i) -> T {
    if constexpr (sizeof(T) == 4) {
      return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    } else {
      return i == 0 ? v.x : v.y;
    }
  };

  // B: U steps of STEP rows from k0, CPL columns each (zeros past k_end or N).
  using BSteps = T[U][STEP][CPL];
  auto load_b = [&](int k0, BSteps& b) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < STEP; ++r) {
        const int k = k0 + u * STEP + r;
        const T* row = B + std::int64_t(k) * N;
#pragma unroll
        for (int j = 0; j < C.vectors; ++j) {
          const int col = column(j * V);
          if constexpr (ALIGNED) {
            Vec v = {};
            if (k < k_end && col < N) v = __ldg(reinterpret_cast<const Vec*>(row + col));
#pragma unroll
            for (int i = 0; i < V; ++i) b[u][r][j * V + i] = vec_elem(v, i);
          } else {
#pragma unroll
            for (int i = 0; i < V; ++i)
              b[u][r][j * V + i] = k < k_end && col + i < N ? __ldg(row + col + i) : T(0);
          }
        }
      }
  };
  // PREFETCH (many rows, few steps): the next steps' loads are issued before this step's FMAs,
  // so that a warp keeps two batches of B in flight where registers allow only one step each.
  BSteps b, next;
  if constexpr (S::PREFETCH) load_b(k_begin, next);
  for (int k0 = k_begin; k0 < k_end; k0 += U * STEP) {
    if constexpr (S::PREFETCH) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < STEP; ++r)
#pragma unroll
          for (int e = 0; e < CPL; ++e) b[u][r][e] = next[u][r][e];
      if (k0 + U * STEP < k_end) load_b(k0 + U * STEP, next);
    } else {
      load_b(k0, b);  // all U steps before the first FMA
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int k = k0 + u * STEP;
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        T a[STEP];
        const T* arow = A + std::int64_t(m) * K + k;
        if constexpr (ALIGNED) {
          Vec v = {};
          if (m < M && k < k_end) v = __ldg(reinterpret_cast<const Vec*>(arow));
#pragma unroll
          for (int i = 0; i < STEP; ++i) a[i] = vec_elem(v, i);
        } else {
#pragma unroll
          for (int i = 0; i < STEP; ++i) a[i] = m < M && k + i < k_end ? __ldg(arow + i) : T(0);
        }
#pragma unroll
        for (int r = 0; r < STEP; ++r)
#pragma unroll
          for (int e = 0; e < CPL; ++e) acc[m][e] += a[r] * b[u][r][e];
      }
    }
  }

  // The warps' sums, added in warp order.
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int e = 0; e < CPL; ++e)
      sums[(warp * MT + m) * S::BN + ((e / V) * 32 + lane) * V + e % V] = acc[m][e];
  __syncthreads();
  const int cols = min(S::BN, N - n0);
  const int rows = min(M, MT);
  const bool direct = shares.count == 1;
  T* const out = direct ? Cm : shares.matrix(slice);
  for (int i = threadIdx.x; i < rows * S::BN; i += S::THREADS) {
    const int m = i / S::BN, c = i % S::BN;
    if (c >= cols) continue;
    T sum = sums[m * S::BN + c];
#pragma unroll
    for (int w = 1; w < C.warps; ++w) sum += sums[(w * MT + m) * S::BN + c];
    out[std::int64_t(m) * N + n0 + c] = sum;
  }
  if (direct) return;
  // The slices' sums, added in slice order.
  shares.n0 = n0;
  constexpr int VEC = ALIGNED ? V : 1;
  if (all_blocks)
    finish_tile<T, VEC, S::THREADS, true>(shares, slice, counters + 2 * blockIdx.x, rows, cols,
                                          Cm + n0, N);
  else
    finish_tile<T, VEC, S::THREADS, false>(shares, slice, counters + 2 * blockIdx.x, rows, cols,
                                           Cm + n0, N);
}

}  // namespace gemm::shapes
