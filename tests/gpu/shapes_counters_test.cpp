// Counter claims of the split schedules, each against a value derived from the split (never
// copied from a run): the global stores a split adds (one partial tile per slice, the final
// tile once, the tile counters' resets).
#include <gtest/gtest.h>

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
