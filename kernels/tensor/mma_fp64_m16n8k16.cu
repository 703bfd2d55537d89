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
//
// SASS: DMMA.16x8x16 (tests/cpu/sass_test.py: every kernel of this family executes it)
#include <string>

#include "mma_mainloop.cuh"
#include "tensor_ptx.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// The stage layout (mma_mainloop.cuh) with the swizzles described above.
template <MmaSyncConfig C, int VEC>
struct Fp64K16Tile : MmaSyncStages<double, C, VEC> {
  static constexpr int MT = C.wm / 16;  // m16 tiles per warp
  static constexpr int NT = C.wn / 8;   // n8 tiles per warp
  static_assert(C.bk % 16 == 0 && C.bn % 16 == 0, "the swizzles permute within 16-double groups");
  static_assert(C.wm % 16 == 0 && C.wn % 8 == 0, "warp tile: m16 x n8 tiles");

  // Element offsets inside a stage, swizzled as explained at the top.
  __device__ static int a_offset(int row, int k) { return row * C.bk + (k ^ ((row & 3) << 2)); }
  __device__ static int b_offset(int k, int n) { return k * C.bn + (n ^ ((k & 3) << 2)); }
};

// Blocks per SM that the 64K-register file holds when every thread may use 255 registers.
constexpr int register_file_blocks(MmaSyncConfig c) { return c.threads() <= 128 ? 2 : 1; }

// P: the Fp64K16Tile of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS, register_file_blocks(P::CONFIG))
    mma_fp64_m16n8k16_kernel(const double* A, const double* B, double* C, int M, int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Unreachable: can_implement refuses devices below 9.0. Fail loudly rather than leave C unwritten.
  __trap();
#else
  constexpr MmaSyncConfig CFG = P::CONFIG;
  constexpr int VEC = P::VEC;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const MmaSyncThread<CFG> th;
  const int g = th.g, t = th.t, wm0 = th.wm0, wn0 = th.wn0;

  double acc[P::MT][P::NT][4];
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < P::NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

  auto k_tile = [&](const double* as, const double* bs) {
#pragma unroll
    for (int kb = 0; kb < CFG.bk; kb += 16) {
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
  };
  mma_sync_mainloop<P>(A, B, M, N, K, th.m0, th.n0, 0, (K + CFG.bk - 1) / CFG.bk,
                       reinterpret_cast<double*>(smem_raw), k_tile);

  // Lane (g, t) holds, per m16 tile i and n8 tile j, rows g (c[0], c[1]) and g+8 (c[2], c[3])
  // at the 2 consecutive columns 2t, 2t+1.
  // Computed again rather than held across the mainloop: registers are tight at 32 x 64 warp tiles.
  const MmaSyncThread<CFG> out = MmaSyncThread<CFG>::reread();
#pragma unroll
  for (int i = 0; i < P::MT; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = out.m0 + out.wm0 + 16 * i + 8 * h + out.g;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < P::NT; ++j) {
        const int col = out.n0 + out.wn0 + 8 * j + 2 * out.t;
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

template <MmaSyncConfig C>
void add_config(std::vector<Variant>& out) {
  out.push_back(mma_sync_variant<double, C>("mma_fp64_m16n8k16",
                                            mma_fp64_m16n8k16_kernel<Fp64K16Tile<C, 2>>,
                                            mma_fp64_m16n8k16_kernel<Fp64K16Tile<C, 1>>)
                    .precondition(needs_sm90)
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
  for_each_config<MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                .role = Role::representative},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 32, .wn = 64, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 3},
                  MmaSyncConfig{.bm = 128, .bn = 64, .bk = 16, .wm = 64, .wn = 32, .stages = 4}>(
      [&]<MmaSyncConfig C>() { add_config<C>(out); });
}

}  // namespace gemm
