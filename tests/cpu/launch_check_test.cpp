#include <gtest/gtest.h>

#include "variant.h"

namespace gemm {
namespace {

// The limits of every GPU since Kepler that matter here (H100: the same).
DeviceLimits hopper_limits() {
  DeviceLimits l;
  l.max_threads_per_block = 1024;
  l.max_smem_per_block = 48 * 1024;
  l.max_threads_per_sm = 2048;
  l.sm_count = 132;
  return l;
}

const Variant& find(const std::string& name, Precision p) {
  for (const auto& v : all_variants())
    if (v.name() == name && v.precision == p) return v;
  throw std::runtime_error("no variant " + name);
}

TEST(LaunchCheck, Tile64IsRejectedWithTheThreadCount) {
  const auto why = check_launch(find("shared_dynamic/tile:64", Precision::fp32), {512, 512, 512},
                                hopper_limits());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("64x64 = 4096 threads per block > the device's 1024"), std::string::npos)
      << *why;
}

TEST(LaunchCheck, EveryOtherVariantFitsAHopperGpu) {
  for (const auto& v : all_variants()) {
    if (v.name() == "shared_dynamic/tile:64") continue;
    EXPECT_FALSE(check_launch(v, {1023, 517, 2049}, hopper_limits()).has_value()) << v.name();
  }
}

TEST(LaunchCheck, SharedMemoryLimitIsEnforced) {
  DeviceLimits small = hopper_limits();
  small.max_smem_per_block = 8 * 1024;  // 2 x 32 x 32 doubles = 16 KiB does not fit
  const auto why = check_launch(find("shared/tile:32", Precision::fp64), {64, 64, 64}, small);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("16384 bytes of shared memory"), std::string::npos) << *why;
  EXPECT_FALSE(check_launch(find("shared/tile:32", Precision::fp32), {64, 64, 64}, small));
}

TEST(LaunchCheck, GridLimitIsEnforced) {
  DeviceLimits tiny_grid = hopper_limits();
  tiny_grid.max_grid_dim[1] = 4;  // 8x8 blocks over 64 rows need grid.y = 8
  const auto why = check_launch(find("naive_row/block:8x8", Precision::fp32), {64, 64, 64},
                                tiny_grid);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("grid y = 8"), std::string::npos) << *why;
}

TEST(LaunchCheck, ShapesMustBePositiveAndIndexable) {
  EXPECT_TRUE(check_shape({0, 4, 4}).has_value());
  EXPECT_TRUE(check_shape({4, -1, 4}).has_value());
  EXPECT_TRUE(check_shape({65536, 65536, 1}).has_value());  // C has 2^32 elements
  EXPECT_FALSE(check_shape({1, 1, 1}).has_value());
  EXPECT_FALSE(check_shape({46340, 46340, 46340}).has_value());
}

TEST(LaunchCheck, MemoryCheckCountsInputsOutputAndReference) {
  const GemmShape s{1024, 1024, 1024};
  // FP32: 3 x 4 MiB + 8 MiB reference = 20 MiB.
  EXPECT_FALSE(check_fits_memory(s, Precision::fp32, 20u << 20).has_value());
  EXPECT_TRUE(check_fits_memory(s, Precision::fp32, (20u << 20) - 1).has_value());
  EXPECT_TRUE(check_fits_memory(s, Precision::fp64, 20u << 20).has_value());
}

}  // namespace
}  // namespace gemm
