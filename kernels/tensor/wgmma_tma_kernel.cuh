// The wgmma + TMA block kernel, one output tile per block (wgmma_tma.cu explains the operand
// layout and the producer/consumer split): shared by the wgmma_tma rung and wgmma_rows, its
// 64-row tiles for short M.
#pragma once

#include "wgmma_tile.cuh"

namespace gemm::tensor {

template <int BM, int BN, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    wgmma_tma_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                     const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b) {
  using P = WgTile<BM, BN, STAGES>;
  (void)A;
  (void)B;  // read through the tensor maps
  extern __shared__ unsigned char smem_raw[];
  const WgPipeline<BM, BN, STAGES> pipe(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + P::BK - 1) / P::BK;

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      typename WgPipeline<BM, BN, STAGES>::State s;
      for (int kt = 0; kt < k_tiles; ++kt, ++s) pipe.produce(s, kt, m0, n0, map_a, map_b);
    }
    return;
  }

  // Consumers.
  setmaxnreg_inc<CONSUMER_REGS>();
  const FragmentSlot slot(warp, lane);
  float d[P::ACC];
#pragma unroll
  for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;
  typename WgPipeline<BM, BN, STAGES>::State s;
  for (int kt = 0; kt < k_tiles; ++kt, ++s) pipe.consume(d, s, slot, lane);
  store_c_transposed<BM>(d, C, M, N, m0, n0, slot);
}

}  // namespace gemm::tensor
