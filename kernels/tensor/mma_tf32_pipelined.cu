// TF32 mma.sync, pipelined: the mma_tf32 rung plus a STAGES-deep cp.async pipeline, XOR-swizzled
// (conflict-free) shared tiles, ldmatrix for the A fragments and 16-byte loads for B.
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
// TF32 conversion: none. The tensor core reads the top 19 bits of each FP32 word (truncation,
// as the wgmma rung must do, since its operands go straight from TMA to the tensor core).
//
// Tails: copies are predicated with zero fill, stores bounds-checked. 16-byte copies need K and N
// multiples of 4; otherwise the same kernel with 4-byte copies runs (any shape).
#include "tensor_ptx.cuh"
#include "tensor_variant.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

template <int BM, int BN, int WM, int WN, int STAGES, int VEC>
struct PipeTile {
  static constexpr int BK = 32;
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int MT = WM / 16;  // m16 tiles per warp
  static constexpr int NQ = WN / 32;  // groups of 4 n8 tiles per warp
  static constexpr std::size_t A_STAGE = std::size_t(BM) * BK;  // floats
  static constexpr std::size_t B_STAGE = std::size_t(BK) * BN;
  static constexpr std::size_t SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(float);
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 16 == 0 && WN % 32 == 0, "warp tile: m16 tiles, groups of 4 n8 tiles");
  static_assert(VEC == 1 || VEC == 4, "4- or 16-byte copies");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");

  __device__ static int a_offset(int row, int k) { return row * BK + (k ^ ((row & 7) << 2)); }
  __device__ static int b_offset(int k, int n) { return k * BN + (n ^ ((k & 3) << 3)); }
};

template <int BM, int BN, int WM, int WN, int STAGES, int VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(PipeTile<BM, BN, WM, WN, STAGES, VEC>::THREADS, MIN_BLOCKS)
    mma_tf32_pipelined_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  using P = PipeTile<BM, BN, WM, WN, STAGES, VEC>;
  constexpr int BK = P::BK;
  static_assert(P::SMEM_BYTES <= 227 * 1024, "the stages fit the opt-in shared memory of sm_90");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* As = reinterpret_cast<float*>(smem_raw);
  float* Bs = As + STAGES * P::A_STAGE;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / P::WARPS_N) * WM;
  const int wn0 = (warp % P::WARPS_N) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + BK - 1) / BK;

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    float* as = As + stage * P::A_STAGE;
    float* bs = Bs + stage * P::B_STAGE;
#pragma unroll
    for (int c = tid; c < BM * BK / VEC; c += P::THREADS) {
      const int r = c / (BK / VEC), kc = (c % (BK / VEC)) * VEC;
      const int gr = m0 + r, gk = k0 + kc;
      const bool ok = gr < M && gk < K;  // K % VEC == 0: a chunk is wholly in or out
      cp_async<VEC * 4>(as + P::a_offset(r, kc), ok ? A + std::size_t(gr) * K + gk : A, ok);
    }
#pragma unroll
    for (int c = tid; c < BK * BN / VEC; c += P::THREADS) {
      const int kr = c / (BN / VEC), nc = (c % (BN / VEC)) * VEC;
      const int gk = k0 + kr, gn = n0 + nc;
      const bool ok = gk < K && gn < N;
      cp_async<VEC * 4>(bs + P::b_offset(kr, nc), ok ? B + std::size_t(gk) * N + gn : B, ok);
    }
  };

  float acc[P::MT][4 * P::NQ][4];
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < 4 * P::NQ; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }

  // ldmatrix row address of this lane within an m16 x k8 block: lanes 8j..8j+7 address block j
  // (j = 0: rows 0-7, k 0-3; 1: rows 8-15, k 0-3; 2: rows 0-7, k 4-7; 3: rows 8-15, k 4-7).
  const int ld_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int ld_k = (lane >> 4) * 4;

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next);
    cp_async_commit();

    const float* as = As + (kt % STAGES) * P::A_STAGE;
    const float* bs = Bs + (kt % STAGES) * P::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      std::uint32_t a[P::MT][4];
#pragma unroll
      for (int i = 0; i < P::MT; ++i)
        ldmatrix_x4(a[i], smem_addr(as + P::a_offset(wm0 + 16 * i + ld_row, kk + ld_k)));
      uint4 b0[P::NQ], b1[P::NQ];
#pragma unroll
      for (int q = 0; q < P::NQ; ++q) {
        const int n = wn0 + 32 * q + 4 * g;
        b0[q] = *reinterpret_cast<const uint4*>(bs + P::b_offset(kk + t, n));
        b1[q] = *reinterpret_cast<const uint4*>(bs + P::b_offset(kk + t + 4, n));
      }
#pragma unroll
      for (int i = 0; i < P::MT; ++i)
#pragma unroll
        for (int q = 0; q < P::NQ; ++q) {
          const std::uint32_t bq[4][2] = {
              {b0[q].x, b1[q].x}, {b0[q].y, b1[q].y}, {b0[q].z, b1[q].z}, {b0[q].w, b1[q].w}};
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) mma_tf32_16x8x8(acc[i][4 * q + jj], a[i], bq[jj]);
        }
    }
  }
  cp_async_wait<0>();

  // Lane (g, t): rows g and g + 8 of each m16 tile; columns 32q + 8t .. +7 (the n permutation):
  // c[0] of tiles 4q..4q+3 are columns 8t + 0..3, c[1] columns 8t + 4..7 (c[2], c[3]: row g + 8).
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + wm0 + 16 * i + g + 8 * h;
      if (row >= M) continue;
#pragma unroll
      for (int q = 0; q < P::NQ; ++q) {
        const int col = n0 + wn0 + 32 * q + 8 * t;
        const float v[8] = {acc[i][4 * q][2 * h],         acc[i][4 * q + 1][2 * h],
                            acc[i][4 * q + 2][2 * h],     acc[i][4 * q + 3][2 * h],
                            acc[i][4 * q][2 * h + 1],     acc[i][4 * q + 1][2 * h + 1],
                            acc[i][4 * q + 2][2 * h + 1], acc[i][4 * q + 3][2 * h + 1]};
        float* dst = C + std::size_t(row) * N + col;
        if (VEC == 4 && col + 7 < N) {  // N % 4 == 0: 16-byte aligned
          reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
          reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e)
            if (col + e < N) dst[e] = v[e];
        }
      }
    }
}

template <int BM, int BN, int WM, int WN, int STAGES, int MIN_BLOCKS>
void add_config(std::vector<Variant>& out, Role role) {
  using P = PipeTile<BM, BN, WM, WN, STAGES, 4>;
  out.push_back(shape_dispatch_variant<float>(
      "mma_tf32_pipelined",
      {{"bm", BM}, {"bn", BN}, {"bk", P::BK}, {"wm", WM}, {"wn", WN}, {"stages", STAGES}}, BM,
      BN, P::THREADS, P::SMEM_BYTES,
      mma_tf32_pipelined_kernel<BM, BN, WM, WN, STAGES, 4, MIN_BLOCKS>,
      mma_tf32_pipelined_kernel<BM, BN, WM, WN, STAGES, 1, MIN_BLOCKS>)
                    .compute(Compute::tf32)
                    .role(role)
                    .note("16-byte cp.async when K and N are multiples of 4, 4-byte copies "
                          "otherwise; FP32 inputs truncated to TF32 by the tensor core")
                    .build());
}

}  // namespace

void add_mma_tf32_pipelined_variants(std::vector<Variant>& out) {
  add_config<128, 128, 64, 32, 3, 2>(out, Role::representative);
  add_config<128, 128, 64, 32, 4, 1>(out, Role::sweep);
  add_config<128, 256, 64, 64, 3, 1>(out, Role::sweep);
  add_config<256, 128, 64, 64, 3, 1>(out, Role::sweep);
}

}  // namespace gemm
