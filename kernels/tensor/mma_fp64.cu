// FP64 on the tensor cores: mma.sync m8n8k4 (DMMA) with a multi-stage cp.async pipeline.
//
// Block tile BM x BN, k-tiles of BK doubles (a multiple of 16), STAGES k-tiles in flight; warps
// tile the block WM x WN, each warp a grid of (WM/8) x (WN/8) m8n8 accumulators (2 doubles per
// lane each).
//
// Fragment loads are 16-byte LDS.128, made possible by two free permutations:
//  - k: the multiply sums over k, so any pairing of A's and B's k is fine as long as both use
//    the same one. Two consecutive m8n8k4 steps s = 0, 1 use, at lane (g, t), logical k = t, mapped
//    to actual k = 2t + s: the A elements of both steps are adjacent (one LDS.128 of A[row][2t..2t+1]).
//  - n: the columns of a pair of n8 tiles (2q, 2q+1) are interleaved, logical column g of tile
//    2q + jj being actual column 16q + 2g + jj: one LDS.128 of B[k][16q+2g..+1] gives the B element
//    of both tiles. The accumulators come back in the same interleaving, which makes each lane's
//    outputs 4 consecutive columns: the epilogue stores 2 x 16 bytes per row.
// Bank conflicts (128-bit loads are served 8 lanes per pass): the 8 lanes of a pass read 2 rows
// of A at the same 64 bytes (rows a multiple of 128 B apart: 2-way) and 4 rows of B at the same
// 32 bytes (4-way). XOR swizzles of the 16-byte chunk index (A: chunk ^ 4 on odd rows; B: chunk
// ^ 2*t on rows 2t+s) spread both over all 32 banks; cp.async writes whole chunks, so the swizzle
// costs the writes nothing.
//
// Tails: every copy is predicated (zero-filled outside the matrix), every store bounds-checked.
// The 16-byte copy needs K and N even; otherwise the same kernel with 8-byte copies runs.
//
// SASS: DMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
#include "mma_mainloop.cuh"
#include "tensor_ptx.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// The stage layout (mma_mainloop.cuh) with the swizzles described above.
template <MmaSyncConfig C, int VEC>
struct Fp64Tile : MmaSyncStages<double, C, VEC> {
  static constexpr int MT = C.wm / 8;   // m8 tiles per warp
  static constexpr int NQ = C.wn / 16;  // pairs of n8 tiles per warp
  static_assert(C.bk % 16 == 0, "rows of A a multiple of 128 bytes: the A swizzle assumes them");
  static_assert(C.wm % 8 == 0 && C.wn % 16 == 0, "warp tile: m8 tiles, pairs of n8 tiles");
  static_assert(C.bn % 16 == 0, "the B swizzle permutes within 16-double groups");

  // Element offsets inside a stage, swizzled as explained at the top.
  __device__ static int a_offset(int row, int k) { return row * C.bk + (k ^ ((row & 1) << 3)); }
  __device__ static int b_offset(int k, int n) { return k * C.bn + (n ^ (((k >> 1) & 3) << 2)); }
};

// P: the Fp64Tile of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::CONFIG.min_blocks)
    mma_fp64_kernel(const double* A, const double* B, double* C, int M, int N, int K) {
  constexpr MmaSyncConfig CFG = P::CONFIG;
  constexpr int VEC = P::VEC;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const MmaSyncThread<CFG> th;
  const int g = th.g, t = th.t, wm0 = th.wm0, wn0 = th.wn0;

  double acc[P::MT][2 * P::NQ][2];
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < 2 * P::NQ; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

  auto k_tile = [&](const double* as, const double* bs) {
#pragma unroll
    for (int kk = 0; kk < CFG.bk / 8; ++kk) {
      double2 a[P::MT];
#pragma unroll
      for (int i = 0; i < P::MT; ++i) {
        const int row = wm0 + 8 * i + g;
        a[i] = *reinterpret_cast<const double2*>(as + P::a_offset(row, 8 * kk + 2 * t));
      }
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        const int k = 8 * kk + 2 * t + s;
        double2 b[P::NQ];
#pragma unroll
        for (int q = 0; q < P::NQ; ++q)
          b[q] = *reinterpret_cast<const double2*>(bs + P::b_offset(k, wn0 + 16 * q + 2 * g));
#pragma unroll
        for (int i = 0; i < P::MT; ++i) {
          const double av = s == 0 ? a[i].x : a[i].y;
#pragma unroll
          for (int q = 0; q < P::NQ; ++q) {
            mma_f64_8x8x4(acc[i][2 * q], av, b[q].x);
            mma_f64_8x8x4(acc[i][2 * q + 1], av, b[q].y);
          }
        }
      }
    }
  };
  mma_sync_mainloop<P>(A, B, M, N, K, th.m0, th.n0, 0, (K + CFG.bk - 1) / CFG.bk,
                       reinterpret_cast<double*>(smem_raw), k_tile);

  // Lane (g, t) holds, per m8 tile i and tile pair q, row g and the 4 consecutive columns
  // 16q + 4t .. +3 (the n interleaving above).
#pragma unroll
  for (int i = 0; i < P::MT; ++i) {
    const int row = th.m0 + th.wm0 + 8 * i + th.g;
    if (row >= M) continue;
#pragma unroll
    for (int q = 0; q < P::NQ; ++q) {
      const int col = th.n0 + th.wn0 + 16 * q + 4 * th.t;
      const double v[4] = {acc[i][2 * q][0], acc[i][2 * q + 1][0], acc[i][2 * q][1],
                           acc[i][2 * q + 1][1]};
      store_row_segment<VEC>(C + std::size_t(row) * N + col, col, N, v);
    }
  }
}

template <MmaSyncConfig C>
void add_config(std::vector<Variant>& out) {
  out.push_back(mma_sync_variant<double, C>("mma_fp64", mma_fp64_kernel<Fp64Tile<C, 2>>,
                                            mma_fp64_kernel<Fp64Tile<C, 1>>)
                    .note("16-byte cp.async when K and N are even, 8-byte copies otherwise")
                    .build());
}

}  // namespace

void add_mma_fp64_variants(std::vector<Variant>& out) {
  // The representative has the configuration of mma_fp64_m16n8k16 above it (k-tiles of 32, 3
  // stages), so that the step changes the instruction alone.
  for_each_config<MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                .role = Role::representative},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 32, .wn = 64, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 3},
                  MmaSyncConfig{.bm = 64, .bn = 128, .bk = 16, .wm = 32, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 64, .bk = 16, .wm = 32, .wn = 32, .stages = 4}>(
      [&]<MmaSyncConfig C>() { add_config<C>(out); });
}

}  // namespace gemm
