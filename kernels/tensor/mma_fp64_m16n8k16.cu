// FP64 on the tensor cores with Hopper's large mma.sync shape: m16n8k16 f64 (sm_90 and later),
// 8x the multiply-adds of the Ampere m8n8k4 per instruction, with a multi-stage cp.async pipeline.
//
// Why a second FP64 rung: Hopper runs m8n8k4 at about half the FP64 tensor rate per busy cycle;
// the sm_90 shapes (m16n8k4/k8/k16) are the ones it runs at full rate, and k16 issues the fewest
// instructions. The fragments (g = lane / 4, t = lane % 4, PTX ISA "mma.m16n8k16 .f64"):
//   a[i] = A[g + 8 (i % 2)][t + 4 (i / 2)], i = 0..7   (A: 16 x 16)
//   b[j] = B[t + 4 j][g],                   j = 0..3   (B: 16 x 8)
//   c[r] = C[g + 8 (r / 2)][2t + (r % 2)],  r = 0..3   (C: 16 x 8)
//
// Block tile BM x BN, k-tiles of BK doubles (a multiple of 16), STAGES k-tiles in flight; warps
// tile the block WM x WN, each warp a grid of (WM/16) x (WN/8) m16n8 accumulators (4 doubles per
// lane each). The register file bounds the block: BM x BN doubles of accumulators take half of
// it at 128 x 128.
//
// Fragment loads are 8-byte LDS.64, one per fragment element, straight into the registers the
// DMMA reads. 16-byte loads would need MOVs: consecutive fragment registers are (row g, row g+8)
// of A and (k, k+4) of B, never neighbours in a row-major tile; the MOVs and the second copy of
// each fragment take registers the accumulators need (a 64 x 32 warp tile then spills).
// Bank conflicts (64-bit loads are served 16 lanes per pass, g = 0..3 or 4..7 and t = 0..3; rows
// are multiples of 16 doubles, so an element's bank pair is its column mod 16):
//  - A, k contiguous: a pass reads columns t + 4j of 4 rows g (4-way). Element k of row r is
//    stored at k ^ 4(r % 4): rows g move to distinct quarters of the 16 columns.
//  - B, n contiguous: a pass reads columns g (+ a multiple of 8) of the 4 rows t + 4j (4-way).
//    Element n of row k is stored at n ^ 4(k % 4), i.e. ^ 4t: 16 distinct bank pairs.
// The swizzles flip bits 2-3 of the element index, so 16-byte chunks (even, odd) stay whole:
// cp.async writes stay 16-byte and conflict-free.
//
// Tails: every copy is predicated (zero-filled outside the matrix), every store bounds-checked.
// The 16-byte copy needs K and N even; otherwise the same kernel with 8-byte copies runs.
// Each lane's outputs are 2 consecutive columns per n8 tile and row: 16-byte stores when N is even.
//
// The instruction exists only in code for compute capability 9.0 and later: the kernel body is
// compiled in those passes alone, and the variants refuse older devices (and builds without such
// a target) before launch.
#include <string>

#include "tensor_ptx.cuh"
#include "tensor_variant.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int VEC>
struct Fp64K16Tile {
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int MT = WM / 16;  // m16 tiles per warp
  static constexpr int NT = WN / 8;   // n8 tiles per warp
  // Blocks per SM that the 64K-register file holds when every thread may use 255 registers.
  static constexpr int MIN_BLOCKS = THREADS <= 128 ? 2 : 1;
  static constexpr std::size_t A_STAGE = std::size_t(BM) * BK;  // doubles
  static constexpr std::size_t B_STAGE = std::size_t(BK) * BN;
  static constexpr std::size_t SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(double);
  // Copies per stage: a thread copies the same column chunk of rows a fixed stride apart, so
  // its addresses and predicates are computed once and the copy loops unroll completely.
  static constexpr int A_CHUNKS_PER_ROW = BK / VEC, B_CHUNKS_PER_ROW = BN / VEC;
  static constexpr int A_ROW_STEP = THREADS / A_CHUNKS_PER_ROW;  // rows of A per pass
  static constexpr int B_ROW_STEP = THREADS / B_CHUNKS_PER_ROW;  // rows (k) of B per pass
  static constexpr int A_COPIES = BM / A_ROW_STEP, B_COPIES = BK / B_ROW_STEP;
  static_assert(BK % 16 == 0 && BN % 16 == 0, "the swizzles permute within 16-double groups");
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 16 == 0 && WN % 8 == 0, "warp tile: m16 x n8 tiles");
  static_assert(VEC == 1 || VEC == 2, "8- or 16-byte copies");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");
  static_assert(THREADS <= 1024, "too many warps");
  static_assert(THREADS % A_CHUNKS_PER_ROW == 0 && BM % A_ROW_STEP == 0, "A copies tile");
  static_assert(THREADS % B_CHUNKS_PER_ROW == 0 && BK % B_ROW_STEP == 0, "B copies tile");
  static_assert(SMEM_BYTES <= 227 * 1024, "the stages fit the opt-in shared memory of sm_90");

  // Element offsets inside a stage, swizzled as explained at the top.
  __device__ static int a_offset(int row, int k) { return row * BK + (k ^ ((row & 3) << 2)); }
  __device__ static int b_offset(int k, int n) { return k * BN + (n ^ ((k & 3) << 2)); }
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int VEC>
__global__ void __launch_bounds__(Fp64K16Tile<BM, BN, BK, WM, WN, STAGES, VEC>::THREADS,
                                  Fp64K16Tile<BM, BN, BK, WM, WN, STAGES, VEC>::MIN_BLOCKS)
    mma_fp64_m16n8k16_kernel(const double* A, const double* B, double* C, int M, int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Unreachable: can_implement refuses devices below 9.0. Fail loudly rather than leave C unwritten.
  __trap();
#else
  using P = Fp64K16Tile<BM, BN, BK, WM, WN, STAGES, VEC>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  double* As = reinterpret_cast<double*>(smem_raw);
  double* Bs = As + STAGES * P::A_STAGE;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / P::WARPS_N) * WM;
  const int wn0 = (warp % P::WARPS_N) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + BK - 1) / BK;

  // This thread's copies: A rows a_row + i A_ROW_STEP at column a_col of the k-tile, B rows
  // b_row + i B_ROW_STEP at column b_col of the block.
  const int a_row = tid / P::A_CHUNKS_PER_ROW, a_col = tid % P::A_CHUNKS_PER_ROW * VEC;
  const int b_row = tid / P::B_CHUNKS_PER_ROW, b_col = tid % P::B_CHUNKS_PER_ROW * VEC;
  const bool b_col_ok = n0 + b_col < N;  // N % VEC == 0: a chunk is wholly in or out

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    double* as = As + stage * P::A_STAGE;
    double* bs = Bs + stage * P::B_STAGE;
    const bool a_col_ok = k0 + a_col < K;  // K % VEC == 0: a chunk is wholly in or out
#pragma unroll
    for (int i = 0; i < P::A_COPIES; ++i) {
      const int r = a_row + i * P::A_ROW_STEP;
      const bool ok = a_col_ok && m0 + r < M;
      const double* src = ok ? A + (std::size_t(m0 + r) * K + k0 + a_col) : A;
      cp_async<VEC * 8>(as + P::a_offset(r, a_col), src, ok);
    }
#pragma unroll
    for (int i = 0; i < P::B_COPIES; ++i) {
      const int kr = b_row + i * P::B_ROW_STEP;
      const bool ok = b_col_ok && k0 + kr < K;
      const double* src = ok ? B + (std::size_t(k0 + kr) * N + n0 + b_col) : B;
      cp_async<VEC * 8>(bs + P::b_offset(kr, b_col), src, ok);
    }
  };

  double acc[P::MT][P::NT][4];
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < P::NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // k-tile kt has landed (for this thread's copies) ...
    __syncthreads();              // ... and for everyone's; stage kt-1 is free again
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next);
    cp_async_commit();  // always, so that the group count stays in step with kt

    const double* as = As + (kt % STAGES) * P::A_STAGE;
    const double* bs = Bs + (kt % STAGES) * P::B_STAGE;
#pragma unroll
    for (int kb = 0; kb < BK; kb += 16) {
      double b[P::NT][4];  // b[j][e] = B[kb + t + 4e][wn0 + 8j + g]
#pragma unroll
      for (int j = 0; j < P::NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) b[j][e] = bs[P::b_offset(kb + t + 4 * e, wn0 + 8 * j + g)];
#pragma unroll
      for (int i = 0; i < P::MT; ++i) {
        double a[8];  // a[e] = A[wm0 + 16i + g + 8(e % 2)][kb + t + 4(e / 2)]
#pragma unroll
        for (int e = 0; e < 8; ++e)
          a[e] = as[P::a_offset(wm0 + 16 * i + g + 8 * (e % 2), kb + t + 4 * (e / 2))];
#pragma unroll
        for (int j = 0; j < P::NT; ++j) mma_f64_16x8x16(acc[i][j], a, b[j]);
      }
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  // Lane (g, t) holds, per m16 tile i and n8 tile j, rows g (c[0], c[1]) and g+8 (c[2], c[3])
  // at the 2 consecutive columns 2t, 2t+1.
#pragma unroll
  for (int i = 0; i < P::MT; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + wm0 + 16 * i + 8 * h + g;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < P::NT; ++j) {
        const int col = n0 + wn0 + 8 * j + 2 * t;
        double* dst = C + std::size_t(row) * N + col;
        if (VEC == 2 && col + 1 < N) {  // N even: 16-byte aligned
          *reinterpret_cast<double2*>(dst) = make_double2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (col < N) dst[0] = acc[i][j][2 * h];
          if (col + 1 < N) dst[1] = acc[i][j][2 * h + 1];
        }
      }
    }
  }
#endif
}

// Why this build or this device cannot run the sm_90 shape, or nothing when it can.
std::optional<std::string> needs_sm90(const GemmShape&, const DeviceLimits& d) {
#ifndef GEMM_HAVE_SM90
  (void)d;
  return std::string("built without a compute capability 9.0+ target: mma.sync m16n8k16 f64 "
                     "needs CMAKE_CUDA_ARCHITECTURES to include 90 or later");
#else
  if (d.cc_major < 9)
    return "mma.sync m16n8k16 f64 needs compute capability 9.0 or later (this device: " +
           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
  return std::nullopt;
#endif
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
void add_config(std::vector<Variant>& out, Role role) {
  using P = Fp64K16Tile<BM, BN, BK, WM, WN, STAGES, 2>;
  out.push_back(shape_dispatch_variant<double>(
      "mma_fp64_m16n8k16",
      {{"bm", BM}, {"bn", BN}, {"bk", BK}, {"wm", WM}, {"wn", WN}, {"stages", STAGES}}, BM, BN,
      P::THREADS, P::SMEM_BYTES, mma_fp64_m16n8k16_kernel<BM, BN, BK, WM, WN, STAGES, 2>,
      mma_fp64_m16n8k16_kernel<BM, BN, BK, WM, WN, STAGES, 1>)
                    .precondition(needs_sm90)
                    .role(role)
                    .note("compute capability 9.0+; 16-byte cp.async when K and N are even, "
                          "8-byte copies otherwise")
                    .build());
}

}  // namespace

void add_mma_fp64_m16n8k16_variants(std::vector<Variant>& out) {
  // The representative: fastest of these at 4096^3 on an H100 (49.2 TFLOP/s against 45.8 for
  // BK 16 with 4 stages: half the k-tile barriers). The others are tagged tuning; compare them:
  // gemm-bench --tags=tensor_core,tuning,reference --precisions=fp64 --sizes=4096
  //   --benchmark_filter='^gemm/fp64/(cublas|mma_fp64_m16n8k16)/'
  add_config<128, 128, 32, 64, 32, 3>(out, Role::representative);
  add_config<128, 128, 16, 64, 32, 4>(out, Role::sweep);
  add_config<128, 128, 16, 32, 64, 4>(out, Role::sweep);
  add_config<128, 128, 16, 64, 32, 3>(out, Role::sweep);
  add_config<128, 64, 16, 64, 32, 4>(out, Role::sweep);
}

}  // namespace gemm
