// The rungs' block tiles as the tile types of split_k_kernel.cuh: the CUDA-core pipeline of rungs
// 6-9 (ladder/pipelined_kernel.cuh) and the mma.sync tiles of the TF32 and FP64 tensor rungs
// (tensor/mma_tf32_tile.cuh, tensor/mma_fp64_k16_tile.cuh). Each keeps its rung's mainloop,
// fragments and stores; the schedules only say which k-tiles of which tile it multiplies.
#pragma once

#include <type_traits>

#include "ladder/pipelined_kernel.cuh"
#include "tensor/mma_fp64_k16_tile.cuh"
#include "tensor/mma_tf32_tile.cuh"

namespace gemm::shapes {

// The pipelined CUDA-core block tile of configuration C in copy mode MODE (0: whole tiles,
// 1: N % V == 0, 2: any shape; pipelined_kernel.cuh).
template <typename T_, PipelinedConfig C, int MODE>
struct PipelinedTile {
  using T = T_;
  using Layout = ladder::PipelineLayout<T, C.bm, C.bn, C.bk, C.wm, C.wn, C.tm, C.tn, C.stages, C.mbar>;
  using Tiling = ladder::WarpTiling<T, C.bm, C.bn, C.wm, C.wn, C.tm, C.tn, sizeof(T) == 8>;
  static constexpr int BM = C.bm, BN = C.bn, BK = C.bk, THREADS = Layout::THREADS;
  static constexpr std::size_t SMEM_BYTES = Layout::SMEM_BYTES;
  static constexpr int MIN_BLOCKS = MODE == 1 && C.minb > 1 ? C.minb - 1 : C.minb;  // as the rung
  static constexpr int VEC = MODE != 2 ? ladder::kVec<T> : 1;
  struct Acc {
    T v[C.tm][C.tn];
  };

  __device__ __forceinline__ static void mainloop(Acc& acc, const T* A, const T* B, int M, int N,
                                                  int K, int m0, int n0, int kt_begin, int kt_end,
                                                  unsigned char* smem) {
    ladder::pipelined_mainloop<T, C.bm, C.bn, C.bk, C.wm, C.wn, C.tm, C.tn, C.stages, MODE, C.mbar>(
        acc.v, A, B, M, N, K, m0, n0, kt_begin, kt_end, min(K, kt_end * BK), smem);
  }
  __device__ __forceinline__ static void store(const Acc& acc, T* out, int M, int N, int m0, int n0) {
    ladder::store_tile<T, C.tm, C.tn, MODE != 0, MODE != 2>(out, M, N, m0, n0,
                                                            Tiling(threadIdx.x), acc.v);
  }
};

// An mma.sync block tile (Tf32PipeTile or Fp64K16Tile of a configuration and copy width).
template <typename Tile>
struct MmaTile {
  using Acc = typename Tile::Acc;
  using T = std::remove_cv_t<std::remove_reference_t<decltype(Acc{}.v[0][0][0])>>;
  static constexpr tensor::MmaSyncConfig CONFIG = Tile::CONFIG;
  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, THREADS = Tile::THREADS;
  static constexpr std::size_t SMEM_BYTES = Tile::SMEM_BYTES;
  static constexpr int MIN_BLOCKS = Tile::MIN_BLOCKS;
  static constexpr int VEC = Tile::VEC * int(sizeof(T)) == 16 ? Tile::VEC : 1;

  __device__ __forceinline__ static tensor::MmaSyncThread<CONFIG> thread(int m0, int n0) {
    return tensor::MmaSyncThread<CONFIG>(threadIdx.x, n0 / BN, m0 / BM);
  }
  __device__ __forceinline__ static void mainloop(Acc& acc, const T* A, const T* B, int M, int N,
                                                  int K, int m0, int n0, int kt_begin, int kt_end,
                                                  unsigned char* smem) {
    Tile::mainloop(acc, A, B, M, N, K, thread(m0, n0), kt_begin, kt_end, smem);
  }
  __device__ __forceinline__ static void store(const Acc& acc, T* out, int M, int N, int m0, int n0) {
    Tile::store(acc, out, M, N, thread(m0, n0));
  }
};

// A tile type with another blocks-per-SM bound (__launch_bounds__): a schedule whose loop keeps
// more state than the rung's kernel gives up a block per SM rather than spill.
template <typename P, int MINB>
struct WithMinBlocks : P {
  static constexpr int MIN_BLOCKS = MINB;
};

}  // namespace gemm::shapes
