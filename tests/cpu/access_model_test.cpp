// The access model's own rules, on the CPU: each expected value below is worked out by hand
// from the addresses (comments show the arithmetic), so the GPU counter tests that rely on the
// model stand on rules that are themselves tested.
#include <gtest/gtest.h>

#include "access_model.h"

namespace gemm::test {
namespace {

std::vector<std::uint64_t> strided(std::uint64_t base, std::uint64_t stride_bytes, int lanes = 32) {
  std::vector<std::uint64_t> a;
  for (int i = 0; i < lanes; ++i) a.push_back(base + i * stride_bytes);
  return a;
}

TEST(AccessModelGlobal, SectorsOfOneWarp) {
  EXPECT_EQ(global_sectors(strided(0, 4), 4), 4);     // 32 floats = 128 B = 4 sectors
  EXPECT_EQ(global_sectors(strided(0, 8), 8), 8);     // 32 doubles = 256 B
  EXPECT_EQ(global_sectors(strided(0, 0), 4), 1);     // broadcast
  EXPECT_EQ(global_sectors(strided(0, 4096), 4), 32);  // one row each
  EXPECT_EQ(global_sectors(strided(16, 4), 4), 5);    // misaligned by half a sector
  EXPECT_EQ(global_sectors(strided(0, 16), 16), 16);  // 32 x 16-byte loads = 512 B
}

TEST(AccessModelShared, ConflictDegreeOfColumnsAndPaddedColumns) {
  EXPECT_EQ(bank_conflict_degree(strided(0, 4), 4), 1);        // consecutive words
  EXPECT_EQ(bank_conflict_degree(strided(0, 0), 4), 1);        // broadcast: one word
  EXPECT_EQ(bank_conflict_degree(strided(0, 32 * 4), 4), 32);  // column of a 32x32 float tile
  EXPECT_EQ(bank_conflict_degree(strided(0, 33 * 4), 4), 1);   // rows padded by one float
  EXPECT_EQ(bank_conflict_degree(strided(0, 8 * 4), 4), 8);    // column of an 8-wide tile
}

TEST(AccessModelShared, WavefrontsFollowTheInstructionWidth) {
  EXPECT_EQ(shared_wavefronts(strided(0, 32 * 4), 4), 32);
  // 64-bit: half-warps; 16 consecutive doubles = 128 B each, conflict-free: 1 + 1.
  EXPECT_EQ(shared_wavefronts(strided(0, 8), 8), 2);
  // 128-bit, consecutive: a half-warp touches 256 B (every bank twice), so it splits into
  // quarter-warps of 128 B each: 2 per half, 4 in all.
  EXPECT_EQ(shared_wavefronts(strided(0, 16), 16), 4);
  // 128-bit broadcast: each half-warp is conflict-free and costs one: 2 (the sm_90 rule).
  EXPECT_EQ(shared_wavefronts(strided(0, 0), 16), 2);
  // Both quarter-warps of each half read the same 8 consecutive chunks (128 B): the half is
  // conflict-free, but 8 + 8 chunks do not fit one wavefront: 2 per half, 4 in all.
  std::vector<std::uint64_t> same_eight;
  for (int lane = 0; lane < 32; ++lane) same_eight.push_back((lane % 8) * 16);
  EXPECT_EQ(shared_wavefronts(same_eight, 16), 4);
  // Each quarter-warp reads 4 chunks (pairs of lanes broadcast): 4 + 4 fit, so they pair.
  std::vector<std::uint64_t> four_each;
  for (int lane = 0; lane < 32; ++lane) four_each.push_back(((lane / 2) % 4 + 4 * (lane / 8 % 2)) * 16);
  EXPECT_EQ(shared_wavefronts(four_each, 16), 2);
}

TEST(AccessModelNaive, CoalescingOfTheRowAndColumnMappings) {
  const GemmShape s{256, 256, 256};
  // Row mapping: per k, one broadcast of A (1 sector) and 32 consecutive B elements (4 sectors
  // in FP32, 8 in FP64), over 2 requests: 2.5 and 4.5 sectors per request.
  EXPECT_DOUBLE_EQ(naive_global_loads(Mapping::row, 32, 32, s, 4).per_request(), 2.5);
  EXPECT_DOUBLE_EQ(naive_global_loads(Mapping::row, 32, 32, s, 8).per_request(), 4.5);
  // Column mapping: 32 rows of A (32 sectors) and a broadcast of B (1): 16.5.
  EXPECT_DOUBLE_EQ(naive_global_loads(Mapping::col, 32, 32, s, 4).per_request(), 16.5);
  // Requests: one per warp per k per operand: (256*256/32 warps) x 256 x 2.
  EXPECT_DOUBLE_EQ(naive_global_loads(Mapping::row, 32, 32, s, 4).requests, 2048.0 * 256 * 2);
}

TEST(AccessModelTiled, ColumnReadsConflictUnlessPadded) {
  const GemmShape s{256, 256, 256};
  // The warp's lanes read 32 different rows of tile_a; rows of 32 floats are 32 words apart,
  // so every row starts in bank 0: 32-way. At tile 16 a warp covers 16 rows (two columns of
  // C), 16 words apart: they alternate between banks 0 and 16, 8 rows each: 8-way.
  EXPECT_EQ(tiled_shared_loads(Mapping::col, 32, 0, s, 4).tile_a.n_way, 32);
  EXPECT_EQ(tiled_shared_loads(Mapping::col, 16, 0, s, 4).tile_a.n_way, 8);
  // Padded rows (33 floats) are read element-wide: lanes 33 words apart hit 32 banks: 1.
  EXPECT_EQ(tiled_shared_loads(Mapping::col, 32, 1, s, 4).tile_a.n_way, 1);
  // Each element is fetched from global memory once per tile of the other operand.
  const AccessCount loads = tiled_global_loads(Mapping::row, 32, s, 4);
  EXPECT_DOUBLE_EQ(loads.units, 2.0 * 256 * 256 * (256 / 32) * 4 / 32);
}

TEST(AccessModelTiled, RowReadWidthFollowsTheRowPitch) {
  EXPECT_EQ(row_read_bytes(32, 0, 4), 16);  // 128-byte rows: LDS.128
  EXPECT_EQ(row_read_bytes(32, 1, 4), 4);   // 132-byte rows: element-wide
  EXPECT_EQ(row_read_bytes(8, 0, 8), 16);
  EXPECT_EQ(row_read_bytes(8, 1, 8), 8);
}

}  // namespace
}  // namespace gemm::test
