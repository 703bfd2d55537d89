#include <gtest/gtest.h>

#include "benchmark_names.h"
#include "variant.h"

namespace gemm {
namespace {

TEST(BenchmarkNames, Scheme) {
  EXPECT_EQ(benchmark_name(Precision::fp32, "naive_row/block:16x16", {512, 256, 128}),
            "gemm/fp32/naive_row/block:16x16/m:512/n:256/k:128");
  EXPECT_EQ(end_to_end_name(Precision::fp64, "cublas", {1, 2, 3}), "gemm_e2e/fp64/cublas/m:1/n:2/k:3");
}

TEST(BenchmarkNames, EveryNvtxRangeIsNcuSafeAndUnique) {
  std::set<std::string> ranges;
  for (const auto& v : all_variants()) {
    const std::string r = nvtx_range_name(benchmark_name(v.precision, v.name(), {1023, 517, 2049}));
    EXPECT_TRUE(is_ncu_safe(r)) << r;
    EXPECT_TRUE(ranges.insert(r).second) << r;
  }
  EXPECT_EQ(nvtx_range_name("gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time"),
            "gemm.fp32.shared.tile-16.m-512.n-512.k-512");
  EXPECT_FALSE(is_ncu_safe("a/b"));
  EXPECT_FALSE(is_ncu_safe("a@b"));
  EXPECT_FALSE(is_ncu_safe("a+b"));
}

TEST(BenchmarkNames, ParseRoundTrip) {
  ParsedName p;
  ASSERT_TRUE(parse_benchmark_name("gemm/fp64/shared_col_padded/tile:32/m:1023/n:517/k:2049/manual_time", p));
  EXPECT_EQ(p.precision, Precision::fp64);
  EXPECT_EQ(p.variant, "shared_col_padded/tile:32");
  EXPECT_EQ(p.shape.k, 2049);
  EXPECT_FALSE(p.end_to_end);
  EXPECT_FALSE(parse_benchmark_name("gemm/fp16/x/m:1/n:1/k:1", p));
  EXPECT_FALSE(parse_benchmark_name("nonsense", p));
  // A dimension beyond 64 bits is no benchmark: false, not an exception out of a bool parser.
  EXPECT_FALSE(parse_benchmark_name("gemm/fp32/cublas/m:99999999999999999999/n:1/k:1", p));
}

TEST(NcuCommand, SelectsExactlyTheTimedLaunchOfOneBenchmark) {
  const std::string cmd =
      ncu_command("gemm/fp32/naive_col/block:32x32/m:1024/n:1024/k:1024", "./build/bench/gemm-bench");
  EXPECT_NE(cmd.find("--nvtx-include \"gemm@gemm.fp32.naive_col.block-32x32.m-1024.n-1024.k-1024/timed/\""),
            std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--launch-count 1"), std::string::npos);
  EXPECT_NE(cmd.find("--clock-control none"), std::string::npos);
  EXPECT_NE(cmd.find("--profile"), std::string::npos);
  EXPECT_NE(cmd.find("--shapes=1024x1024x1024"), std::string::npos);
  EXPECT_NE(cmd.find("--precisions=fp32"), std::string::npos);
  EXPECT_NE(cmd.find("'^gemm/fp32/naive_col/block:32x32/m:1024/n:1024/k:1024(/manual_time)?$'"),
            std::string::npos) << cmd;
  EXPECT_THROW(ncu_command("not a benchmark", "x"), std::invalid_argument);
}

}  // namespace
}  // namespace gemm
