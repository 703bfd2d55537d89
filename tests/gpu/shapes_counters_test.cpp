// Counter claims of the split schedules, each against a value derived from the split (never
// copied from a run): the global stores a split adds (one partial tile per slice, the final
// tile once, the tile counters' resets), and the SMs a split keeps busy.
#include <gtest/gtest.h>

#include <algorithm>

#include "counter_test_support.h"
#include "gpu_test_support.h"

namespace gemm::test {
namespace {

// Counter stores per tile at the end of a split launch (partial_tiles.cuh): with every block
// resident at once the block that leaves last sets both counters back (2 stores); otherwise the
// block that arrives last sets its arrival counter back (1).
double resets_per_tile(const CounterValues& c) {
  const bool all_resident = c.at("grid_blocks") <= c.at("blocks_per_sm") * device().sm_count;
  return all_resident ? 2 : 1;
}

const std::string kSplitWide =
    "split_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1/slices:";

TEST(CountersShapes, SplitKStoresEverySlicesPartialTileAndCOnce) {
  GEMM_REQUIRE_COUNTERS();
  // 256 x 256 in 128 x 128 tiles, K = 4096 in 4 slices: 16 blocks. Stores: each slice's whole
  // partial tile (16-byte chunks, full sectors), C once, and each tile's counters set back.
  const GemmShape s{256, 256, 4096};
  const int slices = 4, tiles = 4;
  const double tile_sectors = double(s.m) * s.n * 4 / 32;
  const CounterValues split = measure(kSplitWide + std::to_string(slices), Precision::fp32, s);
  expect_count(split.at("grid_blocks"), tiles * slices, "split-K grid_blocks");
  expect_count(split.at("gst_sectors"), (slices + 1) * tile_sectors + resets_per_tile(split) * tiles,
               "split-K gst_sectors");
  // One slice: the blocks store C themselves, nothing else.
  const CounterValues whole = measure(kSplitWide + "1", Precision::fp32, s);
  expect_count(whole.at("gst_sectors"), tile_sectors, "unsplit gst_sectors");
}

TEST(CountersShapes, ElementStoresWriteRunsOf32ConsecutiveElementsOfARow) {
  GEMM_REQUIRE_COUNTERS();
  // N = 255: rows of C start 4 bytes apart from 16-byte boundaries, so the tile stores element
  // by element, through each warp's shared buffer (ladder/warptile_core.cuh): one instruction
  // per 32-column run of a row of its 64-column warp tile. Such a run touches the 32-byte
  // sectors from its first byte's to its last's (C starts 256-byte aligned); straight from the
  // registers the lanes' words would lie 16 bytes apart, 4 sectors per 32 bytes written.
  const GemmShape s{256, 255, 256};
  double sectors = 0;
  for (std::int64_t r = 0; r < s.m; ++r)
    for (std::int64_t run = 0; run < s.n; run += 32) {
      const std::int64_t first = (r * s.n + run) * 4, last = (r * s.n + std::min(run + 32, s.n)) * 4 - 1;
      sectors += double(last / 32 - first / 32 + 1);
    }
  const CounterValues c = measure(kSplitWide + "1", Precision::fp32, s);
  expect_count(c.at("gst_sectors"), sectors, "element stores' gst_sectors");
}

TEST(CountersShapes, SplittingOneTileKeepsEverySmBusy) {
  GEMM_REQUIRE_COUNTERS();
  // 128 x 128 x 65536: one output tile. Unsplit, one block runs and every other SM has no work
  // (the least busy SM's active cycles are 0); split to fill the device, every SM gets a slice.
  const GemmShape s{128, 128, 65536};
  const CounterValues whole = measure(kSplitWide + "1", Precision::fp32, s);
  expect_count(whole.at("grid_blocks"), 1, "unsplit grid_blocks");
  EXPECT_EQ(whole.at("sm_active_cycles_min"), 0) << "one block: the other SMs idle";
  const CounterValues split = measure(kSplitWide + "0", Precision::fp32, s);
  EXPECT_GE(split.at("grid_blocks"), device().sm_count) << "a slice for every SM";
  EXPECT_GT(split.at("sm_active_cycles_min"), 0) << "every SM ran a slice";
}

TEST(CountersShapes, GemvStoresEachSlicesPartialSumsOnce) {
  GEMM_REQUIRE_COUNTERS();
  // 16 rows x 4096 columns, K in 16 slices: 32 column blocks of 128 columns x 16 slices. Each
  // block stores its 16 x 128 partial sums (full sectors: 512 bytes per row), the sum over the
  // slices is stored once, and each column block's counters are set back to zero.
  const GemmShape s{16, 4096, 4096};
  const int slices = 16, column_blocks = 32;
  const CounterValues c = measure("gemv/warps:4/vectors:1/unroll:4/ks:16", Precision::fp32, s);
  expect_count(c.at("grid_blocks"), column_blocks * slices, "gemv grid_blocks");
  expect_count(c.at("gst_sectors"),
               (slices + 1) * double(s.m) * s.n * 4 / 32 + resets_per_tile(c) * column_blocks,
               "gemv gst_sectors");
}

}  // namespace
}  // namespace gemm::test
