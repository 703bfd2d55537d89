// 2-D register blocking (siboehm/SGEMM_CUDA kernel 5): each thread computes a TM x TN block of
// C. Per k-step it holds TM elements of A and TN of B in registers and does TM * TN FMAs with
// them, so FMAs per shared load rise from TM / (1 + TM/4) (blocktile_1d) to
// TM * TN / (TM + TN) elements' worth of loads, and the MIO queue stops throttling issue.
//
// Tails: loads outside A or B write zeros into the tiles, stores outside C are skipped.
#include "ladder_common.cuh"

namespace gemm {
namespace {

template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
    blocktile_2d_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  constexpr int THREADS = BM * BN / (TM * TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tiles divide the block tile");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
                "every thread loads the same number of tile elements");
  // 16-byte alignment: the unrolled loops read rows of both tiles with LDS.128.
  __shared__ __align__(16) T As[BM * BK];  // row-major, as in A
  __shared__ __align__(16) T Bs[BK * BN];

  const int tid = threadIdx.x;
  const int thread_col = tid % (BN / TN);
  const int thread_row = tid / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  T acc[TM][TN] = {};
  T reg_a[TM], reg_b[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int j = 0; j < BM * BK / THREADS; ++j) {
      const int i = tid + j * THREADS, r = i / BK, c = i % BK;
      const int gr = row0 + r, gc = k0 + c;
      As[i] = (gr < M && gc < K) ? A[std::int64_t(gr) * K + gc] : T(0);
    }
#pragma unroll
    for (int j = 0; j < BK * BN / THREADS; ++j) {
      const int i = tid + j * THREADS, r = i / BN, c = i % BN;
      const int gr = k0 + r, gc = col0 + c;
      Bs[i] = (gr < K && gc < N) ? B[std::int64_t(gr) * N + gc] : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i) reg_a[i] = As[(thread_row * TM + i) * BK + k];
#pragma unroll
      for (int j = 0; j < TN; ++j) reg_b[j] = Bs[k * BN + thread_col * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += reg_a[i] * reg_b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int r = row0 + thread_row * TM + i, c = col0 + thread_col * TN + j;
      if (r < M && c < N) C[std::int64_t(r) * N + c] = acc[i][j];
    }
}

template <typename T, LadderTile C>
void add_config(std::vector<Variant>& out) {
  constexpr int threads = C.bm * C.bn / (C.tm * C.tn);
  out.push_back(VariantBuilder::of<T>("blocktile_2d")
                    .params(C.params())
                    .launch(kernel_launch<T>(
                        block_tile_plan(C.bm, C.bn, threads, 0, (C.bm + C.bn) * C.bk * sizeof(T)),
                        blocktile_2d_kernel<T, C.bm, C.bn, C.bk, C.tm, C.tn>))
                    .outputs_per_thread(C.outputs_per_thread())
                    .representative()
                    .note("any shape: out-of-range tile elements load as zero")
                    .build());
}

}  // namespace

void add_blocktile_2d_variants(std::vector<Variant>& out) {
  // siboehm's parameters: 256 threads.
  add_config<float, LadderTile{.bm = 128, .bn = 128, .bk = 8, .tm = 8, .tn = 8}>(out);
  // FP64: an 8 x 8 tile of doubles is 128 registers of accumulators alone; 8 x 4 fits.
  add_config<double, LadderTile{.bm = 128, .bn = 64, .bk = 8, .tm = 8, .tn = 4}>(out);
}

}  // namespace gemm
