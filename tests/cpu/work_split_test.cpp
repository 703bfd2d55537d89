// The split schedules' arithmetic (kernels/shapes/work_split.h), which the kernels and the host
// both use: every k-tile of every tile is covered exactly once, in order, by the blocks the
// plan launches; slices and stream-K ranges are balanced; partial-tile slots never collide.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "shapes/work_split.h"

namespace gemm::shapes {
namespace {

TEST(SplitK, SlicesCoverTheKTilesOnceAndNoneIsEmpty) {
  for (int k_tiles : {1, 2, 7, 9, 64, 2047, 2048})
    for (int wanted : {1, 2, 3, 4, 8, 100, 5000}) {
      const SplitK s = SplitK::make(k_tiles, wanted);
      EXPECT_LE(s.slices, wanted) << k_tiles << " " << wanted;
      EXPECT_LE(s.slices, k_tiles);
      int next = 0;
      for (int z = 0; z < s.slices; ++z) {
        EXPECT_EQ(s.begin(z), next);
        EXPECT_GT(s.end(z), s.begin(z)) << "slice " << z << " of " << k_tiles << "/" << wanted;
        next = s.end(z);
      }
      EXPECT_EQ(next, k_tiles);
    }
}

TEST(SplitK, NineKTilesAskedInFourSlicesAreThreeOfThree) {
  const SplitK s = SplitK::make(9, 4);
  EXPECT_EQ(s.per_slice, 3);
  EXPECT_EQ(s.slices, 3);
}

TEST(SplitK, TheFillRuleGivesOneWaveAndKeepsEnoughKTilesPerSlice) {
  // 1 tile of 128 x 128 x 65536 (k-tiles of 32: 2048) on 132 SMs x 1 block: 132 slices.
  EXPECT_EQ(slices_to_fill(1, 2048, 132, 1.0, 4), 132);
  // 16 tiles (512^3) on 264 slots: 16 slices (17 would be 272 blocks, a second wave), but only
  // 16 k-tiles of 32: at least 4 each.
  EXPECT_EQ(slices_to_fill(16, 512, 264, 1.0, 4), 16);
  EXPECT_EQ(slices_to_fill(16, 16, 264, 1.0, 4), 4);
  // Tiles that fill the slots already, or no device (0 slots): no split.
  EXPECT_EQ(slices_to_fill(1024, 128, 264, 1.0, 4), 1);
  EXPECT_EQ(slices_to_fill(4, 128, 0, 1.0, 4), 1);
}

TEST(SplitK, TilesThatCoverMostSmsSplitOnlyIntoLongSlices) {
  // 132 SMs: below 99 tiles (3/4 of them) slices keep 4 k-tiles, from 99 on 16.
  EXPECT_EQ(min_k_tiles_per_slice(98, 132), 4);
  EXPECT_EQ(min_k_tiles_per_slice(99, 132), 16);
  EXPECT_EQ(min_k_tiles_per_slice(99, 0), 4);  // no device: the plain minimum
  // 777 x 555 x 333 in 64 x 64 x 16 tiles: 117 tiles, 21 k-tiles, 264 slots. It was 2 slices
  // of about 10 k-tiles; now one.
  EXPECT_EQ(slices_to_fill(117, 21, 264, 1.0, kMinKTilesPerSlice), 2);
  EXPECT_EQ(slices_to_fill(117, 21, 264, 1.0, min_k_tiles_per_slice(117, 132)), 1);
  // 128 x 4096 x 4096 in 32 x 128 x 16 tiles: 128 tiles, 256 k-tiles, 528 slots: still 4 slices.
  EXPECT_EQ(slices_to_fill(128, 256, 528, 1.0, min_k_tiles_per_slice(128, 132)), 4);
}

TEST(SplitK, DecodeRowsSplitOnlyWhereTheirColumnBlocksLeaveSMsIdle) {
  // gemv with 8 warps and 8 rows of FP32 (one block per SM: the rows' sums take more than 128
  // registers a thread) on 132 SMs; column blocks of 128, K units of 8 warps x 4 rows.
  // 8 x 14336 x 4096: 112 column blocks are one wave already, a second slice would start a
  // second (the GPU test's split case needs a shape that does split).
  EXPECT_EQ(slices_to_fill(112, 4096 / 32, 132, 1.0, 4), 1);
  // 8 x 4096 x 14336: 32 column blocks, 4 slices (128 blocks, resident at once).
  EXPECT_EQ(slices_to_fill(32, 14336 / 32, 132, 1.0, 4), 4);
  // With two blocks per SM the up projection would take 2 slices (224 of 264 slots).
  EXPECT_EQ(slices_to_fill(112, 4096 / 32, 264, 1.0, 4), 2);
}

// Every (tile, k-tile) pair of a stream-K plan, from the blocks' point of view, as the kernel
// walks them: shared tiles by the stream-K blocks' ranges, the rest one per block.
std::map<std::pair<int, int>, int> covered(const StreamK& p) {
  std::map<std::pair<int, int>, int> seen;
  for (int g = 0; g < p.sk_blocks; ++g)
    for (std::int64_t i = p.begin(g); i < p.end(g); ++i)
      ++seen[{int(i / p.iters_per_tile), int(i % p.iters_per_tile)}];
  for (int b = p.sk_blocks; b < p.grid_blocks(); ++b)
    for (int k = 0; k < p.iters_per_tile; ++k) ++seen[{p.sk_tiles + b - p.sk_blocks, k}];
  return seen;
}

TEST(StreamK, EveryKTileOfEveryTileIsComputedExactlyOnce) {
  for (auto [tiles, iters, slots] : std::vector<std::tuple<int, int, int>>{
           {1, 2048, 132}, {16, 16, 264}, {1089, 128, 132}, {133, 64, 132}, {300, 3, 132},
           {7, 5, 8}, {264, 10, 132}}) {
    const StreamK p = StreamK::make(tiles, iters, slots, 4);
    const auto seen = covered(p);
    EXPECT_EQ(seen.size(), std::size_t(tiles) * iters) << tiles << "x" << iters << " on " << slots;
    for (const auto& [key, count] : seen) EXPECT_EQ(count, 1);
  }
}

TEST(StreamK, ThePartialWaveAndTheWaveBeforeItAreShared) {
  // 1089 tiles (4097 x 4097 in 128 x 128 tiles: 33 x 33) on 132 slots: 8 full waves and 33 more.
  // The last full wave and the 33 are shared by 132 blocks; the other 924 run one per block.
  const StreamK p = StreamK::make(1089, 128, 132, 4);
  EXPECT_EQ(p.sk_tiles, 132 + 33);
  EXPECT_EQ(p.sk_blocks, 132);
  EXPECT_EQ(p.grid_blocks(), 132 + 1089 - 165);
  // Balance: every stream-K block takes 160 or 161 k-tiles (165 x 128 / 132 = 160).
  for (int g = 0; g < p.sk_blocks; ++g) EXPECT_NEAR(double(p.end(g) - p.begin(g)), 160.0, 1.0);
}

TEST(StreamK, NoShareWhereItGainsNothing) {
  // Whole waves (264 tiles on 132 slots); and 133 tiles of 2 k-tiles, whose sharing would be all
  // 133 (266 k-tiles, at least 4 per block: 66 blocks of 5) against the 2 waves of 2 k-tiles
  // they take one per block. Either way every block takes one whole tile.
  for (auto [tiles, iters] : std::vector<std::pair<int, int>>{{264, 128}, {133, 2}}) {
    const StreamK p = StreamK::make(tiles, iters, 132, 4);
    EXPECT_EQ(p.sk_tiles, 0) << tiles << " tiles of " << iters;
    EXPECT_EQ(p.grid_blocks(), tiles);
  }
}

TEST(StreamK, SegmentsOfASharedTileAreItsCoveringBlocksInKOrder) {
  const StreamK p = StreamK::make(1, 2048, 132, 4);
  ASSERT_EQ(p.sk_tiles, 1);
  EXPECT_EQ(p.first_block(0), 0);
  EXPECT_EQ(p.last_block(0), 131);
  EXPECT_EQ(p.segments(0), 132);
  for (std::int64_t i : {0, 15, 16, 2047}) {
    const int g = p.block_of(i);
    EXPECT_LE(p.begin(g), i);
    EXPECT_LT(i, p.end(g));
  }
}

TEST(StreamK, PartialTileSlotsAreDistinctWithinATileAndAcrossConcurrentSegments) {
  for (auto [tiles, iters, slots] : std::vector<std::tuple<int, int, int>>{
           {1089, 128, 132}, {16, 16, 264}, {7, 5, 8}, {133, 64, 132}}) {
    const StreamK p = StreamK::make(tiles, iters, slots, 4);
    std::set<int> used;
    for (int t = 0; t < p.sk_tiles; ++t) {
      if (p.segments(t) == 1) continue;  // a whole tile: no partial
      for (int g = p.first_block(t); g <= p.last_block(t); ++g) {
        const int slot = p.slot(t, g);
        EXPECT_GE(slot, 0);
        EXPECT_LT(slot, p.partial_slots());
        EXPECT_TRUE(used.insert(slot).second) << "slot " << slot << " reused (tile " << t << ")";
      }
    }
  }
}

}  // namespace
}  // namespace gemm::shapes
