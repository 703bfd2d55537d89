// TF32 on the tensor cores, first step: mma.sync m16n8k8 (FP32 storage, TF32 products, FP32
// accumulation) on operands staged through shared memory.
//
// The block (BM x BN, k-tiles of BK) is loaded with plain predicated element loads, so any shape
// works; each element is rounded to TF32 once, when it is stored to shared memory (cvt.rna), not
// once per warp that reads it. Warps tile the block WM x WN; each warp holds (WM/16) x (WN/8)
// m16n8 accumulators and reads its fragments with 32-bit shared loads:
//   A fragment: As[16i + g (+8)][8kk + t (+4)]  -> rows padded to BK + 4 words: the 8 rows g
//               then start 4 banks apart (20 or 36 words mod 32 = 20 or 4 ... all distinct
//               multiples of 4), and t adds 0..3: 32 distinct banks, conflict-free;
//   B fragment: Bs[8kk + t (+4)][8j + g]       -> rows padded to BN + 8 words: 4 rows t at bank
//               offsets 0, 8, 16, 24 plus g = 0..7: conflict-free.
// What this rung lacks, and the next one adds: the global loads stall the warps (no pipeline),
// every fragment element costs one LDS.32, and the element loads are 4 bytes wide.
//
// SASS: HMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "launch.cuh"
#include "tensor_ptx.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// One configuration: the block's tile of C (bm x bn) and k-tile (bk), each warp's tile (wm x wn).
struct Tf32Config {
  int bm;
  int bn;
  int bk;
  int wm;
  int wn;
  Role role = Role::sweep;

  constexpr int threads() const { return (bm / wm) * (bn / wn) * 32; }
  std::vector<Param> params() const {
    return {{"bm", bm}, {"bn", bn}, {"bk", bk}, {"wm", wm}, {"wn", wn}};
  }
};

template <Tf32Config C>
struct Tf32Tile {
  static constexpr int BM = C.bm, BN = C.bn, BK = C.bk, WM = C.wm, WN = C.wn;
  static constexpr int WARPS_N = BN / WN;
  static constexpr int THREADS = C.threads();
  static constexpr int MT = WM / 16, NT = WN / 8;
  static constexpr int A_PITCH = BK + 4, B_PITCH = BN + 8;  // words, see the bank analysis
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "m16n8k8 tiles");
  static_assert(BK == 16 || BK == 32, "the A padding is conflict-free for BK = 16 or 32");
  static_assert(BN % 32 == 0, "the B padding assumes BN a multiple of 32 words");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0, "whole loads per thread");
  static constexpr std::size_t A_BYTES = std::size_t(BM) * A_PITCH * sizeof(float);
  static constexpr std::size_t SMEM_BYTES = A_BYTES + std::size_t(BK) * B_PITCH * sizeof(float);
};

// P: the Tf32Tile of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS)
    mma_tf32_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int BM = P::BM, BN = P::BN, BK = P::BK, WM = P::WM, WN = P::WN;
  // Dynamic shared memory: the representative's 256 x 128 tile takes more than the 48 KB a
  // kernel may declare statically.
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* As = reinterpret_cast<std::uint32_t(*)[P::A_PITCH]>(smem_raw);
  auto* Bs = reinterpret_cast<std::uint32_t(*)[P::B_PITCH]>(smem_raw + P::A_BYTES);

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / P::WARPS_N) * WM;
  const int wn0 = (warp % P::WARPS_N) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[P::MT][P::NT][4] = {};

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Consecutive threads take consecutive k of A and consecutive n of B: coalesced reads.
#pragma unroll
    for (int c = tid; c < BM * BK; c += P::THREADS) {
      const int r = c / BK, k = c % BK;
      const int gr = m0 + r, gk = k0 + k;
      As[r][k] = to_tf32(gr < M && gk < K ? A[std::size_t(gr) * K + gk] : 0.0f);
    }
#pragma unroll
    for (int c = tid; c < BK * BN; c += P::THREADS) {
      const int k = c / BN, n = c % BN;
      const int gk = k0 + k, gn = n0 + n;
      Bs[k][n] = to_tf32(gk < K && gn < N ? B[std::size_t(gk) * N + gn] : 0.0f);
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      std::uint32_t a[P::MT][4], b[P::NT][2];
#pragma unroll
      for (int i = 0; i < P::MT; ++i) {
        const int r = wm0 + 16 * i + g;
        a[i][0] = As[r][kk + t];
        a[i][1] = As[r + 8][kk + t];
        a[i][2] = As[r][kk + t + 4];
        a[i][3] = As[r + 8][kk + t + 4];
      }
#pragma unroll
      for (int j = 0; j < P::NT; ++j) {
        b[j][0] = Bs[kk + t][wn0 + 8 * j + g];
        b[j][1] = Bs[kk + t + 4][wn0 + 8 * j + g];
      }
#pragma unroll
      for (int i = 0; i < P::MT; ++i)
#pragma unroll
        for (int j = 0; j < P::NT; ++j) mma_tf32_16x8x8(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }

  // c[0..1]: row g, columns 2t, 2t+1; c[2..3]: row g + 8.
#pragma unroll
  for (int i = 0; i < P::MT; ++i)
#pragma unroll
    for (int j = 0; j < P::NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + 16 * i + g + 8 * h;
        const int col = n0 + wn0 + 8 * j + 2 * t;
        if (row >= M) continue;
        if (col < N) C[std::size_t(row) * N + col] = acc[i][j][2 * h];
        if (col + 1 < N) C[std::size_t(row) * N + col + 1] = acc[i][j][2 * h + 1];
      }
}

template <Tf32Config C>
void add_config(std::vector<Variant>& out) {
  using P = Tf32Tile<C>;
  out.push_back(
      VariantBuilder::of<float>("mma_tf32")
          .params(C.params())
          .compute(Compute::tf32)
          .launch(kernel_launch<float>(block_tile_plan(C.bm, C.bn, P::THREADS, P::SMEM_BYTES),
                                       mma_tf32_kernel<P>))
          .outputs_per_thread(double(C.bm) * C.bn / P::THREADS)
          .role(C.role)
          .note("any shape; inputs rounded to TF32 (cvt.rna) once, at the shared-memory store")
          .build());
}

}  // namespace

void add_mma_tf32_variants(std::vector<Variant>& out) {
  // The representative has the tiles of the TF32 rungs above it (mma_tf32_pipelined, wgmma_tma:
  // 256 x 128 block tiles, k-tiles of 32), so that each of their steps changes the technique
  // alone.
  for_each_config<Tf32Config{.bm = 256, .bn = 128, .bk = 32, .wm = 64, .wn = 64,
                             .role = Role::representative},
                  Tf32Config{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32},
                  Tf32Config{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32},
                  Tf32Config{.bm = 64, .bn = 64, .bk = 16, .wm = 32, .wn = 32}>(
      [&]<Tf32Config C>() { add_config<C>(out); });
}

}  // namespace gemm
