// The wgmma + TMA block tiles for short M: the configurations of wgmma_rows (one tile per block)
// and of the wgmma splits that cut their K (split_k_wgmma, stream_k_wgmma). wgmma's N is BM,
// the rows of C a block computes (the block computes C^T).
//   64 rows: a 16- to 64-row problem wastes at most three quarters of one tile where the rung's
//     256-row tile wastes up to 63/64, and the block holds 32 accumulators per consumer thread;
//     BN = 128 (two consumer warpgroups) and 64 (one, twice the blocks for N that gives too few
//     tiles), with more stages than the rung since a stage is small.
//   128 rows: for 65 to 128 rows one row of tiles reads B once, where 64-row tiles read it
//     twice (at 96 x 28672 x 8192, 940 MB of B, more than L2 holds, read twice from DRAM).
#pragma once

#include "tensor/wgmma_tile.cuh"

namespace gemm::shapes {

inline constexpr tensor::WgmmaTmaConfig kWgmmaRowTiles[] = {
    {.bm = 64, .bn = 128, .stages = 6, .role = Role::none},
    {.bm = 64, .bn = 64, .stages = 8, .role = Role::none},
    {.bm = 128, .bn = 128, .stages = 4, .role = Role::none},
};

template <tensor::WgmmaTmaConfig C>
constexpr void check_row_tile() {
  static_assert(C.bm == 64 || C.bm == 128, "short-M tiles: 64 or 128 rows of C");
}

}  // namespace gemm::shapes
