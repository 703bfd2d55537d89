// The dispatcher's model (kernels/dispatch/shape_model.h): the busiest SM's work from tiles,
// waves and K splits, and how a measured time moves with it. Every expected value is counted by
// hand from the geometry written beside it.
#include <gtest/gtest.h>

#include "dispatch/shape_model.h"

namespace gemm::dispatch {
namespace {

constexpr int kSms = 132;

TileGeometry tiled(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t bm, std::int64_t bn,
                   std::int64_t bk, std::int64_t slices = 1) {
  TileGeometry g;
  g.m = m, g.n = n, g.k = k, g.bm = bm, g.bn = bn, g.bk = bk;
  g.grid_blocks = ((n + bn - 1) / bn) * ((m + bm - 1) / bm) * slices;
  return g;
}

// A 128 x 128 tile over K = 4096 in k-tiles of 32: 128 k-tiles, plus one for the epilogue.
constexpr double kTileWork = 128.0 * 128.0 * (128 + 1) * 32;

TEST(ShapeModel, TheBusiestSmRunsCeilBlocksOverSmsTiles) {
  // 4096 x 4096: 32 x 32 = 1024 tiles; 1024 / 132 = 7.76, so the busiest SM runs 8.
  EXPECT_DOUBLE_EQ(busiest_sm_work(tiled(4096, 4096, 4096, 128, 128, 32), kSms), 8 * kTileWork);
  // 132 tiles fill the SMs once: one tile each; 133 make one SM run two.
  EXPECT_DOUBLE_EQ(busiest_sm_work(tiled(128, 132 * 128, 4096, 128, 128, 32), kSms), kTileWork);
  EXPECT_DOUBLE_EQ(busiest_sm_work(tiled(128, 133 * 128, 4096, 128, 128, 32), kSms), 2 * kTileWork);
}

TEST(ShapeModel, PaddedRowsCostAWholeTile) {
  // M = 96 with 64-row tiles is two row tiles (128 rows of work), with 128-row tiles one.
  const double rows64 = busiest_sm_work(tiled(96, 28672, 8192, 64, 128, 32), kSms);
  const double rows128 = busiest_sm_work(tiled(96, 28672, 8192, 128, 128, 32), kSms);
  // 64-row: 2 x 224 = 448 blocks, 4 on the busiest SM, 64 x 128 each; 128-row: 224 blocks, 2.
  EXPECT_DOUBLE_EQ(rows64, 4 * 64.0 * 128 * (256 + 1) * 32);
  EXPECT_DOUBLE_EQ(rows128, 2 * 128.0 * 128 * (256 + 1) * 32);
  EXPECT_DOUBLE_EQ(rows64, rows128);
}

TEST(ShapeModel, SlicesOfKShareATilesWork) {
  // One 128 x 128 tile, K = 4096 cut into 8 slices: 8 blocks on 8 SMs, an eighth of the tile
  // each, its extra k-tile included (the partial tiles' stores and sums are in measured times).
  EXPECT_DOUBLE_EQ(busiest_sm_work(tiled(128, 128, 4096, 128, 128, 32, 8), kSms), kTileWork / 8);
}

TEST(ShapeModel, APersistentBlockLoopsOverWholeTiles) {
  TileGeometry g = tiled(4096, 4096, 4096, 128, 128, 32);
  g.grid_blocks = kSms;  // one block per SM, 1024 tiles: the busiest loops over 8
  g.persistent = true;
  EXPECT_DOUBLE_EQ(busiest_sm_work(g, kSms), 8 * kTileWork);
}

TEST(ShapeModel, AKernelWithoutATileCountsItsShareOfTheShapeUnpadded) {
  TileGeometry g;
  g.m = 4097, g.n = 1, g.k = 4096;
  g.grid_blocks = 513;  // a warp per row of A, 8 rows a block: 4 blocks on the busiest SM
  EXPECT_DOUBLE_EQ(busiest_sm_work(g, kSms), 4 * 4097.0 * 1 * (4096 + 1) / 513);
}

TEST(ShapeModel, OnlyTheTimeAboveTheFixedPartScales) {
  EXPECT_NEAR(scaled_ms(0.104, 1.0, 2.0), kFixedMs + 0.100 * 2, 1e-12);
  EXPECT_NEAR(scaled_ms(0.104, 2.0, 1.0), kFixedMs + 0.100 / 2, 1e-12);
  EXPECT_DOUBLE_EQ(scaled_ms(0.003, 1.0, 100.0), 0.003);  // all of it fixed
  EXPECT_DOUBLE_EQ(scaled_ms(0.5, 0.0, 1.0), 0.5);        // nothing to scale by
  EXPECT_DOUBLE_EQ(busiest_sm_work(tiled(64, 64, 64, 64, 64, 8), 0), 0.0);  // no device
}

TEST(ShapeModel, RowsAreAlignedWhenKAndNElementsFillWhole16ByteUnits) {
  EXPECT_TRUE(rows_aligned(4096, 4096, 4));
  EXPECT_FALSE(rows_aligned(4096, 4093, 4)) << "K = 4093 floats: rows of A start anywhere";
  EXPECT_FALSE(rows_aligned(555, 333, 8));
  EXPECT_TRUE(rows_aligned(5120, 1000, 8)) << "1000 doubles = 500 16-byte units";
  EXPECT_FALSE(rows_aligned(6, 4096, 4)) << "N = 6 floats: 24 bytes";
  EXPECT_TRUE(rows_aligned(6, 4096, 8)) << "N = 6 doubles: 48 bytes";
}

TEST(ShapeModel, AReferenceOfTheOtherAlignmentCountsOneUnitFarther) {
  // Same alignment (both aligned, or both not): the plain shape distance.
  EXPECT_DOUBLE_EQ(reference_distance(128, 4096, 4096, 64, 4096, 4096, 4), std::log(2.0));
  EXPECT_DOUBLE_EQ(reference_distance(1234, 4321, 2048, 4095, 4097, 4093, 4),
                   shape_distance(1234, 4321, 2048, 4095, 4097, 4093));
  // 1000 doubles are 500 16-byte units: aligned in FP64, so no extra distance there.
  EXPECT_DOUBLE_EQ(reference_distance(64, 5120, 1000, 64, 4096, 4096, 8),
                   shape_distance(64, 5120, 1000, 64, 4096, 4096));
  // K = 4093 floats is not aligned, K = 4096 is. From 64 x 4096 x 4093, the aligned 64 x 4096 x
  // 4096 lies ln(4096 / 4093) = 0.0007 away plus the extra distance; the misaligned references
  // below lie ln(166 / 64) = 0.953 and ln(179 / 64) = 1.029 away. Ranked after the first and
  // before the second, the extra distance lies between 0.952 and 1.028: one unit.
  const double aligned = reference_distance(64, 4096, 4093, 64, 4096, 4096, 4);
  EXPECT_GT(aligned, reference_distance(64, 4096, 4093, 166, 4096, 4093, 4));
  EXPECT_LT(aligned, reference_distance(64, 4096, 4093, 179, 4096, 4093, 4));
}

TEST(ShapeModel, KindsDistancesAndParameters) {
  EXPECT_EQ(shape_kind(16, 4096), 0);
  EXPECT_EQ(shape_kind(4097, 16), 1);
  EXPECT_EQ(shape_kind(17, 17), 2);
  EXPECT_DOUBLE_EQ(shape_distance(64, 64, 64, 64, 64, 64), 0.0);
  EXPECT_NEAR(shape_distance(128, 64, 64, 64, 64, 256), std::log(2.0) + std::log(4.0), 1e-12);
  const std::string name = "split_k_mma/bm:64/bn:128/bk:32/wm:32/wn:64/stages:4/slices:0";
  EXPECT_EQ(name_param(name, "bm"), 64);
  EXPECT_EQ(name_param(name, "bn"), 128);
  EXPECT_EQ(name_param(name, "bk"), 32);
  EXPECT_EQ(name_param(name, "slices"), 0);
  EXPECT_EQ(name_param("tuned", "bm"), 0);
  // Not a positive number: no tile (the model then counts M x N x K unpadded), never a throw.
  EXPECT_EQ(name_param("x/bm:-64/bn:64", "bm"), 0);
  EXPECT_EQ(name_param("x/bm:abc", "bm"), 0);
  EXPECT_EQ(name_param("x/bm:99999999999999999999999", "bm"), 0);
}

}  // namespace
}  // namespace gemm::dispatch
