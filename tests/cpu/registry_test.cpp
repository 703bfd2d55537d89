#include <gtest/gtest.h>

#include <set>
#include <string>

#include "variant.h"

namespace gemm {
namespace {

bool has(const std::string& name, Precision p) {
  for (const auto& v : all_variants())
    if (v.name() == name && v.precision == p) return true;
  return false;
}

TEST(Registry, NamesAreUniquePerPrecision) {
  std::set<std::string> seen;
  for (const auto& v : all_variants())
    EXPECT_TRUE(seen.insert(to_string(v.precision) + "/" + v.name()).second) << v.name();
}

TEST(Registry, EverySeedVariantExistsInBothPrecisions) {
  std::vector<std::string> expected = {"cublas", "cpu_serial", "grid_stride/threads:256"};
  for (const char* family : {"naive_row", "naive_col"})
    for (const char* block : {"8x8", "16x16", "32x32"})
      expected.push_back(std::string(family) + "/block:" + block);
  for (const char* tile : {"8x8", "16x16", "32x32"})
    expected.push_back(std::string("naive_tile/tile:") + tile);
  for (const char* family : {"shared", "shared_col", "shared_col_padded", "shared_register",
                             "shared_register_col"})
    for (int tile : {8, 16, 32}) expected.push_back(std::string(family) + "/tile:" + std::to_string(tile));
  for (int tile : {8, 16, 32, 64}) expected.push_back("shared_dynamic/tile:" + std::to_string(tile));
  for (int blocks = 1; blocks <= 1024; blocks *= 2)
    expected.push_back("single_thread_blocks/blocks:" + std::to_string(blocks));
  for (const auto& name : expected) {
    EXPECT_TRUE(has(name, Precision::fp32)) << name << " fp32";
    EXPECT_TRUE(has(name, Precision::fp64)) << name << " fp64";
  }
}

TEST(Registry, Tf32ReferenceIsFp32OnlyAndLabelled) {
  EXPECT_TRUE(has("cublas_tf32", Precision::fp32));
  EXPECT_FALSE(has("cublas_tf32", Precision::fp64));
}

TEST(Registry, KernelsHavePlansAndEveryVariantRuns) {
  for (const auto& v : all_variants()) {
    EXPECT_TRUE(bool(v.run)) << v.name();
    EXPECT_GT(v.unit_roundoff, 0) << v.name();
    EXPECT_EQ(bool(v.plan), v.backend == Backend::cuda_kernel) << v.name();
    EXPECT_FALSE(v.origin.empty()) << v.name();
  }
}

TEST(Registry, CuBlasComesFirstSoOthersCanBeReportedAgainstIt) {
  ASSERT_FALSE(all_variants().empty());
  EXPECT_EQ(all_variants().front().family, "cublas");
}

}  // namespace
}  // namespace gemm
