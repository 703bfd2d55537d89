// The warp-tiled core of warptile and the pipelined rungs (pipelined_kernel.cuh): block tile
// (BM x BN) -> warp tiles (WM x WN) -> thread tiles (TM x TN). A warp's 32 lanes form an LM x LN
// grid (LM = WM / TM, LN = WN / TN); each thread's TM rows are TM / V chunks of V = 16 /
// sizeof(T) consecutive rows, LM * V rows apart, and the same for its TN columns. So for one k:
//   A: TM / V LDS.128 per thread; lanes of one warp read only LM distinct chunks (broadcasts);
//   B: TN / V LDS.128 per thread; the LN lanes of a row read LN consecutive 16-byte chunks, so
//      each quarter-warp reads 8 distinct bank groups: conflict-free without padding.
// A warp's shared reads stay within a WM- and a WN-element window of each k row, and each
// thread does TM * TN FMAs per (TM + TN) / V shared loads.
//
// PAIRED lanes (the pipelined kernel's FP64 instances): shared memory returns 128 bytes (one
// register of the warp) per cycle, so an LDS.128 takes 4 cycles, or 2 when every pair of lanes
// (n, n ^ 1) or every pair (n, n ^ 2) reads one address (the return is packed). Row-major lanes
// give that to A only (lanes n and n ^ 1 share lane_m); PAIRED puts lane bit 0 on M and the next
// log2(LN) bits on N, so A's address ignores bit 1 (pairs n, n ^ 2) and B's ignores bit 0 (pairs
// n, n ^ 1): both take 2 cycles. A 16-lane request still reads consecutive 16-byte chunks.
#pragma once

#include "ladder_common.cuh"

namespace gemm::ladder {

template <typename T, int BM, int BN, int WM, int WN, int TM, int TN, bool PAIRED = false>
struct WarpTiling {
  static constexpr int V = kVec<T>;
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int LM = WM / TM, LN = WN / TN;  // lanes along M and N within a warp
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles divide the block tile");
  static_assert(WM % TM == 0 && WN % TN == 0, "thread tiles divide the warp tile");
  static_assert(TM % V == 0 && TN % V == 0, "thread tiles are whole 16-byte chunks");
  static_assert(LM * LN == 32, "a warp tile holds exactly 32 thread tiles");
  static_assert(THREADS <= 1024, "at most 1024 threads");
  static_assert(!PAIRED || (LM >= 2 && LN >= 2), "paired lanes need two lanes along M and N");

  int warp_m, warp_n, lane_m, lane_n;  // the thread's place in the block and in its warp
  __device__ __forceinline__ WarpTiling() : WarpTiling(threadIdx.x) {}
  __device__ __forceinline__ explicit WarpTiling(int tid) {
    const int warp = tid / 32, lane = tid % 32;
    warp_m = warp / WARPS_N;
    warp_n = warp % WARPS_N;
    if constexpr (PAIRED) {
      lane_m = (lane & 1) | (lane >> 1) / LN * 2;
      lane_n = (lane >> 1) % LN;
    } else {
      lane_m = lane / LN;  // consecutive lanes walk N: B reads are consecutive chunks
      lane_n = lane % LN;
    }
  }
  // Tile-relative row of the thread's chunk i (0 <= i < TM / V) and column of chunk j.
  __device__ __forceinline__ int row(int i) const { return warp_m * WM + i * LM * V + lane_m * V; }
  __device__ __forceinline__ int col(int j) const { return warp_n * WN + j * LN * V + lane_n * V; }
};

// One k-tile of FMAs from shared memory: As[k * A_PITCH' + m] (k-major; row k starts at
// a_row(k)), Bs[k * B_PITCH + n]. Fragments are double-buffered in registers so the loads of
// k + 1 are in flight during the FMAs of k.
template <typename T, int BK, int TM, int TN, typename Tiling, typename ARow, typename BRow>
__device__ __forceinline__ void warp_tile_k_tile(const T* As, const T* Bs, const Tiling& t,
                                                 T (&acc)[TM][TN], ARow a_row, BRow b_row) {
  using Vec = vec16_t<T>;
  constexpr int V = kVec<T>;
  T frag_a[2][TM], frag_b[2][TN];
  auto load = [&](int buf, int k) {
#pragma unroll
    for (int i = 0; i < TM / V; ++i) {
      const Vec a = load_vec(As + a_row(k) + t.row(i));
#pragma unroll
      for (int e = 0; e < V; ++e) frag_a[buf][i * V + e] = vec_at(a, e);
    }
#pragma unroll
    for (int j = 0; j < TN / V; ++j) {
      const Vec b = load_vec(Bs + b_row(k) + t.col(j));
#pragma unroll
      for (int e = 0; e < V; ++e) frag_b[buf][j * V + e] = vec_at(b, e);
    }
  };
  load(0, 0);
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    if (k + 1 < BK) load((k + 1) % 2, k + 1);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
  }
}

// Element stores for rows of C that do not start on 16-byte boundaries (N % V != 0). Straight
// from the registers, one store instruction's lanes would write words 16 bytes apart (a lane's
// chunk is V consecutive elements): 4 (FP32) or 2 (FP64) times the L2 sector writes of the
// 16-byte path, and at 2049 x 2047 x 33 the split-K kernel took 1.7 times as long as at
// 2049 x 2048 x 33. So each warp passes its warp tile through a shared-memory buffer of its own,
// one row group at a time (its LM lanes' rows for one i: LM x WN elements), and then stores 32
// consecutive elements of one row per instruction. Rows of the buffer are padded by one element:
// a lane writes bank lane_m + V lane_n (FP32), distinct for the 32 x 64 warp tiles (LM = 4 =
// V); the 64 x 32 one (LM = 8) writes 2-way conflicts.
template <typename T, int TM, int TN, bool CHECK, typename Tiling>
__device__ __forceinline__ void store_tile_by_rows(T* C, int M, int N, int row0, int col0,
                                                   const Tiling& t, const T (&acc)[TM][TN]) {
  constexpr int V = kVec<T>, LM = Tiling::LM, WN = Tiling::LN * TN, PITCH = WN + 1;
  constexpr int WARPS = Tiling::THREADS / 32;
  static_assert(WN % 32 == 0, "a warp tile row is whole runs of 32 elements");
  __shared__ T rows[WARPS][LM * PITCH];
  T* const buf = rows[t.warp_m * Tiling::WARPS_N + t.warp_n];
  const int lane = threadIdx.x % 32;
  const int warp_col = col0 + t.warp_n * WN;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN / V; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e)
        buf[t.lane_m * PITCH + (t.col(j) - t.warp_n * WN) + e] = acc[i][j * V + e];
    __syncwarp();
    const int first_row = row0 + t.row(i / V) - t.lane_m * V + i % V;  // lane_m 0's row
#pragma unroll
    for (int rr = 0; rr < LM; ++rr) {
      const int r = first_row + rr * V;
#pragma unroll
      for (int q = 0; q < WN / 32; ++q) {
        const int c = warp_col + q * 32 + lane;
        if (!CHECK || (r < M && c < N)) C[std::int64_t(r) * N + c] = buf[rr * PITCH + q * 32 + lane];
      }
    }
    __syncwarp();  // every lane has read the group before the next one is written
  }
}

// The static shared memory of store_tile_by_rows for a block's warp tiling (0 where its stores
// do not go through it): for the launch plan's account of the block's shared memory.
template <typename T, int BM, int BN, int WM, int WN, int TM>
constexpr std::size_t rows_store_bytes() {
  return WN % 32 == 0 ? std::size_t(BM / WM) * (BN / WN) * (WM / TM) * (WN + 1) * sizeof(T) : 0;
}

// Writes the thread's TM x TN outputs. CHECK_ROWS_COLS: skip what falls outside C.
// VECTOR: 16-byte stores (needs N % V == 0 so every chunk is all in or all out and aligned);
// otherwise element stores, whole rows of the warp tile at a time where its rows are runs of 32
// (store_tile_by_rows).
template <typename T, int TM, int TN, bool CHECK, bool VECTOR, typename Tiling>
__device__ __forceinline__ void store_tile(T* C, int M, int N, int row0, int col0, const Tiling& t,
                                           const T (&acc)[TM][TN]) {
  using Vec = vec16_t<T>;
  constexpr int V = kVec<T>;
  if constexpr (!VECTOR && (Tiling::LN * TN) % 32 == 0) {
    store_tile_by_rows<T, TM, TN, CHECK>(C, M, N, row0, col0, t, acc);
  } else {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int r = row0 + t.row(i / V) + i % V;
#pragma unroll
      for (int j = 0; j < TN / V; ++j) {
        const int c = col0 + t.col(j);
        T* out = C + std::int64_t(r) * N + c;
        if constexpr (VECTOR) {
          if (!CHECK || (r < M && c < N)) {
            Vec v;
            if constexpr (V == 4) {
              v = {acc[i][j * 4], acc[i][j * 4 + 1], acc[i][j * 4 + 2], acc[i][j * 4 + 3]};
            } else {
              v = {acc[i][j * 2], acc[i][j * 2 + 1]};
            }
            store_vec(out, v);
          }
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (!CHECK || (r < M && c + e < N)) out[e] = acc[i][j * V + e];
        }
      }
    }
  }
}

}  // namespace gemm::ladder
