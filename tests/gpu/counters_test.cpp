// Counters are evidence: each claim of the study is a counter compared with the value its access
// pattern predicts (access_model.h), never with a number copied from a run.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>

#include "access_model.h"
#include "counters.h"
#include "cuda_check.h"
#include "counter_test_support.h"
#include "gpu_test_support.h"
#include "metric_catalogue.h"

namespace gemm::test {
namespace {

const GemmShape kCounterShape{256, 256, 256};  // whole tiles: every lane of every warp active

int bytes_of(Precision p) { return int(element_size(p)); }

// --- coalescing ------------------------------------------------------------------------------

TEST(CountersCoalescing, NaiveKernelsReadTheSectorsTheirMappingPredicts) {
  GEMM_REQUIRE_COUNTERS();
  for (Precision p : {Precision::fp32, Precision::fp64})
    for (int edge : {8, 16, 32}) {
      const std::string block = std::to_string(edge) + "x" + std::to_string(edge);
      for (auto [family, mapping] : {std::pair{"naive_row", Mapping::row},
                                     std::pair{"naive_col", Mapping::col},
                                     std::pair{"naive_tile", Mapping::row}}) {
        const std::string name = std::string(family) + (family == std::string("naive_tile")
                                                            ? "/tile:" : "/block:") + block;
        const CounterValues c = measure(name, p, kCounterShape);
        const AccessCount loads = naive_global_loads(mapping, edge, edge, kCounterShape, bytes_of(p));
        const AccessCount stores = naive_global_stores(mapping, edge, edge, kCounterShape, bytes_of(p));
        const std::string what = name + " " + to_string(p);
        expect_count(c.at("gld_requests"), loads.requests, what + " gld_requests");
        expect_count(c.at("gld_sectors"), loads.units, what + " gld_sectors");
        expect_count(c.at("gst_requests"), stores.requests, what + " gst_requests");
        expect_count(c.at("gst_sectors"), stores.units, what + " gst_sectors");
      }
    }
}

TEST(CountersCoalescing, RowVersusColumnIs2Point5Versus16Point5InFp32) {
  GEMM_REQUIRE_COUNTERS();
  // 32x32 blocks, FP32. Row mapping: per k-step a warp broadcasts one A element (1 sector) and
  // reads 32 consecutive floats of B (128 B = 4 sectors): (1 + 4) / 2 = 2.5 per request.
  // Column mapping: 32 rows of A (32 sectors) and one broadcast B element: (32 + 1) / 2 = 16.5.
  EXPECT_DOUBLE_EQ(measure("naive_row/block:32x32", Precision::fp32, kCounterShape)
                       .at("gld_sectors_per_request"), 2.5);
  EXPECT_DOUBLE_EQ(measure("naive_col/block:32x32", Precision::fp32, kCounterShape)
                       .at("gld_sectors_per_request"), 16.5);
  // FP64: 32 consecutive doubles are 256 B = 8 sectors, so row = (1 + 8) / 2 = 4.5; the column
  // mapping still touches one sector per row: (32 + 1) / 2 = 16.5.
  EXPECT_DOUBLE_EQ(measure("naive_row/block:32x32", Precision::fp64, kCounterShape)
                       .at("gld_sectors_per_request"), 4.5);
  EXPECT_DOUBLE_EQ(measure("naive_col/block:32x32", Precision::fp64, kCounterShape)
                       .at("gld_sectors_per_request"), 16.5);
}

// --- tiling and bank conflicts ---------------------------------------------------------------

TEST(CountersTiling, SharedTilesLoadWhatThePatternPredictsAndAreConflictFree) {
  GEMM_REQUIRE_COUNTERS();
  for (Precision p : {Precision::fp32, Precision::fp64})
    for (int tile : {8, 16, 32}) {
      const std::string name = "shared/tile:" + std::to_string(tile);
      const CounterValues c = measure(name, p, kCounterShape);
      const AccessCount global = tiled_global_loads(Mapping::row, tile, kCounterShape, bytes_of(p));
      const AccessCount shared =
          tiled_shared_loads(Mapping::row, tile, 0, kCounterShape, bytes_of(p)).total();
      const std::string what = name + " " + to_string(p);
      expect_count(c.at("gld_sectors"), global.units, what + " gld_sectors");
      expect_count(c.at("smem_ld_requests"), shared.requests, what + " smem_ld_requests");
      expect_count(c.at("smem_ld_wavefronts"), shared.units, what + " smem_ld_wavefronts");
      // Conflict-free: every access is a broadcast or touches distinct banks. (A 16-byte
      // LDS.128 still costs two wavefronts, so wavefronts per request exceed 1 without conflict.)
      EXPECT_EQ(shared.n_way, 1) << what;
    }
}

TEST(CountersTiling, GlobalLoadSectorsFallWithTheTile) {
  GEMM_REQUIRE_COUNTERS();
  // Each element of A and B is loaded once per tile of the other operand: N/T times for A,
  // M/T times for B, so doubling the tile halves the sectors (whole 32 B sectors at T >= 8).
  const GemmShape s{512, 512, 512};
  double previous = 0;
  for (int tile : {8, 16, 32}) {
    const double sectors = measure("shared/tile:" + std::to_string(tile), Precision::fp32, s)
                               .at("gld_sectors");
    const double predicted = 2.0 * 512 * 512 * 4 / 32 * (512.0 / tile);
    expect_count(sectors, predicted, "shared/tile:" + std::to_string(tile));
    if (previous > 0) {
      EXPECT_DOUBLE_EQ(previous / sectors, 2.0);
    }
    previous = sectors;
  }
}

TEST(CountersBankConflicts, ColumnMappedTilesConflictAndPaddingRemovesIt) {
  GEMM_REQUIRE_COUNTERS();
  // In shared_col a warp reads tile_a[r][i..] for consecutive r: rows TILE words apart. TILE = 32
  // puts all 32 rows in the same banks (32-way); TILE = 16 puts 16 rows in 2 bank groups
  // (8-way); TILE = 8 puts 8 rows in 4 groups (2-way). tile_b[i][c] is a broadcast. Padding rows
  // to TILE + 1 elements sends consecutive rows to consecutive banks: one wavefront per load.
  const std::map<int, int> n_way = {{8, 2}, {16, 8}, {32, 32}};
  for (int tile : {8, 16, 32}) {
    const std::string t = "/tile:" + std::to_string(tile);
    const CounterValues unpadded = measure("shared_col" + t, Precision::fp32, kCounterShape);
    const CounterValues padded = measure("shared_col_padded" + t, Precision::fp32, kCounterShape);
    const TiledSharedLoads model = tiled_shared_loads(Mapping::col, tile, 0, kCounterShape, 4);
    const TiledSharedLoads fixed = tiled_shared_loads(Mapping::col, tile, 1, kCounterShape, 4);
    EXPECT_EQ(model.tile_a.n_way, n_way.at(tile)) << t;
    EXPECT_EQ(fixed.total().n_way, 1) << t;
    expect_count(unpadded.at("smem_ld_requests"), model.total().requests, "shared_col" + t);
    expect_count(unpadded.at("smem_ld_wavefronts"), model.total().units, "shared_col" + t);
    expect_count(padded.at("smem_ld_requests"), fixed.total().requests, "shared_col_padded" + t);
    EXPECT_DOUBLE_EQ(padded.at("smem_ld_wavefronts_per_request"), 1.0) << "shared_col_padded" + t;
    EXPECT_GT(unpadded.at("smem_ld_bank_conflicts"), padded.at("smem_ld_bank_conflicts"));
  }
}

// --- occupancy ---------------------------------------------------------------------------------

// Resident blocks per SM from the device's limits, independently of the occupancy API.
double theoretical_from_limits(const Variant& v, const GemmShape& s) {
  const LaunchPlan plan = v.plan(s);
  cudaDeviceProp prop{};
  GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device().ordinal));
  cudaFuncAttributes attr{};
  GEMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, plan.kernel));
  const long long threads = plan.block.count();
  const long long warps = (threads + 31) / 32;
  long long blocks = std::min<long long>(prop.maxBlocksPerMultiProcessor,
                                         prop.maxThreadsPerMultiProcessor / (warps * 32));
  if (attr.numRegs > 0) {
    const long long regs_per_warp = (attr.numRegs * 32 + 255) / 256 * 256;  // 256-register units
    blocks = std::min(blocks, (prop.regsPerMultiprocessor / regs_per_warp) / warps);
  }
  const long long smem = attr.sharedSizeBytes + plan.dynamic_smem_bytes;
  if (smem > 0)
    blocks = std::min<long long>(
        blocks, prop.sharedMemPerMultiprocessor / (smem + prop.reservedSharedMemPerBlock));
  return 100.0 * blocks * warps / (prop.maxThreadsPerMultiProcessor / 32);
}

TEST(CountersOccupancy, AchievedNeverExceedsTheoreticalWhichMatchesTheLimits) {
  GEMM_REQUIRE_COUNTERS();
  const GemmShape s{512, 512, 512};
  for (const auto& v : all_variants()) {
    if (v.backend != Backend::cuda_kernel || v.precision != Precision::fp32) continue;
    if (check_launch(v, s, device().limits)) continue;
    if (v.family == "single_thread_blocks" && v.plan(s).grid.x < 256) continue;  // seconds each
    const CounterValues c = measure(v.name(), v.precision, s);
    EXPECT_NEAR(c.at("theoretical_occupancy"), theoretical_from_limits(v, s), 1e-9) << v.name();
    // Achieved is a sampled average; one percentage point covers its rounding.
    EXPECT_LE(c.at("achieved_occupancy"), c.at("theoretical_occupancy") + 1.0) << v.name();
  }
}

// --- traffic and replay ------------------------------------------------------------------------

TEST(CountersTraffic, DramReadsCoverTheCompulsoryTraffic) {
  GEMM_REQUIRE_COUNTERS();
  // A and B (64 MiB each in FP32 at 4096) exceed L2 (50 MB on H100) and must come from HBM at
  // least once; L2 is flushed before every replay pass so nothing is left from the pass before.
  const GemmShape s{4096, 4096, 4096};
  TestData& data = test_data(Precision::fp32, s);
  DeviceBuffer scratch(std::size_t(device().l2_bytes) * 2);
  const Variant& v = find_variant("shared/tile:32", Precision::fp32);
  const Operands ops{data.dev_a.get(), data.dev_b.get(), data.dev_c.get(), s};
  const CounterValues c = test_collector().collect(
      [&] { v.run(ops, test_stream()); },
      [&] { GEMM_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), test_stream())); });
  const double compulsory = 2.0 * 4096 * 4096 * 4;
  EXPECT_GE(c.at("dram_read_bytes"), compulsory);
  EXPECT_GE(c.at("dram_write_bytes"), 4096.0 * 4096 * 4 * 0.99);  // C written once
}

TEST(CountersTraffic, WarmCountersSeeTheInputsInL2) {
  GEMM_REQUIRE_COUNTERS();
  // gemm-bench's default (warm) counters: A, B and C of a 1024^3 FP32 GEMM (12 MiB) fit in L2
  // (50 MB on H100), so a launch that follows an identical one reads almost nothing from HBM.
  // An unprofiled launch right before each pass gives that state; without it a pass starts
  // cold and reads A and B (8 MiB) again. Half of A + B is the line between the two.
  const GemmShape s{1024, 1024, 1024};
  ASSERT_GT(double(device().l2_bytes), 2.0 * 12 * 1024 * 1024) << "L2 too small for this claim";
  TestData& data = test_data(Precision::fp32, s);
  const Variant& v = find_variant("shared/tile:32", Precision::fp32);
  const Operands ops{data.dev_a.get(), data.dev_b.get(), data.dev_c.get(), s};
  const double inputs = 2.0 * 1024 * 1024 * 4;
  const CounterValues warm =
      test_collector().collect([&] { v.run(ops, test_stream()); }, {}, /*warm_up_before_pass=*/true);
  EXPECT_LT(warm.at("dram_read_bytes"), 0.5 * inputs);
  DeviceBuffer scratch(std::size_t(device().l2_bytes) * 2);
  const CounterValues cold = test_collector().collect(
      [&] { v.run(ops, test_stream()); },
      [&] { GEMM_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), test_stream())); });
  EXPECT_GE(cold.at("dram_read_bytes"), 0.99 * inputs);
}

TEST(CountersReplay, ProfiledLaunchLeavesACorrectOutput) {
  GEMM_REQUIRE_COUNTERS();
  // User replay runs the launch once per pass; a GEMM overwrites C, so the output must be what
  // one launch produces, not poison and not a sum of passes.
  const Variant& v = find_variant("shared/tile:16", Precision::fp32);
  TestData& data = test_data(Precision::fp32, {1023, 517, 2049});
  GEMM_CUDA_CHECK(cudaMemset(data.dev_c.get(), 0xFF, data.dev_c.bytes()));
  const Operands ops{data.dev_a.get(), data.dev_b.get(), data.dev_c.get(), data.shape};
  test_collector().collect([&] { v.run(ops, test_stream()); });
  const Verification r = verify_device_output(v, data);
  EXPECT_TRUE(r.passed) << r.max_rel_err << ", unwritten " << r.unwritten;
}

}  // namespace
}  // namespace gemm::test
