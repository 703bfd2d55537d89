#include <gtest/gtest.h>

#include "tags.h"
#include "variant.h"

namespace gemm {
namespace {

constexpr std::int64_t kInt32Max = 2147483647;

// The limits of every GPU since Kepler that matter here (H100: the same).
DeviceLimits hopper_limits() {
  DeviceLimits l;
  l.max_threads_per_block = 1024;
  l.max_smem_per_block = 48 * 1024;
  l.max_smem_per_block_optin = 227 * 1024;
  l.max_threads_per_sm = 2048;
  l.sm_count = 132;
  l.cc_major = 9;
  l.cc_minor = 0;
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

// A refusal must come from the variant's own declared precondition (with its reason), or be the
// write-ups' deliberately illegal tile: nothing else may keep a variant off a Hopper GPU.
TEST(LaunchCheck, EveryOtherVariantFitsAHopperGpuOrDeclaresWhyNot) {
  for (const GemmShape shape : {GemmShape{1023, 517, 2049}, GemmShape{4096, 4096, 4096}}) {
    for (const auto& v : all_variants()) {
      if (v.name() == "shared_dynamic/tile:64") continue;
      const auto refused = check_launch(v, shape, hopper_limits());
      if (!refused) continue;
      ASSERT_TRUE(bool(v.can_implement)) << *refused;
      const auto declared = v.can_implement(shape, hopper_limits());
      ASSERT_TRUE(declared.has_value()) << "refused by the launch limits: " << *refused;
      EXPECT_EQ(*refused, v.name() + ": " + *declared);
    }
  }
}

// The default study's square sizes are multiples of every tile, aligned for every vector
// load: there every rung must run (only a build without sm_90a may refuse its kernels).
TEST(LaunchCheck, EveryRungRunsAtTheStudySizes) {
  for (const auto& v : all_variants()) {
    if (v.rung == 0 || v.has_tag(tag::tuning)) continue;
    const auto refused = check_launch(v, {4096, 4096, 4096}, hopper_limits());
    if (refused && refused->find("sm_90a") != std::string::npos) continue;
    EXPECT_FALSE(refused.has_value()) << *refused;
  }
}

TEST(LaunchCheck, DynamicSharedMemoryUpToTheOptInLimitIsAllowed) {
  Variant v;
  v.family = "big_smem";
  v.plan = [](const GemmShape&) {
    LaunchPlan p;
    p.block = {256, 1, 1};
    p.dynamic_smem_bytes = 100 * 1024;  // above 48 KB: needs the opt-in
    return p;
  };
  EXPECT_FALSE(check_launch(v, {64, 64, 64}, hopper_limits()).has_value());
  DeviceLimits no_optin = hopper_limits();
  no_optin.max_smem_per_block_optin = 48 * 1024;
  const auto why = check_launch(v, {64, 64, 64}, no_optin);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("102400 bytes of shared memory"), std::string::npos) << *why;
}

TEST(LaunchCheck, APreconditionRefusesBeforeTheLimitsAreLookedAt) {
  Variant v;
  v.family = "needs_k4";
  v.can_implement = [](const GemmShape& s, const DeviceLimits&) -> std::optional<std::string> {
    if (s.k % 4) return "K % 4 != 0: 16-byte loads need K a multiple of 4";
    return std::nullopt;
  };
  v.plan = [](const GemmShape&) {
    LaunchPlan p;
    p.block = {128, 1, 1};
    return p;
  };
  EXPECT_EQ(check_launch(v, {8, 8, 6}, hopper_limits()),
            "needs_k4: K % 4 != 0: 16-byte loads need K a multiple of 4");
  EXPECT_FALSE(check_launch(v, {8, 8, 8}, hopper_limits()).has_value());
}

TEST(LaunchCheck, SharedMemoryLimitIsEnforced) {
  DeviceLimits small = hopper_limits();
  small.max_smem_per_block = 8 * 1024;  // 2 x 32 x 32 doubles = 16 KiB does not fit
  small.max_smem_per_block_optin = 8 * 1024;
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
  // Dimensions whose products wrap around int64 (2^32 x 2^32 = 2^64 = 0): refused, not passed.
  EXPECT_TRUE(check_shape({std::int64_t(1) << 32, std::int64_t(1) << 32, 1}).has_value());
  EXPECT_TRUE(check_shape({1, std::int64_t(1) << 62, 4}).has_value());
  EXPECT_FALSE(check_shape({1, kInt32Max, 1}).has_value());  // exactly 2^31-1 elements: allowed
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

TEST(LaunchCheck, BothPrecisionsOfAShapeMustFitTogether) {
  const GemmShape s{1024, 1024, 1024};
  const std::vector<Precision> both = {Precision::fp32, Precision::fp64};
  // FP32 A, B, C 12 MiB + FP64 A, B, C 24 MiB + each precision's 8 MiB FP64 reference of C on the
  // device = 52 MiB.
  EXPECT_FALSE(check_fits_memory(s, both, 52u << 20).has_value());
  const auto bad = check_fits_memory(s, both, (52u << 20) - 1);
  ASSERT_TRUE(bad.has_value());
  EXPECT_NE(bad->find("fp32+fp64"), std::string::npos) << *bad;
  EXPECT_EQ(bad->find('\n'), std::string::npos);
  // One precision: the single-precision rule.
  EXPECT_FALSE(check_fits_memory(s, std::vector<Precision>{Precision::fp32}, 20u << 20).has_value());
}

}  // namespace
}  // namespace gemm
