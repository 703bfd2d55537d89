// The TF32 mma.sync block tile of the mma_tf32_pipelined rung (mma_tf32_pipelined.cu), as a
// type the rung's kernel and the split-K and stream-K schedules (kernels/shapes/) share: its
// shared-memory layout, the k-tiles of a range into the accumulators (mma_mainloop.cuh's
// pipeline), and the store of the accumulators.
//
// Shared layout, k-tiles of BK = 32 floats (A rows of 128 bytes = 8 chunks of 16 bytes):
//  - A, row-major (k contiguous, as in global memory), chunk c of row r stored at chunk
//    c ^ (r % 8). ldmatrix.x4 reads four 8-row x 16-byte blocks; 8 rows of one block sit in 8
//    different chunk columns: conflict-free. For 32-bit data ldmatrix (a b16 instruction) still
//    fits: a 16-byte row is 4 TF32 elements and lane (g, t) receives word t of row g, which is the
//    m16n8k8 A fragment (blocks: rows 0-7 / 8-15 x k 0-3 / 4-7 give a0, a1, a2, a3).
//  - B, row-major (n contiguous). Its fragment wants B[k][n] with lanes along n = g and k = t, i.e.
//    transposed relative to ldmatrix's rows, and ldmatrix.trans works on 16-bit halves, so B is
//    read with plain loads. They are made 16 bytes wide by permuting n: logical column g of n8 tile
//    4q + jj is actual column 32q + 4g + jj, so one LDS.128 of Bs[k][32q + 4g .. +3] feeds 4 tiles.
//    The accumulators come back in the same order, so each lane ends up with 8 consecutive
//    columns per row (two 16-byte stores). Chunk c of row k is stored at chunk c ^ 2(k % 4): a
//    pass of 8 lanes (2 chunks x 4 rows k = t) then hits 8 distinct chunk columns.
// The swizzles permute whole 16-byte chunks, so cp.async writes stay 16-byte and conflict-free.
// TF32 conversion: cp.async copies global memory into shared memory without registers, so the
// first place an FP32 word can be rounded is the fragment register it is loaded into: every
// fragment word is rounded to the nearest TF32 (cvt.rna, as cuBLAS's TF32 path does) between its
// ldmatrix / LDS.128 and the mma, by each warp that reads it (a word of A by BN / WN warps, of B
// by BM / WM): two instructions per word (to_tf32), two per mma of a 64 x 64 warp tile.
// Tf32Rounding::truncate leaves the words as they are: the tensor core reads their top 19 bits
// (truncation, twice the error of rounding) at no cost.
#pragma once

#include "mma_mainloop.cuh"
#include "tensor_ptx.cuh"

namespace gemm::tensor {

// The stage layout (mma_mainloop.cuh) with the swizzles described above, and what a block does
// with it; ROUNDING: what happens to the fragments on their way to the tensor core.
template <MmaSyncConfig CFG, int VEC_, Tf32Rounding ROUNDING>
struct Tf32PipeTileOf : MmaSyncStages<float, CFG, VEC_> {
  static constexpr int MT = CFG.wm / 16;  // m16 tiles per warp
  static constexpr int NQ = CFG.wn / 32;  // groups of 4 n8 tiles per warp
  static_assert(CFG.bk == 32, "the A swizzle assumes 128-byte rows of A");
  static_assert(CFG.wm % 16 == 0 && CFG.wn % 32 == 0, "warp tile: m16 tiles, groups of 4 n8 tiles");
  // Element copies (VEC 1, any shape) keep more addresses in registers: where the configuration
  // asks for several blocks per SM, that instance gives up one rather than spill (as the CUDA-core
  // pipeline's checked instances do).
  static constexpr int MIN_BLOCKS =
      VEC_ == 1 && CFG.min_blocks > 1 ? CFG.min_blocks - 1 : CFG.min_blocks;

  __device__ static int a_offset(int row, int k) { return row * CFG.bk + (k ^ ((row & 7) << 2)); }
  __device__ static int b_offset(int k, int n) { return k * CFG.bn + (n ^ ((k & 3) << 3)); }

  // One thread's accumulators: per m16 tile i and n8 tile j, the 4 floats of the fragment.
  struct Acc {
    float v[MT][4 * NQ][4];
  };

  // acc = the product of k-tiles [kt_begin, kt_end) of th's block tile.
  __device__ __forceinline__ static void mainloop(Acc& acc, const float* A, const float* B, int M,
                                                  int N, int K, const MmaSyncThread<CFG>& th,
                                                  int kt_begin, int kt_end,
                                                  unsigned char* smem_raw) {
    const int lane = threadIdx.x % 32, g = th.g, t = th.t, wm0 = th.wm0, wn0 = th.wn0;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < 4 * NQ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc.v[i][j][e] = 0.0f;

    // ldmatrix row address of this lane within an m16 x k8 block: lanes 8j..8j+7 address block j
    // (j = 0: rows 0-7, k 0-3; 1: rows 8-15, k 0-3; 2: rows 0-7, k 4-7; 3: rows 8-15, k 4-7).
    const int ld_row = (lane & 7) + ((lane >> 3) & 1) * 8;
    const int ld_k = (lane >> 4) * 4;

    auto k_tile = [&](const float* as, const float* bs) {
#pragma unroll
      for (int kk = 0; kk < CFG.bk; kk += 8) {
        std::uint32_t a[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          ldmatrix_x4(a[i], smem_addr(as + a_offset(wm0 + 16 * i + ld_row, kk + ld_k)));
          tf32_operands<ROUNDING>(a[i]);
        }
        uint4 b0[NQ], b1[NQ];
#pragma unroll
        for (int q = 0; q < NQ; ++q) {
          const int n = wn0 + 32 * q + 4 * g;
          const auto* b_lo = reinterpret_cast<const uint4*>(bs + b_offset(kk + t, n));
          const auto* b_hi = reinterpret_cast<const uint4*>(bs + b_offset(kk + t + 4, n));
          b0[q] = tf32_operands<ROUNDING>(*b_lo);
          b1[q] = tf32_operands<ROUNDING>(*b_hi);
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int q = 0; q < NQ; ++q) {
            const std::uint32_t bq[4][2] = {
                {b0[q].x, b1[q].x}, {b0[q].y, b1[q].y}, {b0[q].z, b1[q].z}, {b0[q].w, b1[q].w}};
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) mma_tf32_16x8x8(acc.v[i][4 * q + jj], a[i], bq[jj]);
          }
      }
    };
    mma_sync_mainloop<Tf32PipeTileOf>(A, B, M, N, K, th.m0, th.n0, kt_begin, kt_end,
                                    reinterpret_cast<float*>(smem_raw), k_tile);
  }

  // Stores th's block tile of an M x N row-major matrix (rows >= M, columns >= N left out).
  // Lane (g, t): rows g and g + 8 of each m16 tile; columns 32q + 8t .. +7 (the n permutation):
  // c[0] of tiles 4q..4q+3 are columns 8t + 0..3, c[1] columns 8t + 4..7 (c[2], c[3]: row g + 8).
  __device__ __forceinline__ static void store(const Acc& acc, float* C, int M, int N,
                                               const MmaSyncThread<CFG>& th) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = th.m0 + th.wm0 + 16 * i + th.g + 8 * h;
        if (row >= M) continue;
#pragma unroll
        for (int q = 0; q < NQ; ++q) {
          const int col = th.n0 + th.wn0 + 32 * q + 8 * th.t;
          const auto& a = acc.v[i];
          const float v[8] = {a[4 * q][2 * h],         a[4 * q + 1][2 * h],
                              a[4 * q + 2][2 * h],     a[4 * q + 3][2 * h],
                              a[4 * q][2 * h + 1],     a[4 * q + 1][2 * h + 1],
                              a[4 * q + 2][2 * h + 1], a[4 * q + 3][2 * h + 1]};
          store_row_segment<VEC_>(C + std::size_t(row) * N + col, col, N, v);
        }
      }
  }
};

// The tile of the study's TF32 kernels: fragments rounded to the nearest TF32.
template <MmaSyncConfig CFG, int VEC_>
using Tf32PipeTile = Tf32PipeTileOf<CFG, VEC_, Tf32Rounding::nearest>;

}  // namespace gemm::tensor
