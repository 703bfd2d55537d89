// The FP64 DMMA m16n8k16 block tile of the mma_fp64_m16n8k16 rung (mma_fp64_m16n8k16.cu), as a
// type the rung's kernel and the split-K and stream-K schedules (kernels/shapes/) share: its
// shared-memory layout, the k-tiles of a range into the accumulators (mma_mainloop.cuh's
// pipeline), and the store of the accumulators. The instruction exists in sm_90+ code only: the
// mainloop traps in older passes (the variants refuse older devices before launch).
//
// Why Hopper's shape: Hopper runs m8n8k4 at about half the FP64 tensor rate per busy cycle;
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
#pragma once

#include <optional>
#include <string>

#include "mma_mainloop.cuh"
#include "tensor_ptx.cuh"

namespace gemm::tensor {

// Why this build or this device cannot run the sm_90 shape, or nothing when it can.
inline std::optional<std::string> dmma_k16_reason(const GemmShape&, const DeviceLimits& d) {
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

// The stage layout (mma_mainloop.cuh) with the swizzles described above, and what a block does
// with it.
template <MmaSyncConfig CFG, int VEC_>
struct Fp64K16Tile : MmaSyncStages<double, CFG, VEC_> {
  static constexpr int MT = CFG.wm / 16;  // m16 tiles per warp
  static constexpr int NT = CFG.wn / 8;   // n8 tiles per warp
  static_assert(CFG.bk % 16 == 0 && CFG.bn % 16 == 0, "the swizzles permute within 16-double groups");
  static_assert(CFG.wm % 16 == 0 && CFG.wn % 8 == 0, "warp tile: m16 x n8 tiles");
  // Blocks per SM that the 64K-register file holds when every thread may use 255 registers.
  static constexpr int MIN_BLOCKS = CFG.threads() <= 128 ? 2 : 1;

  // Element offsets inside a stage, swizzled as explained at the top.
  __device__ static int a_offset(int row, int k) { return row * CFG.bk + (k ^ ((row & 3) << 2)); }
  __device__ static int b_offset(int k, int n) { return k * CFG.bn + (n ^ ((k & 3) << 2)); }

  // One thread's accumulators: per m16 tile i and n8 tile j, the 4 doubles of the fragment.
  struct Acc {
    double v[MT][NT][4];
  };

  // acc = the product of k-tiles [kt_begin, kt_end) of th's block tile.
  __device__ __forceinline__ static void mainloop(Acc& acc, const double* A, const double* B,
                                                  int M, int N, int K,
                                                  const MmaSyncThread<CFG>& th, int kt_begin,
                                                  int kt_end, unsigned char* smem_raw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    // Unreachable: the variants refuse devices below 9.0. Fail loudly rather than leave C unwritten.
    __trap();
#else
    const int g = th.g, t = th.t, wm0 = th.wm0, wn0 = th.wn0;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc.v[i][j][e] = 0.0;

    auto k_tile = [&](const double* as, const double* bs) {
#pragma unroll
      for (int kb = 0; kb < CFG.bk; kb += 16) {
        double b[NT][4];  // b[j][e] = B[kb + t + 4e][wn0 + 8j + g]
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) b[j][e] = bs[b_offset(kb + t + 4 * e, wn0 + 8 * j + g)];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          double a[8];  // a[e] = A[wm0 + 16i + g + 8(e % 2)][kb + t + 4(e / 2)]
#pragma unroll
          for (int e = 0; e < 8; ++e)
            a[e] = as[a_offset(wm0 + 16 * i + g + 8 * (e % 2), kb + t + 4 * (e / 2))];
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_f64_16x8x16(acc.v[i][j], a, b[j]);
        }
      }
    };
    mma_sync_mainloop<Fp64K16Tile>(A, B, M, N, K, th.m0, th.n0, kt_begin, kt_end,
                                   reinterpret_cast<double*>(smem_raw), k_tile);
#endif
  }

  // Stores out's block tile of an M x N row-major matrix (rows >= M, columns >= N left out).
  // Lane (g, t) holds, per m16 tile i and n8 tile j, rows g (c[0], c[1]) and g+8 (c[2], c[3])
  // at the 2 consecutive columns 2t, 2t+1.
  __device__ __forceinline__ static void store(const Acc& acc, double* C, int M, int N,
                                               const MmaSyncThread<CFG>& out) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = out.m0 + out.wm0 + 16 * i + 8 * h + out.g;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int col = out.n0 + out.wn0 + 8 * j + 2 * out.t;
          const double v[2] = {acc.v[i][j][2 * h], acc.v[i][j][2 * h + 1]};
          store_row_segment<VEC_>(C + std::size_t(row) * N + col, col, N, v);
        }
      }
    }
  }
};

}  // namespace gemm::tensor
