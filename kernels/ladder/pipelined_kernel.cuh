// The kernel of rungs 6-8 (async_pipeline.cu, rasterized.cu, tuned.cu): rung 5's warp tiling fed
// by a STAGES-deep cp.async pipeline. While the warps multiply k-tile kt out of one stage of
// shared memory, the copies of k-tiles kt+1 .. kt+STAGES-1 are in flight into the others; one
// __syncthreads per k-tile both publishes the stage that just landed and frees the one that was
// just consumed. No register staging: the copies go from global to shared memory directly.
//
// Loads. cp.async copies bytes unchanged, so it cannot transpose a 16-byte piece of A; A is
// copied element by element (4- or 8-byte cp.async) into its transposed place. The lanes of a
// warp take KL = 32 bytes / sizeof(T) consecutive k of 32 / KL rows (one full sector per row,
// coalesced), and the rows of As are BM + 4 elements apart, so the KL lanes of one row land 4
// elements apart in the banks and the rows of the warp fill the gaps: conflict-free (FP32: k*4 + m
// covers the 32 banks; FP64, per half-warp: the 16 doubles cover them). B keeps its layout, and
// goes in 16-byte pieces when N % V == 0 (modes 0 and 1), or element by element (mode 2).
//
// MODE 0: no bounds checks (M % BM == 0, N % BN == 0, K % BK == 0): the fast path.
// MODE 1: any M and K, N % V == 0: out-of-range elements are zero-filled by cp.async, 16-byte
//         B copies and C stores are checked per 16-byte chunk.
// MODE 2: any shape: B copied and C stored element by element, each checked.
// GROUP > 0 swizzles the block order (block_tile_coords) for L2 reuse.
#pragma once

#include "warptile_core.cuh"

namespace gemm::ladder {

template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct PipelineLayout {
  static constexpr int V = kVec<T>;
  static constexpr int KL = 32 / int(sizeof(T));  // lanes per row of A: one 32-byte sector
  static constexpr int A_PITCH = BM + 4;           // elements between k rows of As
  static constexpr int A_STAGE = BK * A_PITCH, B_STAGE = BK * BN;
  static constexpr std::size_t SMEM_BYTES = std::size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(T);
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
};

template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES,
          int GROUP, int MODE, int MINB>
// (Mode 1's predicates need a few more registers than mode 2's element copies: it gives up one
// block per SM rather than spill, which it did at MINB = 2 with BK = 16.)
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MODE == 1 && MINB > 1 ? MINB - 1 : MINB)
    pipelined_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  using L = PipelineLayout<T, BM, BN, BK, WM, WN, TM, TN, STAGES>;
  using Tiling = WarpTiling<T, BM, BN, WM, WN, TM, TN>;
  constexpr int V = L::V, KL = L::KL, THREADS = L::THREADS;
  constexpr int A_LOADS = BM * BK / THREADS;  // per thread per k-tile, elements
  constexpr int B_ELEMS = MODE == 2 ? 1 : V;  // elements per B copy
  constexpr int B_LOADS = BK * BN / B_ELEMS / THREADS;
  static_assert(STAGES >= 2, "a pipeline has at least two stages");
  static_assert(MODE >= 0 && MODE <= 2, "modes 0, 1, 2");
  static_assert(BK % KL == 0, "a row of the A tile is whole 32-byte sectors");
  static_assert(BM % kPhaseElems<T> == 0, "A_PITCH = BM + 4 is conflict-free when BM fills phases");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN / B_ELEMS) % THREADS == 0,
                "every thread copies the same number of pieces");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const As = reinterpret_cast<T*>(smem_raw);  // STAGES x [BK][A_PITCH]
  T* const Bs = As + STAGES * L::A_STAGE;         // STAGES x [BK][BN]

  int tile_m, tile_n;
  block_tile_coords<GROUP>(tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int tid = threadIdx.x;
  const int k_tiles = (K + BK - 1) / BK;

  // Each thread's copies: the same tile-relative elements in every k-tile. Copy j of a thread
  // is element tid + j * THREADS; its row and k (A) or row and column (B) are a per-thread base
  // plus compile-time offsets, so the loop keeps two offsets per operand, not one per copy.
  constexpr int A_STEP = THREADS / KL;  // rows of A that one pass of the block covers
  static_assert(THREADS % KL == 0 && (BM % A_STEP == 0 || A_STEP % BM == 0), "A copies tile the rows");
  const int a_m0 = BM % A_STEP == 0 ? tid / KL : (tid / KL) % BM;        // row
  const int a_k0 = (BM % A_STEP == 0 ? 0 : (tid / KL) / BM * KL) + tid % KL;  // k
  constexpr int B_PER_ROW = BN / B_ELEMS;
  static_assert(THREADS % B_PER_ROW == 0 || B_PER_ROW % THREADS == 0, "B copies tile the rows");
  const int b_r0 = THREADS % B_PER_ROW == 0 ? tid / B_PER_ROW : 0;
  const int b_c0 = (THREADS % B_PER_ROW == 0 ? tid % B_PER_ROW : tid) * B_ELEMS;
  auto a_dm = [](int j) { return BM % A_STEP == 0 ? (j * A_STEP) % BM : 0; };
  auto a_dk = [](int j) { return BM % A_STEP == 0 ? (j * A_STEP) / BM * KL : j * (A_STEP / BM) * KL; };
  auto b_dr = [](int j) { return (j * THREADS) / B_PER_ROW; };
  auto b_dc = [](int j) { return THREADS % B_PER_ROW == 0 ? 0 : (j * THREADS) % B_PER_ROW * B_ELEMS; };
  const T* const a_src = A + std::int64_t(row0 + a_m0) * K + a_k0;
  const T* const b_src = B + std::int64_t(b_r0) * N + col0 + b_c0;

  auto load_tile = [&](int stage, int k0) {
    T* as = As + stage * L::A_STAGE + a_k0 * L::A_PITCH + a_m0;
    T* bs = Bs + stage * L::B_STAGE + b_r0 * BN + b_c0;
#pragma unroll
    for (int j = 0; j < A_LOADS; ++j) {
      const T* src = a_src + std::int64_t(a_dm(j)) * K + (k0 + a_dk(j));
      T* dst = as + a_dk(j) * L::A_PITCH + a_dm(j);
      if constexpr (MODE == 0) {
        cp_async<sizeof(T)>(dst, src);
      } else {
        const bool ok = row0 + a_m0 + a_dm(j) < M && k0 + a_k0 + a_dk(j) < K;
        cp_async<sizeof(T)>(dst, ok ? src : A, ok);
      }
    }
#pragma unroll
    for (int j = 0; j < B_LOADS; ++j) {
      const T* src = b_src + std::int64_t(k0 + b_dr(j)) * N + b_dc(j);
      T* dst = bs + b_dr(j) * BN + b_dc(j);
      if constexpr (MODE == 0) {
        cp_async<B_ELEMS * sizeof(T)>(dst, src);
      } else {
        // mode 1: N % V == 0, so a 16-byte piece is all in or all out
        const bool ok = k0 + b_r0 + b_dr(j) < K && col0 + b_c0 + b_dc(j) < N;
        cp_async<B_ELEMS * sizeof(T)>(dst, ok ? src : B, ok);
      }
    }
  };

  const Tiling t;
  T acc[TM][TN] = {};

  // Prologue: STAGES - 1 k-tiles in flight. Empty groups keep the wait counts uniform.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s * BK);
    cp_async_commit();
  }
  int read_stage = 0, write_stage = STAGES - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // k-tile kt has landed (for this thread's copies)...
    __syncthreads();              // ...for every thread's; and stage kt-1 is free again
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_tile(write_stage, next * BK);
    cp_async_commit();
    warp_tile_k_tile<T, BK, TM, TN>(
        As + read_stage * L::A_STAGE, Bs + read_stage * L::B_STAGE, t, acc,
        [](int k) { return k * L::A_PITCH; }, [](int k) { return k * BN; });
    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();
  store_tile<T, TM, TN, MODE != 0, MODE != 2>(C, M, N, row0, col0, t, acc);
}

}  // namespace gemm::ladder

namespace gemm {

// Why a mode cannot take a shape.
template <typename T, int BM, int BN, int BK>
std::optional<std::string> pipelined_mode_reason(int mode, const GemmShape& s) {
  constexpr int V = ladder::kVec<T>;
  if (mode == 0) {
    if (s.m % BM) return "M % " + std::to_string(BM) + " != 0: the unchecked instance needs whole block tiles";
    if (s.n % BN) return "N % " + std::to_string(BN) + " != 0: the unchecked instance needs whole block tiles";
    if (s.k % BK) return "K % " + std::to_string(BK) + " != 0: the unchecked instance needs whole k-tiles";
  }
  if (mode == 1 && s.n % V)
    return "N % " + std::to_string(V) + " != 0: 16-byte copies of B and stores of C need N a multiple of " +
           std::to_string(V);
  return std::nullopt;
}

// The mode a shape needs: the fastest one that can take it.
template <typename T, int BM, int BN, int BK>
int pipelined_mode_for(const GemmShape& s) {
  if (!pipelined_mode_reason<T, BM, BN, BK>(0, s)) return 0;
  if (!pipelined_mode_reason<T, BM, BN, BK>(1, s)) return 1;
  return 2;
}

// One configuration; `kernel(mode)` names the instance of a mode.
template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES,
          int GROUP, int MINB>
struct PipelinedConfig {
  using L = ladder::PipelineLayout<T, BM, BN, BK, WM, WN, TM, TN, STAGES>;
  using Kernel = void (*)(const T*, const T*, T*, int, int, int);
  template <int MODE>
  static Kernel kernel() {
    return ladder::pipelined_kernel<T, BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP, MODE, MINB>;
  }
  // ONLY >= 0: that mode's instance alone; -1: all three, chosen per shape.
  template <int ONLY>
  static Kernel kernel(int mode) {
    if constexpr (ONLY >= 0) {
      return kernel<ONLY>();
    } else {
      return mode == 0 ? kernel<0>() : mode == 1 ? kernel<1>() : kernel<2>();
    }
  }
  static std::vector<Param> params() {
    return {{"bm", BM}, {"bn", BN}, {"bk", BK},         {"wm", WM},       {"wn", WN},
            {"tm", TM}, {"tn", TN}, {"stages", STAGES}, {"group", GROUP}, {"minb", MINB}};
  }
};

// A variant of one configuration. ONLY == -1: any shape, mode 0 where the shape is whole tiles,
// mode 1 where N % V == 0, mode 2 otherwise. ONLY >= 0: that mode's instance alone, refusing the
// shapes it cannot take (sweep instances: one kernel each keeps compile time down).
template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES,
          int GROUP, int MINB, int ONLY = -1>
Variant pipelined_variant(const char* family) {
  using Cfg = PipelinedConfig<T, BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP, MINB>;
  Variant v;
  v.family = family;
  v.param_fields = Cfg::params();
  v.params = params_name(v.param_fields);
  v.precision = precision_of<T>();
  v.compute = compute_of<T>();
  v.backend = Backend::cuda_kernel;
  v.unit_roundoff = unit_roundoff(v.compute);
  v.outputs_per_thread = TM * TN;
  auto plan = [](const GemmShape& s) {
    const int mode = ONLY >= 0 ? ONLY : pipelined_mode_for<T, BM, BN, BK>(s);
    LaunchPlan p = block_tile_plan(BM, BN, Cfg::L::THREADS, Cfg::L::SMEM_BYTES)(s);
    p.kernel = reinterpret_cast<const void*>(Cfg::template kernel<ONLY>(mode));
    return p;
  };
  v.plan = plan;
  v.run = [plan](const Operands& ops, cudaStream_t stream) {
    const LaunchPlan p = plan(ops.shape);
    launch(p, stream, reinterpret_cast<typename Cfg::Kernel>(const_cast<void*>(p.kernel)),
           static_cast<const T*>(ops.a), static_cast<const T*>(ops.b), static_cast<T*>(ops.c),
           int(ops.shape.m), int(ops.shape.n), int(ops.shape.k));
  };
  v.can_implement = [](const GemmShape& s, const DeviceLimits& d) -> std::optional<std::string> {
    if (auto why = needs_sm80(d)) return why;
    if (ONLY >= 0) return pipelined_mode_reason<T, BM, BN, BK>(ONLY, s);
    return std::nullopt;
  };
  return v;
}

}  // namespace gemm
