// The idle latencies the bottleneck account charges unoverlapped loads (bench/memory_latency.cu).
// What must hold follows from where each access is served, not from a run: a shared-memory load
// stays in the SM, an L2 hit crosses the chip to an L2 slice and back, a DRAM access does that
// and waits for HBM too, so shared < L2 < DRAM; a barrier of 256 threads costs at least a cycle;
// and a load that crossed the chip takes longer than any pipe's few-cycle latency.
#include <gtest/gtest.h>

#include <map>

#include "gpu_test_support.h"
#include "memory_latency.h"

namespace {

TEST(LatencyLevels, AreOrderedByWhereTheAccessIsServed) {
  GEMM_REQUIRE_GPU();
  std::string why;
  const auto device = gemm::query_device(0, why);
  ASSERT_TRUE(device) << why;
  std::map<std::string, double> cycles;
  for (const auto& l : gemm::bench::measure_latencies(*device)) cycles[l.level] = l.cycles;
  ASSERT_EQ(cycles.size(), 4u);
  EXPECT_GT(cycles["shared"], 4.0);
  EXPECT_GT(cycles["l2"], 2 * cycles["shared"]);
  EXPECT_GT(cycles["dram"], cycles["l2"] + 50);  // HBM's access time on top of the L2's round trip
  EXPECT_GE(cycles["barrier"], 1.0);
  EXPECT_LT(cycles["barrier"], cycles["l2"]);  // a barrier never leaves the SM
}

// L2 hits come from SRAM slices on the chip, DRAM from HBM behind them: a read stream that stays
// in L2 must outrun the DRAM's peak (its clock times its bus width).
TEST(LatencyLevels, L2ReadsOutrunDram) {
  GEMM_REQUIRE_GPU();
  std::string why;
  const auto device = gemm::query_device(0, why);
  ASSERT_TRUE(device) << why;
  const auto l2 = gemm::bench::measure_l2_read_bandwidth(*device);
  EXPECT_EQ(l2.level, "l2_read");
  EXPECT_GT(l2.gbs, gemm::peak_bandwidth_gbs(device->memory_clock_khz, device->memory_bus_width_bits));
}

}  // namespace
