// The order in which blocks take the tiles of C. Grouped order (Triton's matmul tutorial): tiles
// are numbered down GROUP rows of tiles, column by column, before the next GROUP rows, so that
// the blocks running at the same time share GROUP row panels of A and a few column panels of B
// in L2 instead of each sweeping all of B.
#pragma once

namespace gemm {

// threadIdx.x and blockIdx read again (asm volatile) instead of reusing values read earlier: a
// kernel's epilogue computes its coordinates anew rather than holding them in registers across
// its main loop, where the accumulators and fragments leave little room.
__device__ __forceinline__ int reread_thread_index() {
  int tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  return tid;
}
__device__ __forceinline__ int2 reread_block_index() {
  int2 b;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b.x));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(b.y));
  return b;
}

// Tile number `tile` of a tiles_m x tiles_n grid in grouped order: its row and column of tiles.
template <int GROUP>
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int& tile_m,
                                             int& tile_n) {
  static_assert(GROUP > 0, "at least one row of tiles per group");
  const int per_group = GROUP * tiles_n;
  const int group = tile / per_group;
  const int first_m = group * GROUP;
  const int rows = min(tiles_m - first_m, GROUP);
  const int in_group = tile - group * per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

}  // namespace gemm
