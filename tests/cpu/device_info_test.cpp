#include <gtest/gtest.h>

#include "counters.h"
#include "device_info.h"

namespace gemm {
namespace {

TEST(Peaks, H100FromFirstPrinciples) {
  // H100 SXM: 132 SMs x 128 FP32 lanes x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s; FP64 half of that.
  EXPECT_NEAR(*peak_gflops(9, 0, 132, 1980000, Precision::fp32), 66908.16, 0.01);
  EXPECT_NEAR(*peak_gflops(9, 0, 132, 1980000, Precision::fp64), 33454.08, 0.01);
  EXPECT_FALSE(peak_gflops(5, 0, 16, 1000000, Precision::fp32).has_value());  // unknown: no guess
  // HBM3 at 2619 MHz on a 5120-bit bus: 3352 GB/s.
  EXPECT_NEAR(peak_bandwidth_gbs(2619000, 5120), 3352.32, 0.01);
}

TEST(Peaks, TensorCoresMatchTheDatasheets) {
  // H100 SXM: TF32 dense 495 TFLOP/s at the 1,830 MHz the datasheet assumes, FP64 tensor 67 at
  // 1,980 MHz; A100: TF32 156 and FP64 tensor 19.5 at 1,410 MHz over 108 SMs.
  EXPECT_NEAR(*peak_tensor_gflops(9, 0, 132, 1830000, Compute::tf32), 494714.88, 0.01);
  EXPECT_NEAR(*peak_tensor_gflops(9, 0, 132, 1980000, Compute::fp64), 66908.16, 0.01);
  EXPECT_NEAR(*peak_tensor_gflops(8, 0, 108, 1410000, Compute::tf32), 155934.72, 0.01);
  EXPECT_NEAR(*peak_tensor_gflops(8, 0, 108, 1410000, Compute::fp64), 19491.84, 0.01);
  EXPECT_FALSE(peak_tensor_gflops(9, 0, 132, 1980000, Compute::fp32)) << "no FP32 tensor path";
  EXPECT_FALSE(peak_tensor_gflops(8, 6, 84, 1700000, Compute::tf32)) << "unknown: no guess";
}

TEST(Occupancy, WarpsOverMaximum) {
  EXPECT_DOUBLE_EQ(occupancy_percent(2, 1024, 2048, 32), 100.0);  // two 32x32 blocks
  EXPECT_DOUBLE_EQ(occupancy_percent(32, 1, 2048, 32), 50.0);     // 32 one-thread blocks
  EXPECT_DOUBLE_EQ(occupancy_percent(0, 64, 2048, 32), 0.0);
}

TEST(GpuSlug, DirectoryNames) {
  EXPECT_EQ(gpu_slug("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3");
  EXPECT_EQ(gpu_slug("NVIDIA H200"), "h200");
  EXPECT_EQ(gpu_slug("Tesla T4"), "tesla-t4");
  EXPECT_EQ(gpu_slug("///"), "unknown-gpu");
}

}  // namespace
}  // namespace gemm
