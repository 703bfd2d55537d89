// The idle latencies the bottleneck account charges unoverlapped loads (bench/memory_latency.cu).
// What must hold follows from where each access is served, not from a run: a shared-memory load
// stays in the SM, an L2 hit crosses the chip to an L2 slice and back, a DRAM access does that
// and waits for HBM too, so shared < L2 < DRAM; a barrier of 256 threads costs at least a cycle;
// and a load that crossed the chip takes longer than any pipe's few-cycle latency. Beside them,
// the pipes' own dependent latencies and the ALU pipe's rate (bench/instruction_latency.cu).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "gpu_test_support.h"
#include "instruction_latency.h"
#include "memory_latency.h"
#include "nvml.h"
#include "timing.h"

namespace {

// Every test here measures on device 0: skipped without one, failed if it cannot be queried.
class LatencyLevels : public ::testing::Test {
 protected:
  void SetUp() override {
    GEMM_REQUIRE_GPU();
    std::string why;
    device_ = gemm::query_device(0, why);
    ASSERT_TRUE(device_) << why;
  }
  const gemm::DeviceInfo& device() const { return *device_; }

 private:
  std::optional<gemm::DeviceInfo> device_;
};

TEST_F(LatencyLevels, AreOrderedByWhereTheAccessIsServed) {
  std::map<std::string, double> cycles;
  for (const auto& l : gemm::bench::measure_latencies(device())) cycles[l.level] = l.cycles;
  ASSERT_EQ(cycles.size(), 5u);
  EXPECT_GT(cycles["shared"], 4.0);
  // An L1 hit passes the tag stage that a shared load skips, and never leaves the SM.
  EXPECT_GT(cycles["l1"], cycles["shared"]);
  EXPECT_GT(cycles["l2"], 2 * cycles["l1"]);
  EXPECT_GT(cycles["dram"], cycles["l2"] + 50);  // HBM's access time on top of the L2's round trip
  EXPECT_GE(cycles["barrier"], 1.0);
  EXPECT_LT(cycles["barrier"], cycles["l2"]);  // a barrier never leaves the SM
}

// L2 hits come from SRAM slices on the chip, DRAM from HBM behind them: a read stream that stays
// in L2 must outrun the DRAM's peak (its clock times its bus width).
TEST_F(LatencyLevels, L2ReadsOutrunDram) {
  const auto l2 = gemm::bench::measure_l2_read_bandwidth(device());
  EXPECT_EQ(l2.level, "l2_read");
  EXPECT_GT(l2.gbs, gemm::peak_bandwidth_gbs(device().memory_clock_khz, device().memory_bus_width_bits));
}

}  // namespace

// The pipes' dependent latencies (bench/instruction_latency.cu). The CUDA C++ Programming Guide
// ("Maximize Instruction Throughput", multiprocessor level) puts most arithmetic instructions'
// latency at 4 cycles: an FFMA or LOP3 chain must come out a few cycles per link, never the one
// cycle of an issue slot (that would mean the links did not depend on each other) nor the tens of
// a memory access. A tensor-core MMA does 16 x 8 x 8 multiply-adds per warp where an FFMA does 32:
// its chain cannot be shorter than an FFMA's.
TEST_F(LatencyLevels, EachPipesDependentLatencyIsAFewCycles) {
  std::map<std::string, double> cycles;
  for (const auto& l : gemm::bench::measure_instruction_latencies(device())) cycles[l.pipe] = l.cycles;
  ASSERT_GE(cycles.size(), 5u);  // m16n8k16 FP64 too where the GPU and the build have it
  if (device().cc_major >= 9) {
    EXPECT_EQ(cycles.size(), 6u);  // the tests are built for Hopper
  }
  for (const char* pipe : {"fma", "alu"}) {
    EXPECT_GE(cycles[pipe], 2.0) << pipe;
    EXPECT_LE(cycles[pipe], 8.0) << pipe;
  }
  EXPECT_GE(cycles["fp64"], cycles["fma"]);
  for (const char* pipe : {"hmma_tf32", "dmma_884", "dmma_16816"}) {
    if (cycles.count(pipe)) {
      EXPECT_GT(cycles[pipe], cycles["fma"]) << pipe;
    }
  }
}

// The Programming Guide's throughput table gives 64 results per clock per SM for 32-bit bitwise
// operations on compute capability 9.0 (half the FP32 FMA's 128): 2 warp instructions per clock.
TEST_F(LatencyLevels, TheAluPipeIssuesAtItsDocumentedRate) {
  if (device().cc_major != 9) GTEST_SKIP() << "the documented rate checked is compute capability 9.0's";
  const auto alu = gemm::bench::measure_alu_rate(device());
  EXPECT_EQ(alu.pipe, "alu");
  EXPECT_GT(alu.inst_per_clk_per_sm, 0.8 * 2.0);
  EXPECT_LT(alu.inst_per_clk_per_sm, 1.05 * 2.0);
}

// The SMs' own count of the clock across timed samples (bench/sm_clock_probe.h). Under CUDA-core
// load nothing slows the SMs below the clock the driver set, so their count and NVML's reading
// must agree within a few percent. On an H100 the count (and ncu's own,
// sm__cycles_elapsed.avg.per_second) sits steadily about 0.8% above NVML's maximum of 1,980 MHz
// on millisecond windows; a count more than 2% above it would mean the stamps measured something
// other than the window. The load: the FP32 register-blocked rung at 1536^3, a few milliseconds of
// FFMA per sample.
namespace {

TEST(LatencyClock, TheSmsCountOfTheClockMatchesNvmlUnderCudaCoreLoad) {
  GEMM_REQUIRE_GPU();
  const gemm::Nvml& nvml = gemm::Nvml::for_device(0);
  if (!nvml.available()) GTEST_SKIP() << "NVML unavailable (" << nvml.why_unavailable() << ")";
  const gemm::Variant& v = gemm::test::representative("blocktile_2d", gemm::Precision::fp32);
  auto& data = gemm::test::test_data(gemm::Precision::fp32, {1536, 1536, 1536});
  const gemm::Operands ops = gemm::test::operands_for(v, data);
  const cudaStream_t stream = gemm::test::test_stream();
  auto launch = [&] { v.run(ops, stream); };
  gemm::SamplingPolicy policy;
  policy.min_samples = 8;
  const gemm::TimingResult t = gemm::time_gpu(launch, stream, false, 4, nvml, policy);
  for (const auto& s : t.samples) EXPECT_GT(s.sm_mhz_counted, 0) << "every sample has a count";
  ASSERT_GT(t.median_clock_mhz, 0);
  EXPECT_NEAR(t.median_counted_clock_mhz, t.median_clock_mhz, 0.03 * t.median_clock_mhz);
  if (const auto max = nvml.max_sm_mhz()) EXPECT_LE(t.median_counted_clock_mhz, 1.02 * *max);
}

}  // namespace
