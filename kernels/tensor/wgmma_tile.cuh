// The pieces the wgmma rungs share (sm_90a; included only by their files, which the build
// compiles for that target alone): the configuration, the tile geometry, the stages with their
// full/empty barriers and the producer's and consumers' step on them, the k-tile's wgmmas with
// B^T as the register operand, the conflict-free fragment loads of B^T from its swizzled TMA
// boxes, the store of the C^T accumulators, and the host side's variant facts and launch.
// wgmma_tma.cu explains the operand layout; the kernels differ in how blocks walk the tiles (one
// tile per block, or a persistent grid).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "launch.cuh"
#include "sm90a_ptx.cuh"
#include "tma_maps.h"
#include "tma_padded.cuh"

namespace gemm::tensor {

// One configuration: a block computes a BM x BN tile of C with BN / 64 consumer warpgroups and
// one producer warpgroup, through STAGES k-tiles of BK = 32 in shared memory.
struct WgmmaTmaConfig {
  int bm;
  int bn;
  int stages;
  Role role = Role::sweep;

  static constexpr int bk = 32;  // one 128-byte swizzle row of FP32 along K
  constexpr int consumers() const { return bn / 64; }
  constexpr int threads() const { return consumers() * 128 + 128; }
  // Registers per thread after setmaxnreg: the producer keeps few, the consumers share the rest
  // of the 64K-register file (multiples of 8).
  constexpr int producer_registers() const { return consumers() <= 2 ? 40 : 24; }
  constexpr int consumer_registers() const {
    return ((65536 - 128 * producer_registers()) / (128 * consumers()) / 8) * 8 > 256
               ? 256
               : ((65536 - 128 * producer_registers()) / (128 * consumers()) / 8) * 8;
  }
  constexpr std::size_t stage_bytes() const {
    return std::size_t(bm) * bk * 4 + std::size_t(bk) * bn * 4;
  }
  // The stages, the full/empty mbarriers, and 1 KB of slack to align the tiles to 1024 bytes
  // (the 128-byte swizzle pattern repeats every 1024 bytes and wgmma assumes it starts aligned).
  constexpr std::size_t smem_bytes() const {
    return stages * stage_bytes() + 2 * stages * 8 + 1024;
  }
};

template <int BM, int BN, int STAGES>
struct WgTile {
  static constexpr int BK = WgmmaTmaConfig::bk;
  static constexpr int CONSUMERS = BN / 64;
  static constexpr int THREADS = CONSUMERS * 128 + 128;
  static constexpr int A_BYTES = BM * BK * 4;
  static constexpr int B_BOX_BYTES = 32 * BK * 4;  // 32 columns x BK rows
  static constexpr int B_BYTES = BN * BK * 4;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr int ACC = BM / 2;  // FP32 accumulators per thread: 64 x BM / 128 threads
  // The stages, the full/empty barriers, 1 KB of slack for the alignment (WgmmaTmaConfig's).
  static constexpr std::size_t SMEM_BYTES = std::size_t(STAGES) * STAGE_BYTES + 2 * STAGES * 8 + 1024;
  static_assert(BM == 64 || BM == 128 || BM == 256, "wgmma N (= BM here) of 64, 128 or 256");
  static_assert(BN % 64 == 0 && BN >= 64 && BN <= 256, "64 columns per consumer warpgroup");
  static_assert(A_BYTES % 1024 == 0 && STAGE_BYTES % 1024 == 0, "1024-byte aligned tiles");
  static_assert(STAGES >= 2, "at least two stages to overlap copies with math");
};

// Where a consumer thread's B^T fragment rows live: lane (g, t) of warp w in warpgroup wg takes
// the column pair (n_in_box, n_in_box + 1) of 32-column box `box` (see wgmma_tma.cu).
struct FragmentSlot {
  int box, n_in_box, chunk, word, t;
  __device__ __forceinline__ FragmentSlot(int warp, int lane) {
    const int wg = warp / 4, w = warp % 4, g = lane / 4;
    t = lane % 4;
    box = 2 * wg + w / 2;
    n_in_box = 8 * (w % 2) + 2 * (g % 2) + 16 * ((g / 2) % 2) + 4 * (g / 4);
    chunk = n_in_box / 4;
    word = n_in_box % 4;
  }
};

// The TF32 operands. B^T, the register operand, is rounded to the nearest TF32 (cvt.rna, as
// cuBLAS's TF32 path does) as its fragments are loaded: 3 instructions for each of a consumer
// thread's 16 fragment words per k-tile, against the 4 wgmmas they feed. A^T, the shared-memory operand, goes from
// TMA to the tensor core without passing a register, so the tensor core truncates it (reads the
// top 19 bits): rounding it would take a pass over each stage in shared memory (a load, the
// rounding and a store of every element of A's tile, then a barrier and an async-proxy fence
// before the wgmmas), shared-memory traffic as large as the wgmmas' own reads of the tile.
inline constexpr Tf32Rounding kWgmmaRoundingA = Tf32Rounding::truncate;
inline constexpr Tf32Rounding kWgmmaRoundingB = Tf32Rounding::nearest;

// One k-tile (BK = 32) of the block's MMA from a full stage: the thread's B^T fragments, then
// the four k8 wgmmas against the A tile, waited for before the stage is released.
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void mma_k_tile(float (&d)[BM / 2], const unsigned char* stage,
                                           const FragmentSlot& slot) {
  using P = WgTile<BM, BN, STAGES>;
  const unsigned char* bbox = stage + P::A_BYTES + slot.box * P::B_BOX_BYTES;
  std::uint32_t a[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int k = 8 * kk + slot.t + 4 * h;  // k % 8 == t + 4h: the swizzle key of row k
      const uint2 v = *reinterpret_cast<const uint2*>(bbox + k * 128 +
                                                      ((slot.chunk ^ (k & 7)) << 4) + slot.word * 4);
      a[kk][2 * h] = tf32_operand<kWgmmaRoundingB>(v.x);      // row g (column n_in_box)
      a[kk][2 * h + 1] = tf32_operand<kWgmmaRoundingB>(v.y);  // row g + 8 (n_in_box + 1)
    }
  wgmma_fence();
  const std::uint32_t a_tile = smem_addr(stage);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_tf32_rs<BM>(d, a[kk], desc_k_major_sw128(a_tile + 32 * kk));
  wgmma_commit();
  wgmma_wait<0>();  // the stage (and the fragment registers) are free again
}

// The stages in dynamic shared memory, aligned to 1024 bytes (the 128-byte swizzle pattern
// repeats every 1024 bytes and wgmma assumes it starts aligned), and their barriers: "full"
// completes when the producer's TMA bytes of a stage have landed, "empty" when every consumer
// warp has released it. Producer and consumers each walk the block's k-tiles, in the order the
// producer issues them, with a State of their own.
template <int BM, int BN, int STAGES>
struct WgPipeline {
  using P = WgTile<BM, BN, STAGES>;
  using State = PipelineState<STAGES>;
  unsigned char* smem;
  std::uint64_t* full;
  std::uint64_t* empty;

  // Thread 0 initializes the barriers; every thread returns after the block barrier.
  __device__ __forceinline__ explicit WgPipeline(unsigned char* smem_raw) {
    const std::uint32_t raw_addr = smem_addr(smem_raw);
    smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);  // the SMEM_BYTES slack pays for it
    full = reinterpret_cast<std::uint64_t*>(smem + STAGES * P::STAGE_BYTES);
    empty = full + STAGES;
    if (threadIdx.x == 0) {
      for (int s = 0; s < STAGES; ++s) {
        mbar_init(&full[s], 1);                  // the producer's arrive.expect_tx
        mbar_init(&empty[s], P::CONSUMERS * 4);  // one arrival per consumer warp
      }
      fence_barrier_init();
    }
    __syncthreads();
  }

  // The producer thread: k-tile kt of the block tile at (m0, n0) into the stage of `s`, once the
  // consumers have released the k-tile that stage held, the phase before s's. (On the first pass
  // over the stages that is the phase before a fresh barrier's first, which counts as complete:
  // no wait.)
  __device__ __forceinline__ void produce(const State& s, int kt, int m0, int n0,
                                          const CUtensorMap& map_a,
                                          const CUtensorMap& map_b) const {
    mbar_wait(&empty[s.index], s.phase ^ 1u);
    unsigned char* stage = smem + s.index * P::STAGE_BYTES;
    mbar_arrive_expect_tx(&full[s.index], P::STAGE_BYTES);
    tma_load_2d(stage, &map_a, kt * P::BK, m0, &full[s.index]);
#pragma unroll
    for (int j = 0; j < BN / 32; ++j)
      tma_load_2d(stage + P::A_BYTES + j * P::B_BOX_BYTES, &map_b, n0 + 32 * j, kt * P::BK,
                  &full[s.index]);
  }

  // A consumer warp: waits for the k-tile of `s`, multiplies it into d, releases the stage.
  __device__ __forceinline__ void consume(float (&d)[BM / 2], const State& s,
                                          const FragmentSlot& slot, int lane) const {
    mbar_wait(&full[s.index], s.phase);
    mma_k_tile<BM, BN, STAGES>(d, smem + s.index * P::STAGE_BYTES, slot);
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s.index]);
  }
};

// Columns n and n + 1 of one row of C: one 8-byte store where rows are an even number of floats
// apart (n is even, so the pair is aligned and n < N implies n + 1 < N), else two 4-byte ones.
__device__ __forceinline__ void store_c_pair(float* row, int n, int N, float x, float y) {
  if (N % 2 == 0) {
    *reinterpret_cast<float2*>(row + n) = make_float2(x, y);
  } else {
    row[n] = x;
    if (n + 1 < N) row[n + 1] = y;
  }
}

// d holds C^T: fragment row g <-> column n, row g + 8 <-> column n + 1; fragment column
// 8i + 2t (+1) <-> row m (+1) of C. C is stored as it lies (rows N apart, any N).
template <int BM>
__device__ __forceinline__ void store_c_transposed(const float (&d)[BM / 2], float* C, int M, int N,
                                                   int m0, int n0, const FragmentSlot& slot) {
  const int n = n0 + slot.box * 32 + slot.n_in_box;
  if (n >= N) return;
#pragma unroll
  for (int i = 0; i < BM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * slot.t;
    if (m < M) store_c_pair(C + std::size_t(m) * N, n, N, d[4 * i], d[4 * i + 2]);
    if (m + 1 < M) store_c_pair(C + std::size_t(m + 1) * N, n, N, d[4 * i + 1], d[4 * i + 3]);
  }
}

// --- host ----------------------------------------------------------------------------------
// Every wgmma kernel has this signature: the operands, then the tensor maps of A and B.
using WgKernel = void (*)(const float*, const float*, float*, int, int, int, CUtensorMap,
                          CUtensorMap);

// The facts the wgmma rungs share: the block tile's parameters (then the family's `more`), FP32
// storage with TF32 arithmetic, outputs per thread counted over the consumers, the C^T note, the
// workspace of the padded copies any K or N needs, and the precondition (sm_90a code on a 9.0
// device).
inline VariantBuilder wgmma_variant(const std::string& family, const WgmmaTmaConfig& tile,
                                    std::vector<Param> more = {}) {
  std::vector<Param> fields = {
      {"bm", tile.bm}, {"bn", tile.bn}, {"bk", tile.bk}, {"stages", tile.stages}};
  fields.insert(fields.end(), more.begin(), more.end());
  VariantBuilder b = VariantBuilder::of<float>(family);
  b.params(std::move(fields))
      .compute(Compute::tf32)
      .spins()  // producer and consumers poll the stages' full/empty mbarriers
      .outputs_per_thread(double(tile.bm) * tile.bn / (tile.consumers() * 128))
      .note("computes C^T = B^T A^T: tf32 wgmma needs K-major shared operands and B is N-major, "
            "so B^T is the register operand; B rounded to TF32 (cvt.rna) in the registers, A "
            "truncated to TF32 by the tensor core (it goes from TMA to the tensor core without a "
            "register); outputs per thread counted per tile over the consumer warpgroups; K or N "
            "not a multiple of 4: A (B) copied to 16-byte row strides first, in the time")
      .workspace([](const GemmShape& s) { return TmaPadding(s).bytes(); })
      .precondition([](const GemmShape&, const DeviceLimits& d) -> std::optional<std::string> {
        if (d.cc_major != 9 || d.cc_minor != 0)
          return "sm_90a code runs on compute capability 9.0 only (this device: " +
                 std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
        return std::nullopt;
      });
  return b;
}

// The launch of `kernel` with `tile`'s block and shared memory, `grid` blocks for a shape, and
// the tensor maps of A and B (boxes of BM rows of A).
inline KernelLaunch wgmma_launch(const WgmmaTmaConfig& tile,
                                 std::function<Dim3(const GemmShape&)> grid, WgKernel kernel) {
  KernelLaunch l;
  l.plan = [tile, grid, kernel](const GemmShape& s) {
    LaunchPlan p;
    p.block = {tile.threads(), 1, 1};
    p.grid = grid(s);
    p.dynamic_smem_bytes = tile.smem_bytes();
    p.kernel = reinterpret_cast<const void*>(kernel);
    return p;
  };
  l.run = [plan = l.plan, bm = tile.bm, kernel](const Operands& ops, cudaStream_t stream) {
    // Rows of A or B not a multiple of 16 bytes: padded copies first (tma_padded.cuh); C is
    // stored in place.
    const TmaOperands t = tma_operands(ops, stream);
    const int m = int(ops.shape.m), n = int(ops.shape.n), k = int(ops.shape.k);
    const TmaMapPair& maps = tma_maps_for(bm, WgmmaTmaConfig::bk, t.a, t.lda, t.b, t.ldb, m, n, k);
    launch(plan(ops.shape), stream, kernel, t.a, t.b, static_cast<float*>(ops.c), m, n, k, maps.a,
           maps.b);
  };
  return l;
}

// One configuration of a wgmma family: wgmma_variant's facts, the launch of `kernel` on `grid`'s
// blocks, the family's own `more` parameters and `facts`, and the unit roundoff of the operands'
// TF32 conversion (one truncated, one rounded).
template <WgmmaTmaConfig C>
Variant wgmma_config_variant(const std::string& family, std::vector<Param> more,
                             std::function<Dim3(const GemmShape&)> grid, WgKernel kernel,
                             const std::function<void(VariantBuilder&)>& facts = {}) {
  static_assert(WgTile<C.bm, C.bn, C.stages>::SMEM_BYTES == C.smem_bytes(),
                "host and device agree on the shared-memory size");
  VariantBuilder b = wgmma_variant(family, C, std::move(more));
  b.launch(wgmma_launch(C, std::move(grid), kernel)).role(C.role);
  if (facts) facts(b);
  Variant v = b.build();
  v.unit_roundoff = tf32_unit_roundoff(kWgmmaRoundingA, kWgmmaRoundingB);
  return v;
}

}  // namespace gemm::tensor
