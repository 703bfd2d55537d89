// The cooperative load phase shared by the static-tile kernels (seed 000): every thread copies
// one element of the A tile and one of the B tile into shared memory, zero-filling past the
// edges so the multiply loop needs no bounds checks.
#pragma once

namespace gemm {

// Which index of the C tile threadIdx.x walks, as in the naive kernels of the same name.
enum class ThreadMapping { row, col };

template <ThreadMapping MAPPING>
struct TileCoords {
  int r;    // row of the C tile this thread owns
  int c;    // column of the C tile this thread owns
  __device__ TileCoords()
      : r(MAPPING == ThreadMapping::row ? threadIdx.y : threadIdx.x),
        c(MAPPING == ThreadMapping::row ? threadIdx.x : threadIdx.y) {}
};

// Tiles are [TILE][TILE + PAD]; PAD = 1 shifts each row by one bank.
template <typename T, int TILE, int PAD>
__device__ __forceinline__ void load_tiles(T (&tile_a)[TILE][TILE + PAD],
                                           T (&tile_b)[TILE][TILE + PAD], const T* A,
                                           const T* B, int M, int N, int K, int row, int col,
                                           int r, int c, int k0) {
  tile_a[r][c] = (row < M && k0 + c < K) ? A[row * K + k0 + c] : T(0);
  tile_b[r][c] = (k0 + r < K && col < N) ? B[(k0 + r) * N + col] : T(0);
}

}  // namespace gemm
