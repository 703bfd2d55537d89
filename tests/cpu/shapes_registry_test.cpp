// The families for shapes beyond large squares and the dispatcher, as the registry lists them
// (no GPU needed): their workspace sizes follow from the split, their launch plans from the
// tiles and slices, and `auto` names a choice for every shape.
#include <gtest/gtest.h>

#include "ladder/tuned_configs.h"
#include "registry.h"
#include "tags.h"
#include "variant.h"

namespace gemm {
namespace {

const Variant& variant(const std::string& name, Precision p) {
  for (const auto& v : all_variants())
    if (v.name() == name && v.precision == p) return v;
  throw std::runtime_error("no variant " + name);
}

const std::string kSplitWide =
    "split_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1/slices:";

TEST(ShapesRegistry, SplitKWorkspaceHoldsTheCountersAndOneMatrixPerSlice) {
  // 256 x 256 in 128 x 128 tiles: 4 tiles, 2 counters each (32 bytes, padded to 256), then
  // 4 slices of a 256 x 256 FP32 matrix.
  const GemmShape s{256, 256, 4096};
  EXPECT_EQ(variant(kSplitWide + "4", Precision::fp32).workspace_bytes(s),
            256u + 4u * 256 * 256 * 4);
  // One slice needs no workspace: the blocks store C themselves.
  EXPECT_EQ(variant(kSplitWide + "1", Precision::fp32).workspace_bytes(s), 0u);
  // 16 slices asked of 4 k-tiles (K = 128, BK = 32) are 4 slices.
  EXPECT_EQ(variant(kSplitWide + "16", Precision::fp32).workspace_bytes({256, 256, 128}),
            256u + 4u * 256 * 256 * 4);
}

TEST(ShapesRegistry, SplitKGridIsTilesTimesSlices) {
  const LaunchPlan p = variant(kSplitWide + "8", Precision::fp32).plan({300, 260, 8192});
  EXPECT_EQ(p.grid.x, 3);  // ceil(260 / 128)
  EXPECT_EQ(p.grid.y, 3);  // ceil(300 / 128)
  EXPECT_EQ(p.grid.z, 8);
  EXPECT_EQ(p.block.x, 256);
}

// The wgmma splits (built with sm_90a only): the padded operand copies TMA needs first, then
// the split's counters and partial tiles (shapes/wgmma_splits.cuh).
const std::string kSplitWgmma = "split_k_wgmma/bm:64/bn:128/bk:32/stages:6/slices:";

bool built(const std::string& name) {
  for (const auto& v : all_variants())
    if (v.name() == name) return true;
  return false;
}

TEST(ShapesRegistry, SplitKWgmmaWorkspaceHoldsThePaddedCopiesThenTheSplit) {
  if (!built(kSplitWgmma + "4")) GTEST_SKIP() << "built without sm_90a";
  const Variant& v = variant(kSplitWgmma + "4", Precision::fp32);
  // 256 x 256 in 64 x 128 tiles: 8 tiles, 2 counters each (64 bytes, padded to 256), then
  // 4 slices of a 256 x 256 FP32 matrix.
  const std::size_t split = 256u + 4u * 256 * 256 * 4;
  EXPECT_EQ(v.workspace_bytes({256, 256, 4096}), split);
  // K = 4093: A (256 x 4093) copied first with rows of 4096 floats.
  EXPECT_EQ(v.workspace_bytes({256, 256, 4093}), 256u * 4096 * 4 + split);
  // 16 slices asked of 4 k-tiles (K = 128, BK = 32) are 4 slices.
  EXPECT_EQ(variant(kSplitWgmma + "16", Precision::fp32).workspace_bytes({256, 256, 128}), split);
}

TEST(ShapesRegistry, SplitKWgmmaGridIsTilesTimesSlicesWithAProducerWarpgroup) {
  if (!built(kSplitWgmma + "8")) GTEST_SKIP() << "built without sm_90a";
  const LaunchPlan p = variant(kSplitWgmma + "8", Precision::fp32).plan({300, 260, 8192});
  EXPECT_EQ(p.grid.x, 3);  // ceil(260 / 128)
  EXPECT_EQ(p.grid.y, 5);  // ceil(300 / 64)
  EXPECT_EQ(p.grid.z, 8);
  EXPECT_EQ(p.block.x, 3 * 128);  // two consumer warpgroups (128 columns), one producer
}

TEST(ShapesRegistry, TheTunedPlanNamesTheTileOfTheConfigurationItRuns) {
  // The dispatcher's model scales by the plan's tile where the name has none (auto.cu).
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const Variant& tuned = variant("tuned", p);
    for (const GemmShape s : {GemmShape{33, 11008, 4096}, GemmShape{4096, 4096, 4096},
                              GemmShape{333, 4444, 555}}) {
      const LaunchPlan plan = tuned.plan(s);
      ASSERT_GT(plan.tile_m, 0) << s.to_string();
      ASSERT_GT(plan.tile_n, 0) << s.to_string();
      EXPECT_GT(plan.tile_k, 0) << s.to_string();
      EXPECT_EQ(plan.grid.y, (s.m + plan.tile_m - 1) / plan.tile_m) << s.to_string();
      EXPECT_EQ(plan.grid.x, (s.n + plan.tile_n - 1) / plan.tile_n) << s.to_string();
      // One of the tuned table's configurations.
      const std::string tile = "bm:" + std::to_string(plan.tile_m) + "/bn:" +
                               std::to_string(plan.tile_n) + "/bk:" + std::to_string(plan.tile_k) + "/";
      bool listed = false;
      for (const Variant& c : tuned_configurations())
        listed = listed || (c.precision == p && c.params.find(tile) == 0);
      EXPECT_TRUE(listed) << to_string(p) << " " << s.to_string() << ": " << tile;
    }
  }
  // Rows of C off 16-byte boundaries: stored through the warps' static shared buffers, which
  // the plan counts (ladder/warptile_core.cuh); 16-byte stores need none.
  const Variant& tuned = variant("tuned", Precision::fp32);
  EXPECT_GT(tuned.plan({2049, 2047, 33}).static_smem_bytes, 0u);
  EXPECT_EQ(tuned.plan({2049, 2048, 33}).static_smem_bytes, 0u);
}

TEST(ShapesRegistry, GemvTakesAtMostSixteenRowsAndSaysWhy) {
  const Variant& v = variant("gemv/warps:4/vectors:1/unroll:4/ks:0", Precision::fp32);
  EXPECT_FALSE(v.can_implement({16, 4096, 4096}, DeviceLimits{}));
  const auto why = v.can_implement({17, 4096, 4096}, DeviceLimits{});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("M > 16"), std::string::npos) << *why;
}

TEST(ShapesRegistry, GemvWithKSlicesKeepsOneMatrixPerSlice) {
  // ks:16: K = 4096 in units of 4 warps x 4 rows: 256 units, 16 slices; N = 4096 in columns of
  // 128: 32 column blocks, 2 counters each (256 bytes), then 16 slices of 16 x 4096 floats.
  const Variant& v = variant("gemv/warps:4/vectors:1/unroll:4/ks:16", Precision::fp32);
  EXPECT_EQ(v.workspace_bytes({16, 4096, 4096}), 256u + 16u * 16 * 4096 * 4);
  const LaunchPlan p = v.plan({16, 4096, 4096});
  EXPECT_EQ(p.grid.x, 32);
  EXPECT_EQ(p.grid.y, 16);
}

TEST(ShapesRegistry, WgmmaTakesAnyKAndNThroughPaddedCopiesOfAAndB) {
  DeviceLimits hopper;
  hopper.cc_major = 9;
  for (const auto& v : all_variants()) {
    if (v.family.rfind("wgmma", 0) != 0 || v.param_fields.empty()) continue;  // not built here
    // K % 4 != 0: A copied with rows of 4096 floats (64 MiB), B and C as they are.
    EXPECT_FALSE(v.can_implement({4096, 4096, 4093}, hopper)) << v.name();
    EXPECT_EQ(v.workspace_bytes({4096, 4096, 4093}), 4096u * 4096 * 4) << v.name();
    // N % 4 != 0: B (64 x 132) copied, 256-byte aligned; C stored in place at any N.
    EXPECT_EQ(v.workspace_bytes({128, 130, 64}), 64u * 132 * 4) << v.name();
    EXPECT_EQ(v.workspace_bytes({2049, 2047, 33}), (2049u * 36 * 4 + 255) / 256 * 256 + 33u * 2048 * 4)
        << v.name();
    // Aligned: nothing to copy.
    EXPECT_EQ(v.workspace_bytes({4096, 4096, 4096}), 0u) << v.name();
  }
}

TEST(ShapesRegistry, EveryShapesVariantIsAKernelWithItsLevelTag) {
  int found = 0;
  for (const auto& v : all_variants()) {
    if (!v.has_tag(tag::shapes)) continue;
    ++found;
    EXPECT_EQ(v.backend, Backend::cuda_kernel) << v.name();
    EXPECT_EQ(v.tags.front(), tag::shapes) << v.name();
  }
  EXPECT_GT(found, 0);
}

TEST(ShapesRegistry, AutoExistsPerArithmeticAndNamesItsChoice) {
  const Variant& fp32 = variant("auto", Precision::fp32);
  const Variant& fp64 = variant("auto", Precision::fp64);
  const Variant& tf32 = variant("auto_tf32", Precision::fp32);
  EXPECT_EQ(fp32.compute, Compute::fp32);
  EXPECT_EQ(fp64.compute, Compute::fp64);
  EXPECT_EQ(tf32.compute, Compute::tf32);
  for (const Variant* v : {&fp32, &fp64, &tf32}) {
    EXPECT_TRUE(v->has_tag(tag::dispatch));
    for (const GemmShape& s : {GemmShape{1, 4096, 4096}, GemmShape{4096, 4096, 4096},
                               GemmShape{128, 128, 65536}, GemmShape{4095, 4097, 4093}}) {
      const std::string choice = v->choice(s);
      EXPECT_NE(choice.find("\"family\": "), std::string::npos) << v->name() << " " << s.to_string();
      EXPECT_NE(choice.find("\"rule\": "), std::string::npos) << choice;
    }
  }
  // A decode step is bound by reading B: one row takes the GEMV kernel, by the table's entry.
  // Two rows, which the table does not hold: without a GPU to plan on, the nearest entry's
  // configuration; with one, the model, from the nearest sweep shapes of a few rows.
  EXPECT_NE(fp32.choice({1, 4096, 4096}).find("\"family\": \"gemv\""), std::string::npos);
  const std::string two_rows = fp64.choice({2, 4096, 4096});
  if (two_rows.find("\"rule\": \"model: ") == std::string::npos) {
    EXPECT_NE(two_rows.find("\"family\": \"gemv\""), std::string::npos) << two_rows;
    EXPECT_NE(two_rows.find("nearest table shape 1x4096x4096"), std::string::npos) << two_rows;
  } else {
    EXPECT_NE(two_rows.find("times at 1x4096x4096 and "), std::string::npos) << two_rows;
  }
  // One column of B takes only from the few-columns kind (N <= 16): without a GPU the nearest
  // such entry (8192x1x8192, where the kernel that reads A once won), with one the model from
  // that kind's sweep shapes, the nearest first.
  for (const Variant* v : {&fp32, &fp64, &tf32}) {
    const std::string one_column = v->choice({4097, 1, 4096});
    if (one_column.find("\"rule\": \"model: ") == std::string::npos) {
      EXPECT_NE(one_column.find("\"family\": \"gemv_cols\""), std::string::npos) << one_column;
      EXPECT_NE(one_column.find("nearest table shape 8192x1x8192"), std::string::npos) << one_column;
    } else {
      EXPECT_NE(one_column.find("times at 8192x1x8192 and "), std::string::npos) << one_column;
    }
  }
}

// Every entry of the committed table: the dispatcher of its arithmetic runs the entry's variant
// at the entry's shape, by the table (where the variant takes the shape without a device: sm_90a
// code needs one to say yes).
struct TableEntry {
  const char* arithmetic;
  std::int64_t m, n, k;
  const char* variant;
};
constexpr TableEntry kTable[] = {
#define GEMM_AUTO(ARITHMETIC, M, N, K, VARIANT) {#ARITHMETIC, M, N, K, VARIANT},
#include "dispatch/auto_table.inc"
#undef GEMM_AUTO
    {"", 0, 0, 0, nullptr},
};

TEST(ShapesRegistry, AutoRunsTheTablesVariantAtEveryShapeOfTheTable) {
  int checked = 0;
  for (const TableEntry& e : kTable) {
    if (e.variant == nullptr) continue;
    const std::string arithmetic = e.arithmetic;
    const Precision p = arithmetic == "fp64" ? Precision::fp64 : Precision::fp32;
    const Variant& dispatcher = variant(arithmetic == "tf32" ? "auto_tf32" : "auto", p);
    const Variant& named = variant(e.variant, p);
    const GemmShape s{e.m, e.n, e.k};
    if (named.can_implement && named.can_implement(s, DeviceLimits{})) continue;
    const std::string choice = dispatcher.choice(s);
    EXPECT_NE(choice.find("\"variant\": \"" + std::string(e.variant) + "\""), std::string::npos)
        << s.to_string() << ": " << choice;
    EXPECT_NE(choice.find("\"rule\": \"table\""), std::string::npos) << choice;
    ++checked;
  }
  EXPECT_GE(checked, 50) << "the committed table holds entries for every arithmetic";
}

}  // namespace
}  // namespace gemm
