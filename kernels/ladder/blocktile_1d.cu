// 1-D register blocking (siboehm/SGEMM_CUDA kernel 4), the first CUDA-core rung above the
// write-ups: each thread computes a column of TM outputs. Per k-step it reads one element of the
// B tile into a register and reuses it TM times against TM elements of the A tile, so shared
// loads per FMA fall from 2 (the seed's shared kernel) to (1 + TM / (16 / sizeof(T) elements per
// LDS.128)) / TM.
//
// Tails: loads outside A or B write zeros into the tiles, stores outside C are skipped, so every
// shape runs.
#include "ladder_common.cuh"

namespace gemm {
namespace {

template <typename T, int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM, sizeof(T) == 4 ? 2 : 1)
    blocktile_1d_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  constexpr int THREADS = BM * BN / TM;
  static_assert(BM % TM == 0, "TM must divide BM");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
                "every thread loads the same number of tile elements");
  static_assert(BN % 32 == 0, "a warp shares one row of threads: A reads are broadcasts");
  // 16-byte alignment: the unrolled k loop reads a row of the A tile with LDS.128.
  __shared__ __align__(16) T As[BM * BK];
  __shared__ __align__(16) T Bs[BK * BN];

  const int tid = threadIdx.x;
  const int thread_col = tid % BN;  // consecutive lanes: consecutive columns of C and of Bs
  const int thread_row = tid / BN;  // the thread's TM rows start at thread_row * TM
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  T acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int j = 0; j < BM * BK / THREADS; ++j) {  // lanes walk a row of A: coalesced
      const int i = tid + j * THREADS;
      const int r = i / BK, c = i % BK;
      const int gr = row0 + r, gc = k0 + c;
      As[i] = (gr < M && gc < K) ? A[std::int64_t(gr) * K + gc] : T(0);
    }
#pragma unroll
    for (int j = 0; j < BK * BN / THREADS; ++j) {
      const int i = tid + j * THREADS;
      const int r = i / BN, c = i % BN;
      const int gr = k0 + r, gc = col0 + c;
      Bs[i] = (gr < K && gc < N) ? B[std::int64_t(gr) * N + gc] : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const T b = Bs[k * BN + thread_col];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[(thread_row * TM + i) * BK + k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + thread_row * TM + i, c = col0 + thread_col;
    if (r < M && c < N) C[std::int64_t(r) * N + c] = acc[i];
  }
}

template <typename T, LadderTile C>
void add_config(std::vector<Variant>& out) {
  constexpr int threads = C.bm * C.bn / C.tm;
  out.push_back(VariantBuilder::of<T>("blocktile_1d")
                    .params(C.params())
                    .launch(kernel_launch<T>(
                        block_tile_plan(C.bm, C.bn, threads, 0, (C.bm + C.bn) * C.bk * sizeof(T)),
                        blocktile_1d_kernel<T, C.bm, C.bn, C.bk, C.tm>))
                    .outputs_per_thread(C.outputs_per_thread())
                    .representative()
                    .note("any shape: out-of-range tile elements load as zero")
                    .build());
}

}  // namespace

void add_blocktile_1d_variants(std::vector<Variant>& out) {
  // siboehm's parameters: 512 threads.
  constexpr LadderTile tile{.bm = 64, .bn = 64, .bk = 8, .tm = 8};
  add_config<float, tile>(out);
  add_config<double, tile>(out);
}

}  // namespace gemm
