// FP64 on the tensor cores: mma.sync m8n8k4 (DMMA) with a multi-stage cp.async pipeline.
//
// Block tile BM x BN, k-tiles of BK = 16 doubles, STAGES k-tiles in flight; warps tile the block
// WM x WN, each warp a grid of (WM/8) x (WN/8) m8n8 accumulators (2 doubles per lane each).
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
// of A at the same 64 bytes (rows 128 B apart: 2-way) and 4 rows of B at the same 32 bytes
// (4-way). XOR swizzles of the 16-byte chunk index (A: chunk ^ 4 on odd rows; B: chunk ^ 2*t on
// rows 2t+s) spread both over all 32 banks; cp.async writes whole chunks, so the swizzle costs
// the writes nothing.
//
// Tails: every copy is predicated (zero-filled outside the matrix), every store bounds-checked.
// The 16-byte copy needs K and N even; otherwise the same kernel with 8-byte copies runs.
#include "tensor_ptx.cuh"
#include "tensor_variant.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

template <int BM, int BN, int WM, int WN, int STAGES, int VEC>
struct Fp64Tile {
  static constexpr int BK = 16;  // 128-byte rows of A: the swizzle below assumes it
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int MT = WM / 8;   // m8 tiles per warp
  static constexpr int NQ = WN / 16;  // pairs of n8 tiles per warp
  static constexpr std::size_t A_STAGE = std::size_t(BM) * BK;  // doubles
  static constexpr std::size_t B_STAGE = std::size_t(BK) * BN;
  static constexpr std::size_t SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(double);
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 8 == 0 && WN % 16 == 0, "warp tile: m8 tiles, pairs of n8 tiles");
  static_assert(BN % 16 == 0, "the B swizzle permutes within 16-double groups");
  static_assert(VEC == 1 || VEC == 2, "8- or 16-byte copies");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");
  static_assert(THREADS <= 1024, "too many warps");

  // Element offsets inside a stage, swizzled as explained at the top.
  __device__ static int a_offset(int row, int k) { return row * BK + (k ^ ((row & 1) << 3)); }
  __device__ static int b_offset(int k, int n) { return k * BN + (n ^ (((k >> 1) & 3) << 2)); }
};

template <int BM, int BN, int WM, int WN, int STAGES, int VEC>
__global__ void __launch_bounds__(Fp64Tile<BM, BN, WM, WN, STAGES, VEC>::THREADS, 1)
    mma_fp64_kernel(const double* A, const double* B, double* C, int M, int N, int K) {
  using P = Fp64Tile<BM, BN, WM, WN, STAGES, VEC>;
  constexpr int BK = P::BK;
  static_assert(P::SMEM_BYTES <= 227 * 1024, "the stages fit the opt-in shared memory of sm_90");
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

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    double* as = As + stage * P::A_STAGE;
    double* bs = Bs + stage * P::B_STAGE;
#pragma unroll
    for (int c = tid; c < BM * BK / VEC; c += P::THREADS) {
      const int r = c / (BK / VEC), kc = (c % (BK / VEC)) * VEC;
      const int gr = m0 + r, gk = k0 + kc;
      const bool ok = gr < M && gk < K;  // K % VEC == 0: a chunk is wholly in or out
      cp_async<VEC * 8>(as + P::a_offset(r, kc), ok ? A + std::size_t(gr) * K + gk : A, ok);
    }
#pragma unroll
    for (int c = tid; c < BK * BN / VEC; c += P::THREADS) {
      const int kr = c / (BN / VEC), nc = (c % (BN / VEC)) * VEC;
      const int gk = k0 + kr, gn = n0 + nc;
      const bool ok = gk < K && gn < N;
      cp_async<VEC * 8>(bs + P::b_offset(kr, nc), ok ? B + std::size_t(gk) * N + gn : B, ok);
    }
  };

  double acc[P::MT][2 * P::NQ][2];
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < 2 * P::NQ; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

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
    for (int kk = 0; kk < BK / 8; ++kk) {
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
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  // Lane (g, t) holds, per m8 tile i and tile pair q, row g and the 4 consecutive columns
  // 16q + 4t .. +3 (the n interleaving above).
#pragma unroll
  for (int i = 0; i < P::MT; ++i) {
    const int row = m0 + wm0 + 8 * i + g;
    if (row >= M) continue;
#pragma unroll
    for (int q = 0; q < P::NQ; ++q) {
      const int col = n0 + wn0 + 16 * q + 4 * t;
      const double v[4] = {acc[i][2 * q][0], acc[i][2 * q + 1][0], acc[i][2 * q][1],
                           acc[i][2 * q + 1][1]};
      double* dst = C + std::size_t(row) * N + col;
      if (VEC == 2 && col + 3 < N) {  // N even: 16-byte aligned
        reinterpret_cast<double2*>(dst)[0] = make_double2(v[0], v[1]);
        reinterpret_cast<double2*>(dst)[1] = make_double2(v[2], v[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (col + e < N) dst[e] = v[e];
      }
    }
  }
}

template <int BM, int BN, int WM, int WN, int STAGES>
void add_config(std::vector<Variant>& out, Role role) {
  using P = Fp64Tile<BM, BN, WM, WN, STAGES, 2>;
  out.push_back(shape_dispatch_variant<double>(
      "mma_fp64",
      {{"bm", BM}, {"bn", BN}, {"bk", P::BK}, {"wm", WM}, {"wn", WN}, {"stages", STAGES}}, BM,
      BN, P::THREADS, P::SMEM_BYTES, mma_fp64_kernel<BM, BN, WM, WN, STAGES, 2>,
      mma_fp64_kernel<BM, BN, WM, WN, STAGES, 1>)
                    .role(role)
                    .note("16-byte cp.async when K and N are even, 8-byte copies otherwise")
                    .build());
}

}  // namespace

void add_mma_fp64_variants(std::vector<Variant>& out) {
  add_config<128, 128, 64, 32, 4>(out, Role::representative);
  add_config<128, 128, 32, 64, 4>(out, Role::sweep);
  add_config<128, 128, 64, 32, 3>(out, Role::sweep);
  add_config<64, 128, 32, 32, 4>(out, Role::sweep);
  add_config<128, 64, 32, 32, 4>(out, Role::sweep);
}

}  // namespace gemm
