// The kernel of the async_pipeline, rasterized, mbarrier_stages and tuned rungs: warptile's warp
// tiling fed by a STAGES-deep cp.async pipeline. While the warps multiply k-tile kt
// out of one stage of shared memory, the copies of k-tiles kt+1 .. kt+STAGES-1 are in flight into
// the others; one __syncthreads per k-tile both publishes the stage that just landed and frees
// the one that was just consumed. No register staging: the copies go from global to shared
// memory directly.
// MBAR (mbarrier_stages): the __syncthreads is replaced by two mbarriers per stage, "landed" (every
// thread's copies into it arrived: cp.async.mbarrier.arrive) and "freed" (every thread read it),
// with STAGES - 2 k-tiles in flight: a stage is refilled only once every thread has read the
// k-tile two back, so a warp may run a k-tile ahead of the slowest one.
//
// The main loop is written for issue slots: on CUDA cores every instruction that is not an FMA
// takes an issue slot from one (FP32: one FFMA per slot at full rate), and a stall on a shared
// load right after the barrier idles the FMA pipe unless other warps fill it.
//   - Fragments are double-buffered in registers across k and across k-tiles: the barrier of a
//     k-tile sits before its last k step, and the first fragments of the next k-tile are loaded
//     right after it, so their latency hides behind the last k step's FMAs.
//   - Addresses: the block's k-tile is a 64-bit pointer per operand, advanced once per k-tile;
//     each thread's copies are 32-bit offsets from it fixed for the whole loop (one IMAD.WIDE per
//     row of A or B the thread copies; the k and column steps within a row are immediates, and
//     a thread's B copies share one k row wherever that keeps them conflict-free). Shared addresses are one stage offset plus
//     compile-time immediates. So a block tile's offsets must fit in 32 bits: BM * K and BK * N
//     below 2^31 (refused otherwise).
//   - The FMAs of a k step walk the thread tile row by row in alternating directions (zigzag):
//     consecutive FMAs share an operand everywhere, also across rows, so one of the three stays
//     in the operand reuse cache (bench/fp64_ceiling.cu: DFMAs alone keep the H100's FP64 pipe
//     91% busy in this order, 88% row by row).
//   - The copies of the fast path (mode 0) are predicated on "this k-tile exists", not branched
//     around, so they share a basic block with the FMAs and the scheduler interleaves them.
//
// Loads. cp.async copies bytes unchanged, so it cannot transpose a 16-byte piece of A; A is
// copied element by element (4- or 8-byte cp.async) into its transposed place. The lanes of a
// warp take KL = 32 bytes / sizeof(T) consecutive k of 32 / KL rows (one full sector per row,
// coalesced), and the rows of As are BM + 4 elements apart, so the KL lanes of one row land 4
// elements apart in the banks and the rows of the warp fill the gaps: conflict-free (FP32: k*4 + m
// covers the 32 banks; FP64, per half-warp: the 16 doubles cover them). B keeps its layout, and
// goes in 16-byte pieces when N % V == 0 (modes 0 and 1), or element by element (mode 2).
// A stage holds its A tile then its B tile, so one offset selects both.
//
// MODE 0: no bounds checks (M % BM == 0, N % BN == 0, K % BK == 0): the fast path.
// MODE 1: any M and K, N % V == 0: out-of-range elements are zero-filled by cp.async, 16-byte
//         B copies and C stores are checked per 16-byte chunk.
// MODE 2: any shape: B copied and C stored element by element, each checked.
// GROUP > 0 swizzles the block order (block_tile_coords) for L2 reuse.
#pragma once

#include <climits>

#include "warptile_core.cuh"

namespace gemm::ladder {

template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES,
          bool MBAR = false>
struct PipelineLayout {
  static constexpr int V = kVec<T>;
  static constexpr int KL = 32 / int(sizeof(T));  // lanes per row of A: one 32-byte sector
  static constexpr int A_PITCH = BM + 4;           // elements between k rows of As
  static constexpr int A_STAGE = BK * A_PITCH, B_STAGE = BK * BN;
  static constexpr int STAGE = A_STAGE + B_STAGE;  // elements per stage: As then Bs
  static constexpr std::size_t TILE_BYTES = std::size_t(STAGES) * STAGE * sizeof(T);
  // MBAR: a "landed" and a "free" mbarrier per stage after the tiles, 8-byte aligned:
  static_assert(TILE_BYTES % sizeof(std::uint64_t) == 0, "BK rows of an even pitch per stage");
  static constexpr std::size_t SMEM_BYTES = TILE_BYTES + (MBAR ? 2 * STAGES * sizeof(std::uint64_t) : 0);
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
};

// The mainloop: acc = the product of k-tiles [kt_begin, kt_end) of the block tile at (row0, col0)
// (set, not added to). Every thread of the block calls it, with the block's shared memory; no
// copy is in flight when it returns. The kernel below runs it over all of K, split-K and stream-K
// (kernels/shapes/) over part of it. Copies stop at k_limit: K, or the range's end where that
// comes first (so a range costs no instruction in the loop that K alone does not).
template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MODE,
          bool MBAR>
__device__ __forceinline__ void pipelined_mainloop(T (&acc)[TM][TN], const T* A, const T* B, int M,
                                                   int N, int K, int row0, int col0, int kt_begin,
                                                   int kt_end, int k_limit,
                                                   unsigned char* smem_raw) {
  using L = PipelineLayout<T, BM, BN, BK, WM, WN, TM, TN, STAGES, MBAR>;
  // FP64: paired lanes (warptile_core.cuh), so that every fragment load takes 2 cycles of the
  // shared-memory return: at 8 x 8 doubles the row-major lanes' loads of 8 warps used ~3/4 of it.
  using Tiling = WarpTiling<T, BM, BN, WM, WN, TM, TN, sizeof(T) == 8>;
  using Vec = vec16_t<T>;
  constexpr int V = L::V, KL = L::KL, THREADS = L::THREADS;
  constexpr int A_LOADS = BM * BK / THREADS;  // per thread per k-tile, elements
  constexpr int B_ELEMS = MODE == 2 ? 1 : V;  // elements per B copy
  constexpr int B_LOADS = BK * BN / B_ELEMS / THREADS;
  static_assert(STAGES >= 2, "a pipeline has at least two stages");
  static_assert(!MBAR || STAGES >= 3, "mbarrier stages: k-tiles in flight plus a free one");
  // k-tiles in flight ahead of the one being multiplied. Barrier: all but the stage being read.
  // MBAR: one fewer, so that a stage is rewritten two k-tiles after it was read and a warp may
  // run up to a k-tile ahead of the slowest one.
  constexpr int LEAD = MBAR ? STAGES - 2 : STAGES - 1;
  static_assert(MODE >= 0 && MODE <= 2, "modes 0, 1, 2");
  static_assert(BK % KL == 0, "a row of the A tile is whole 32-byte sectors");
  static_assert(BK % 2 == 0, "the next k-tile's first fragments go to register buffer 0");
  static_assert(BM % kPhaseElems<T> == 0, "A_PITCH = BM + 4 is conflict-free when BM fills phases");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN / B_ELEMS) % THREADS == 0,
                "every thread copies the same number of pieces");

  const T* const smem = reinterpret_cast<const T*>(smem_raw);  // STAGES x {[BK][A_PITCH], [BK][BN]}
  const std::uint32_t smem_base = smem_addr(smem_raw);
  const int tid = threadIdx.x;

  // Each thread's copies: the same tile-relative elements in every k-tile, a per-thread base
  // plus compile-time offsets. A: copy j is element tid + j * THREADS of the k-major walk.
  constexpr int A_STEP = THREADS / KL;  // rows of A that one pass of the block covers
  static_assert(THREADS % KL == 0 && (BM % A_STEP == 0 || A_STEP % BM == 0), "A copies tile the rows");
  const int a_m0 = BM % A_STEP == 0 ? tid / KL : (tid / KL) % BM;        // row
  const int a_k0 = (BM % A_STEP == 0 ? 0 : (tid / KL) / BM * KL) + tid % KL;  // k
  auto a_dm = [](int j) { return BM % A_STEP == 0 ? (j * A_STEP) % BM : 0; };
  auto a_dk = [](int j) { return BM % A_STEP == 0 ? (j * A_STEP) / BM * KL : j * (A_STEP / BM) * KL; };
  // B, where the threads of a k row still fill a shared-memory phase (128 bytes: conflict-free
  // copies, whole 128-byte lines): all of a thread's copies lie in one k row, B_TPR pieces apart,
  // at compile-time offsets from one pointer. Otherwise (4-byte copies with few threads per row)
  // copy j of a thread is piece tid + j * THREADS of the row-major walk, whose rows a pass apart
  // are run-time multiples of N.
  constexpr int B_PER_ROW = BN / B_ELEMS;  // pieces per k row
  constexpr int B_TPR = THREADS / BK;      // threads per k row with one row per thread
  constexpr bool B_ONE_ROW = THREADS % BK == 0 && B_PER_ROW % B_TPR == 0 &&
                             B_TPR * B_ELEMS * int(sizeof(T)) >= 128;
  static_assert(B_ONE_ROW || THREADS % B_PER_ROW == 0 || B_PER_ROW % THREADS == 0,
                "B copies tile the rows");
  const int b_r0 = B_ONE_ROW ? tid / B_TPR : THREADS % B_PER_ROW == 0 ? tid / B_PER_ROW : 0;
  const int b_c0 = (B_ONE_ROW ? tid % B_TPR : THREADS % B_PER_ROW == 0 ? tid % B_PER_ROW : tid) * B_ELEMS;
  auto b_dr = [](int j) { return B_ONE_ROW ? 0 : (j * THREADS) / B_PER_ROW; };
  auto b_dc = [](int j) {
    return B_ONE_ROW ? j * B_TPR * B_ELEMS
                     : (THREADS % B_PER_ROW == 0 ? 0 : (j * THREADS) % B_PER_ROW * B_ELEMS);
  };

  // Global: one pointer per operand to the thread's first copy in the current k-tile, advanced
  // once per k-tile; the other copies sit a block-uniform 32-bit offset away (a multiple of K
  // or N: a uniform register; none for B's one-row copies) plus a compile-time one (an immediate).
  const T* a_src = A + std::int64_t(row0 + a_m0) * K + kt_begin * BK + a_k0;
  const T* b_src = B + (std::int64_t(kt_begin) * BK + b_r0) * N + col0 + b_c0;
  const std::int64_t b_step = std::int64_t(BK) * N;
  // Shared: byte offsets of the thread's first A and B copy within a stage.
  const std::uint32_t a_dst = smem_base + (a_k0 * L::A_PITCH + a_m0) * sizeof(T);
  const std::uint32_t b_dst = smem_base + (L::A_STAGE + b_r0 * BN + b_c0) * sizeof(T);

  // Copies k-tile `kt` (where a_src and b_src point) into the stage at element offset
  // `stage`. Tiles past the end: mode 0 skips them (predicate), modes 1-2 zero-fill them (from
  // the unchecked address, see cp_async_zfill; a select of an address inside the matrix cost
  // two instructions per copy).
  auto load_tile = [&](int stage, int kt) {
    const int k0 = kt * BK;
    const bool exists = kt < kt_end;
#pragma unroll
    for (int j = 0; j < A_LOADS; ++j) {
      const T* src = a_src + a_dm(j) * K + a_dk(j);
      const std::uint32_t dst = a_dst + (stage + a_dk(j) * L::A_PITCH + a_dm(j)) * sizeof(T);
      if constexpr (MODE == 0) {
        cp_async_if<sizeof(T)>(dst, src, exists);
      } else {
        const bool ok = row0 + a_m0 + a_dm(j) < M && k0 + a_k0 + a_dk(j) < k_limit;
        cp_async_zfill<sizeof(T)>(dst, src, ok);
      }
    }
#pragma unroll
    for (int j = 0; j < B_LOADS; ++j) {
      const T* src = b_src + b_dr(j) * N + b_dc(j);
      const std::uint32_t dst = b_dst + (stage + b_dr(j) * BN + b_dc(j)) * sizeof(T);
      if constexpr (MODE == 0) {
        cp_async_if<B_ELEMS * sizeof(T)>(dst, src, exists);
      } else {
        // mode 1: N % V == 0, so a 16-byte piece is all in or all out
        const bool ok = k0 + b_r0 + b_dr(j) < k_limit && col0 + b_c0 + b_dc(j) < N;
        cp_async_zfill<B_ELEMS * sizeof(T)>(dst, src, ok);
      }
    }
    a_src += BK;
    b_src += b_step;
  };

  const Tiling t;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
  T frag_a[2][TM], frag_b[2][TN];
  // Fragments of k step k of the stage at element offset `stage` into register buffer `buf`.
  auto load_fragments = [&](int buf, int stage, int k) {
    const T* as = smem + stage + k * L::A_PITCH;
    const T* bs = smem + stage + L::A_STAGE + k * BN;
#pragma unroll
    for (int i = 0; i < TM / V; ++i) {
      const Vec a = load_vec(as + t.row(i));
#pragma unroll
      for (int e = 0; e < V; ++e) frag_a[buf][i * V + e] = vec_at(a, e);
    }
#pragma unroll
    for (int j = 0; j < TN / V; ++j) {
      const Vec b = load_vec(bs + t.col(j));
#pragma unroll
      for (int e = 0; e < V; ++e) frag_b[buf][j * V + e] = vec_at(b, e);
    }
  };
  // Where k-tiles sit in the ring of stages, and their barrier phases (MBAR). The barrier pipeline
  // needs only the stages' offsets: its state counts in elements.
  using State = PipelineState<STAGES, L::STAGE>;
  auto offset = [](const State& s) { return s.offset; };

  // MBAR: landed[s] completes when every thread's copies into stage s have arrived (each thread's
  // cp.async arrive-on counts once), free[s] when every thread has read it.
  std::uint64_t* const landed = reinterpret_cast<std::uint64_t*>(smem_raw + L::TILE_BYTES);
  std::uint64_t* const freed = landed + STAGES;
  if constexpr (MBAR) {
    if (tid == 0)
      for (int s = 0; s < STAGES; ++s) {
        mbar_init(landed + s, THREADS);
        mbar_init(freed + s, THREADS);
      }
    __syncthreads();
  }
  // After the copies of a k-tile: close its group (barrier), or arrive on its stage's `landed`.
  auto copies_issued = [&](const State& s) {
    if constexpr (MBAR) {
      cp_async_mbar_arrive(landed + s.index);
    } else {
      cp_async_commit();
    }
  };
  // Waits until the k-tile of `s` has landed for every thread.
  auto wait_landed = [&](const State& s) {
    if constexpr (MBAR) {
      mbar_wait(landed + s.index, s.phase);
    } else {
      cp_async_wait<STAGES - 2>();  // this thread's copies of the k-tile...
      __syncthreads();              // ...and every thread's; nobody reads the one before again
    }
  };

  // Prologue: LEAD k-tiles in flight (a missing one is an empty group or arrival: the counts stay
  // uniform), the first one landed, and its first fragments loaded.
#pragma unroll
  for (int s = 0; s < LEAD; ++s) {
    load_tile(offset(State::at(s)), kt_begin + s);
    copies_issued(State::at(s));
  }
  wait_landed(State{});
  load_fragments(0, 0, 0);

  State read;                       // k-tile kt
  State write = State::at(LEAD);    // k-tile kt + LEAD: where kt - 1 (barrier) or kt - 2 was
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    // Barrier: every thread's last reads of k-tile kt - 1 came before the previous barrier.
    // MBAR: wait for every thread's reads of k-tile kt - 2, the stage's previous tile (the
    // stage's phase before write's).
    if constexpr (MBAR) {
      if (kt - kt_begin >= 2) mbar_wait(freed + write.index, write.phase ^ 1u);
    }
    load_tile(offset(write), kt + LEAD);
    copies_issued(write);
    const State following = read.next();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) {
        load_fragments((k + 1) % 2, offset(read), k + 1);
      } else {
        wait_landed(following);
        load_fragments(0, offset(following), 0);
        // This thread's reads of k-tile kt are issued (the arrive orders them before it).
        if constexpr (MBAR) mbar_arrive(freed + read.index);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
          const int j = i % 2 ? TN - 1 - jj : jj;  // zigzag: see the header
          acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
        }
    }
    write = MBAR ? write.next() : read;  // barrier: k-tile kt's stage, read by now by everyone
    read = following;
  }
  cp_async_wait_all();  // no copy may still be writing shared memory when the block exits
}

template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES,
          int GROUP, int MODE, int MINB, bool MBAR>
// (Mode 1's predicates need a few more registers than mode 2's element copies: it gives up one
// block per SM rather than spill, which it did at MINB = 2 with BK = 16.)
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MODE == 1 && MINB > 1 ? MINB - 1 : MINB)
    pipelined_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  int tile_m, tile_n;
  block_tile_coords<GROUP>(tile_m, tile_n);
  T acc[TM][TN];
  pipelined_mainloop<T, BM, BN, BK, WM, WN, TM, TN, STAGES, MODE, MBAR>(
      acc, A, B, M, N, K, tile_m * BM, tile_n * BN, 0, (K + BK - 1) / BK, K, smem_raw);
  // The epilogue's coordinates are computed again rather than held in registers across the loop
  // (where the accumulators and both fragment buffers leave little room).
  int out_m, out_n;
  block_tile_coords<GROUP, true>(out_m, out_n);
  const WarpTiling<T, BM, BN, WM, WN, TM, TN, sizeof(T) == 8> out(reread_thread_index());
  store_tile<T, TM, TN, MODE != 0, MODE != 2>(C, M, N, out_m * BM, out_n * BN, out, acc);
}

}  // namespace gemm::ladder

namespace gemm {

// One configuration of the pipelined kernel: block, warp and thread tiles, stages, the block
// order's group (0: row-major), the blocks per SM __launch_bounds__ asks for, and whether stages
// are handed over on mbarriers instead of a __syncthreads per k-tile.
struct PipelinedConfig {
  int bm;
  int bn;
  int bk;
  int wm;
  int wn;
  int tm;
  int tn;
  int stages;
  int group;
  int minb;
  bool mbar = false;

  std::vector<Param> params() const {
    std::vector<Param> p = {{"bm", bm}, {"bn", bn}, {"bk", bk},         {"wm", wm},
                            {"wn", wn}, {"tm", tm}, {"tn", tn},         {"stages", stages},
                            {"group", group}, {"minb", minb}};
    if (mbar) p.push_back({"mbar", 1});  // named only where set: the barrier rungs keep their names
    return p;
  }
  // The same configuration with one field changed, for a rung's sweep.
  constexpr PipelinedConfig with_stages(int n) const {
    PipelinedConfig c = *this;
    c.stages = n;
    return c;
  }
  constexpr PipelinedConfig with_group(int n) const {
    PipelinedConfig c = *this;
    c.group = n;
    return c;
  }
  constexpr PipelinedConfig with_mbarriers() const {
    PipelinedConfig c = *this;
    c.mbar = true;
    return c;
  }
};

// The representatives of the pipelined rungs start from async_pipeline's configuration, and each
// rung above it changes one field (rasterized: group, mbarrier_stages: mbar). warptile's tiles,
// 4 stages (3 k-tiles in flight behind a __syncthreads, 2 on mbarriers: the stage of slack is
// what lets a warp run ahead), row-major block order, and the blocks per SM that warptile's
// kernel reaches at its register count.
inline constexpr PipelinedConfig kPipelinedRungFp32{
    .bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8, .tn = 8, .stages = 4, .group = 0,
    .minb = 2};
inline constexpr PipelinedConfig kPipelinedRungFp64{
    .bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8, .tn = 4, .stages = 4, .group = 0,
    .minb = 1};

// Which shapes a variant takes: any (mode 0 where the shape is whole tiles, mode 1 where N % V
// == 0, mode 2 otherwise), or whole tiles alone (mode 0's instance, refusing the rest: sweep
// instances, one kernel each keeps compile time down).
enum class Shapes { any, whole_tiles };

// Why a mode cannot take a shape.
template <typename T, PipelinedConfig C>
std::optional<std::string> pipelined_mode_reason(int mode, const GemmShape& s) {
  constexpr int V = ladder::kVec<T>;
  if (mode == 0) {
    if (s.m % C.bm) return "M % " + std::to_string(C.bm) + " != 0: the unchecked instance needs whole block tiles";
    if (s.n % C.bn) return "N % " + std::to_string(C.bn) + " != 0: the unchecked instance needs whole block tiles";
    if (s.k % C.bk) return "K % " + std::to_string(C.bk) + " != 0: the unchecked instance needs whole k-tiles";
  }
  if (mode == 1 && s.n % V)
    return "N % " + std::to_string(V) + " != 0: 16-byte copies of B and stores of C need N a multiple of " +
           std::to_string(V);
  return std::nullopt;
}

// Why the kernel cannot take a shape in any mode: a thread's copy offsets within a block tile are
// 32-bit (BM rows of A, BK rows of B).
template <PipelinedConfig C>
std::optional<std::string> pipelined_offsets_reason(const GemmShape& s) {
  if (std::int64_t(C.bm) * s.k > INT_MAX)
    return "K > " + std::to_string(INT_MAX / C.bm) + ": the copy offsets within a " +
           std::to_string(C.bm) + "-row tile of A are 32-bit";
  if (std::int64_t(C.bk) * s.n > INT_MAX)
    return "N > " + std::to_string(INT_MAX / C.bk) + ": the copy offsets within a " +
           std::to_string(C.bk) + "-row tile of B are 32-bit";
  return std::nullopt;
}

// The mode a shape needs: the fastest one that can take it.
template <typename T, PipelinedConfig C>
int pipelined_mode_for(const GemmShape& s) {
  if (!pipelined_mode_reason<T, C>(0, s)) return 0;
  if (!pipelined_mode_reason<T, C>(1, s)) return 1;
  return 2;
}

// The kernel of a configuration in a mode.
template <typename T, PipelinedConfig C, int MODE>
constexpr GemmKernel<T> pipelined_instance() {
  return ladder::pipelined_kernel<T, C.bm, C.bn, C.bk, C.wm, C.wn, C.tm, C.tn, C.stages, C.group,
                                  MODE, C.minb, C.mbar>;
}

// A variant of one configuration, taking the shapes S says.
template <typename T, PipelinedConfig C, Shapes S = Shapes::any>
VariantBuilder pipelined_variant(const char* family) {
  using L = ladder::PipelineLayout<T, C.bm, C.bn, C.bk, C.wm, C.wn, C.tm, C.tn, C.stages, C.mbar>;
  const auto kernel_for = [](const GemmShape& s) {
    if constexpr (S == Shapes::whole_tiles) {
      return pipelined_instance<T, C, 0>();
    } else {
      const int mode = pipelined_mode_for<T, C>(s);
      return mode == 0   ? pipelined_instance<T, C, 0>()
             : mode == 1 ? pipelined_instance<T, C, 1>()
                         : pipelined_instance<T, C, 2>();
    }
  };
  const auto plan = [tile = block_tile_plan(C.bm, C.bn, L::THREADS, L::SMEM_BYTES)](
                        const GemmShape& s) {
    LaunchPlan p = tile(s);
    p.tile_k = C.bk;
    // Mode 2 stores C element by element through the warps' static buffers (warptile_core.cuh).
    if (S != Shapes::whole_tiles && pipelined_mode_for<T, C>(s) == 2)
      p.static_smem_bytes = ladder::rows_store_bytes<T, C.bm, C.bn, C.wm, C.wn, C.tm>();
    return p;
  };
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(C.params())
      .launch(kernel_per_shape<T>(plan, kernel_for))
      .outputs_per_thread(C.tm * C.tn)
      .precondition([](const GemmShape& s, const DeviceLimits& d) -> std::optional<std::string> {
        if (auto why = needs_sm80(d)) return why;
        if (auto why = pipelined_offsets_reason<C>(s)) return why;
        if constexpr (S == Shapes::whole_tiles) return pipelined_mode_reason<T, C>(0, s);
        return std::nullopt;
      });
  if (C.mbar) b.spins();  // stages handed over on mbarriers: warps poll them
  return b;
}

// A rung of the pipelined kernel: its FP32 and FP64 representatives (any shape) and FP32 sweep
// instances (whole tiles only).
template <PipelinedConfig FP32, PipelinedConfig FP64, PipelinedConfig... SWEEP>
void add_pipelined_rung(std::vector<Variant>& out, const char* family, const char* sweep_note = "") {
  const char* any = "any shape: an unchecked fast path on whole tiles";
  out.push_back(pipelined_variant<float, FP32>(family).representative().note(any).build());
  out.push_back(pipelined_variant<double, FP64>(family).representative().note(any).build());
  (out.push_back(pipelined_variant<float, SWEEP, Shapes::whole_tiles>(family)
                     .sweep()
                     .note(sweep_note)
                     .build()),
   ...);
}

}  // namespace gemm
