// How the multiply-adds of a GEMM are split among blocks when its output tiles alone do not fill
// the GPU: split-K (every tile's K range cut into S slices, one block each) and stream-K (the
// k-tiles of all tiles laid end to end and cut into equal ranges, one per block; Osama et al.,
// "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the
// GPU", PPoPP 2023). Plain integer arithmetic shared by the host (plans, workspace sizes,
// tests) and the kernels (which block does what), so both sides agree by construction.
//
// Units: a "k-tile" is one step of a kernel's mainloop (BK values of K); an output tile is
// BM x BN elements of C. Everything here is in those units; the kernels know BM, BN and BK.
#pragma once

#include <cstdint>

#include "host_device.h"

namespace gemm::shapes {

GEMM_HOST_DEVICE inline std::int64_t div_up(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// --- split-K ------------------------------------------------------------------------------------
// Slice s of a tile takes k-tiles [s * per_slice, min((s + 1) * per_slice, k_tiles)). The slice
// count is derived from the one asked for so that no slice is empty (9 k-tiles in 4 slices of 3
// k-tiles are 3 slices).
struct SplitK {
  int k_tiles = 1;
  int per_slice = 1;
  int slices = 1;

  static SplitK make(int k_tiles, int wanted_slices) {
    SplitK s;
    s.k_tiles = k_tiles < 1 ? 1 : k_tiles;
    const int wanted = wanted_slices < 1 ? 1 : wanted_slices > s.k_tiles ? s.k_tiles : wanted_slices;
    s.per_slice = int(div_up(s.k_tiles, wanted));
    s.slices = int(div_up(s.k_tiles, s.per_slice));
    return s;
  }
  GEMM_HOST_DEVICE int begin(int slice) const { return slice * per_slice; }
  GEMM_HOST_DEVICE int end(int slice) const {
    const int e = (slice + 1) * per_slice;
    return e < k_tiles ? e : k_tiles;
  }
};

// The slices that give `tiles` output tiles at most `waves` full waves of `slots` resident blocks
// (SMs x blocks per SM), keeping at least `min_k_tiles` k-tiles per slice: the rule that turns
// the device's size into a split (1 where the tiles already fill the slots, or without a device).
// Rounded down: one block over a wave would start a second wave, and a grid that fits the device
// lets every slice's block sum a share of its tile.
inline int slices_to_fill(std::int64_t tiles, int k_tiles, std::int64_t slots, double waves,
                          int min_k_tiles) {
  if (tiles <= 0 || slots <= 0 || waves <= 0) return 1;
  int slices = int(waves * double(slots) / double(tiles));
  const int most = k_tiles / (min_k_tiles < 1 ? 1 : min_k_tiles);
  if (slices > most) slices = most;
  return slices < 1 ? 1 : slices;
}

// The fewest k-tiles a split-K slice may keep. Where the tiles alone already cover 3/4 of the SMs,
// a split can gain at most 4/3 while every slice pays for storing and adding a partial tile: it
// must then leave long slices (on an H100, FP64 777 x 555 x 333 in 64 x 64 tiles, 117 tiles on
// 132 SMs, ran at 11.5 TFLOP/s in 2 slices of about 10 k-tiles and 16.5 unsplit).
inline constexpr int kMinKTilesPerSlice = 4;
inline constexpr int kMinKTilesPerSliceFilled = 16;
inline int min_k_tiles_per_slice(std::int64_t tiles, std::int64_t sms) {
  return sms > 0 && 4 * tiles >= 3 * sms ? kMinKTilesPerSliceFilled : kMinKTilesPerSlice;
}

// --- stream-K -----------------------------------------------------------------------------------
// Data-parallel tiles plus a stream-K share (the hybrid of the paper's section 5): whole waves of
// tiles run one tile per block as usual; the tiles of the last, partial wave (with the full wave
// before it, so that the stream-K blocks have more than a fraction of a tile each) are shared by
// `sk_blocks` blocks, each taking an equal range of their k-tiles. Tiles 0 .. sk_tiles - 1 are
// the shared ones; blocks 0 .. sk_blocks - 1 share them and the blocks after take one whole
// tile each (tile sk_tiles + b - sk_blocks).
//
// A shared tile is covered by consecutive blocks, each one a segment of its k-tiles; the
// segment of a block that covers a whole tile is stored as usual, the others as partial tiles
// that the last segment to finish adds up, in k order (so the sum is the same in every run).
struct StreamK {
  int tiles = 0;           // output tiles
  int iters_per_tile = 1;  // k-tiles per output tile
  int sk_tiles = 0;        // tiles shared by the stream-K blocks (the first ones)
  int sk_blocks = 0;       // stream-K blocks (the first ones of the grid)

  // A plan for `slots` resident blocks. Fewer than min_iters k-tiles per stream-K block would
  // cost more in partial tiles than the balance gains: the share shrinks, or goes (sk_tiles 0)
  // where its blocks' ranges would be no shorter than the data-parallel waves they replace.
  static StreamK make(int tiles, int iters_per_tile, int slots, int min_iters) {
    StreamK p;
    p.tiles = tiles;
    p.iters_per_tile = iters_per_tile < 1 ? 1 : iters_per_tile;
    if (tiles <= 0 || slots <= 1) return p;
    const int full_waves = tiles / slots, rest = tiles % slots;
    if (rest == 0) return p;  // whole waves: nothing to balance
    p.sk_tiles = rest + (full_waves > 0 ? slots : 0);
    const std::int64_t iters = std::int64_t(p.sk_tiles) * p.iters_per_tile;
    std::int64_t blocks = slots;  // one wave of stream-K blocks
    const std::int64_t most = iters / (min_iters < 1 ? 1 : min_iters);
    if (blocks > most) blocks = most;
    // Worth it only where a block's range is shorter than the tiles' data-parallel waves.
    const std::int64_t dp_iters = div_up(p.sk_tiles, slots) * p.iters_per_tile;
    if (blocks < 1 || div_up(iters, blocks) >= dp_iters) {
      p.sk_tiles = 0;
      return p;
    }
    p.sk_blocks = int(blocks);
    return p;
  }

  GEMM_HOST_DEVICE std::int64_t sk_iters() const {
    return std::int64_t(sk_tiles) * iters_per_tile;
  }
  GEMM_HOST_DEVICE int grid_blocks() const { return sk_blocks + (tiles - sk_tiles); }
  // First k-tile (in the shared tiles' concatenation) of stream-K block g; block g ends where
  // g + 1 begins. Ranges differ by at most one k-tile.
  GEMM_HOST_DEVICE std::int64_t begin(int g) const { return sk_iters() * g / sk_blocks; }
  GEMM_HOST_DEVICE std::int64_t end(int g) const { return begin(g + 1); }
  // The stream-K block whose range holds k-tile `iter`.
  GEMM_HOST_DEVICE int block_of(std::int64_t iter) const {
    return int(((iter + 1) * sk_blocks - 1) / sk_iters());
  }
  // The blocks that cover shared tile t: first_block(t) .. last_block(t).
  GEMM_HOST_DEVICE int first_block(int t) const {
    return block_of(std::int64_t(t) * iters_per_tile);
  }
  GEMM_HOST_DEVICE int last_block(int t) const {
    return block_of(std::int64_t(t + 1) * iters_per_tile - 1);
  }
  GEMM_HOST_DEVICE int segments(int t) const { return last_block(t) - first_block(t) + 1; }
  // Partial tiles are kept per block: slot 2g for the segment at the start of g's range, 2g + 1
  // for the one at its end (a range inside one tile has one segment, in slot 2g).
  GEMM_HOST_DEVICE int slot(int t, int g) const {
    const bool starts_in_tile = begin(g) >= std::int64_t(t) * iters_per_tile;
    return 2 * g + (starts_in_tile ? 0 : 1);
  }
  GEMM_HOST_DEVICE int partial_slots() const { return 2 * sk_blocks; }
};

}  // namespace gemm::shapes
