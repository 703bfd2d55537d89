// The harness's host-side rules: medians, launch batching, the per-kernel counter aggregation,
// the facts written into each JSON entry, and the progress/JSON reporters' text surgery.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "counters.h"
#include "reporters.h"
#include "run_log.h"
#include "sm_clock_probe.h"
#include "timing.h"
#include "variant_facts.h"
#include "workspace.h"

namespace gemm {
namespace {

TEST(Workspaces, BothPrecisionsOfAShapeStayAliveAndANewShapeFreesThem) {
  // Host-only workspaces (no GPU needed). Alternating precisions must reuse the two workspaces
  // (their inputs and the reference computed for them), not rebuild them at each switch.
  const GemmShape s{33, 17, 9};
  Workspace& f32 = workspace_for(Precision::fp32, s, 7, false);
  Workspace& f64 = workspace_for(Precision::fp64, s, 7, false);
  f32.reference.assign(1, 42.0);  // stands for a computed reference
  EXPECT_EQ(&workspace_for(Precision::fp32, s, 7, false), &f32);
  EXPECT_EQ(&workspace_for(Precision::fp64, s, 7, false), &f64);
  EXPECT_EQ(f32.reference.size(), 1u);
  const std::vector<unsigned char> inputs = f32.host_a;
  Workspace& other = workspace_for(Precision::fp32, {8, 8, 8}, 7, false);
  EXPECT_EQ(other.shape.m, 8);
  Workspace& again = workspace_for(Precision::fp32, s, 7, false);  // made again: same inputs
  EXPECT_TRUE(again.reference.empty());
  EXPECT_EQ(again.host_a, inputs);
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({5}), 5);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_EQ(median({1, 1000, 2}), 2) << "one slow launch must not move the median";
}

TEST(LaunchBatching, SamplesLastAtLeastAMillisecond) {
  EXPECT_EQ(launches_per_sample(2.0), 1);
  EXPECT_EQ(launches_per_sample(1.0), 1);
  EXPECT_EQ(launches_per_sample(0.5), 2);
  EXPECT_EQ(launches_per_sample(0.03), 34);
  EXPECT_EQ(launches_per_sample(1e-9), 1000) << "capped";
  EXPECT_EQ(launches_per_sample(0), 1);
  EXPECT_EQ(launches_per_sample(NAN), 1);
}

TEST(MedianInterval, BelowSixSamplesItIsTheRange) {
  // Ranks n/2 -+ 0.98 sqrt(n): for n = 5, 0.31 and 5.69, clamped to the first and the last.
  const MedianInterval i = median_interval({5, 1, 4, 2, 3});
  EXPECT_EQ(i.low, 1);
  EXPECT_EQ(i.high, 5);
}

TEST(MedianInterval, OrderStatisticsAroundTheMedian) {
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61 of the sorted values 1..100.
  std::vector<double> values;
  for (int v = 100; v >= 1; --v) values.push_back(v);
  const MedianInterval i = median_interval(values);
  EXPECT_EQ(i.low, 40);
  EXPECT_EQ(i.high, 61);
  // The farthest end from the median 50.5: 61, 10.5 / 50.5 of it.
  EXPECT_DOUBLE_EQ(i.relative_half_width(50.5), 10.5 / 50.5);
  EXPECT_TRUE(std::isnan(median_interval({}).low));
}

TEST(SamplingRule, AtLeastTheMinimumThenUntilTheIntervalIsNarrow) {
  SamplingPolicy p;  // 5 samples, +-0.5%, 0.2 s
  const std::vector<double> steady{1.000, 1.001, 0.999, 1.002, 1.000};
  EXPECT_FALSE(sampling_done({1.0, 1.0, 1.0, 1.0}, 0.001, p)) << "four samples are never enough";
  EXPECT_TRUE(sampling_done(steady, 0.005, p)) << "range 0.999..1.002: within +-0.5%";
  const std::vector<double> noisy{1.00, 1.03, 0.97, 1.02, 0.99};
  EXPECT_FALSE(sampling_done(noisy, 0.005, p)) << "range +-3%: more samples";
  EXPECT_TRUE(sampling_done(noisy, p.max_time_s, p)) << "until the time cap";
  p.max_samples = 5;
  EXPECT_TRUE(sampling_done(noisy, 0.005, p)) << "or the sample cap";
  p = SamplingPolicy{};
  p.min_time_s = 0.1;
  EXPECT_FALSE(sampling_done(steady, 0.05, p)) << "--min-time holds it";
  EXPECT_TRUE(sampling_done(steady, 0.1, p));
  p = SamplingPolicy{};
  std::vector<double> slow(4, 100.0);
  EXPECT_FALSE(sampling_done(slow, 10.0, p)) << "the time cap never cuts below the minimum";
}

TimingResult samples_of(const std::vector<std::pair<double, double>>& ms_and_clock) {
  TimingResult r;
  for (const auto& [ms, mhz] : ms_and_clock) {
    Sample s;
    s.ms = ms;
    s.sm_mhz = mhz;
    r.samples.push_back(s);
  }
  summarize_samples(r);
  return r;
}

TEST(ClockPerSample, ASampleUnderAClockDropIsFlaggedAndKeptInTheMedian) {
  // Four samples at about 1980 MHz, one at 1900 (4% lower: beyond the 2% threshold) and slow.
  const TimingResult r =
      samples_of({{1.00, 1980}, {1.02, 1980}, {1.01, 1975}, {1.08, 1900}, {1.03, 1980}});
  EXPECT_EQ(r.flagged, 1u);
  EXPECT_TRUE(r.samples[3].flagged);
  EXPECT_DOUBLE_EQ(r.median_ms, 1.02) << "median of all five samples";
  EXPECT_DOUBLE_EQ(r.median_ms_unflagged, 1.015) << "median of the four unflagged samples";
  EXPECT_DOUBLE_EQ(r.median_clock_mhz, 1980);
  EXPECT_EQ(r.interval.low, 1.00) << "five samples: the interval is their range";
  EXPECT_EQ(r.interval.high, 1.08);
}

TEST(ClockPerSample, WithinTheThresholdNothingIsFlagged) {
  const TimingResult r = samples_of({{1.0, 1980}, {1.0, 1950}, {1.0, 1965}});  // 1.5% apart
  EXPECT_EQ(r.flagged, 0u);
  EXPECT_DOUBLE_EQ(r.median_clock_mhz, 1965);
}

TEST(ClockPerSample, AtMostTheSamplesBelowTheMedianClockAreFlagged) {
  // The median clock is 1900: the two samples at 1800 are flagged; the median keeps them.
  const TimingResult kept = samples_of({{1, 1900}, {1, 1900}, {1, 1900}, {2, 1800}, {2, 1800}});
  EXPECT_EQ(kept.flagged, 2u);
  EXPECT_DOUBLE_EQ(kept.median_ms, 1);
  EXPECT_DOUBLE_EQ(kept.median_ms_unflagged, 1);
  const TimingResult half = samples_of({{1, 2000}, {1, 2000}, {2, 1800}, {2, 1800}});
  EXPECT_EQ(half.flagged, 2u) << "median clock 1900: both 1800 samples are below it by > 2%";
  EXPECT_DOUBLE_EQ(half.median_ms, 1.5) << "all four samples";
  EXPECT_DOUBLE_EQ(half.median_ms_unflagged, 1);
  // Without clock readings (host code, or no NVML) nothing is flagged.
  const TimingResult host = samples_of({{1, 0}, {3, 0}, {2, 0}});
  EXPECT_EQ(host.flagged, 0u);
  EXPECT_DOUBLE_EQ(host.median_ms, 2);
  EXPECT_DOUBLE_EQ(host.median_clock_mhz, 0);
}

// Stamps 1 ms apart: an SM that counted 1.6 million cycles in them ran at 1600 MHz.
TEST(SmClockProbe, EachSmsCyclesOverTheTimerGiveItsClockAndTheMedianIsTaken) {
  const std::vector<SmStamp> before = {{0, 1'000, 5'000'000}, {1, 7'000, 5'000'000}, {2, 0, 5'000'000}};
  const std::vector<SmStamp> after = {{2, 1'500'000, 6'000'000},   // 1500 MHz
                                      {0, 1'601'000, 6'000'000},   // 1600 MHz
                                      {1, 1'707'000, 6'000'000}};  // 1700 MHz
  EXPECT_DOUBLE_EQ(clock_between_mhz(before, after), 1600);
}

TEST(SmClockProbe, OnlySmsStampedOnBothSidesCountEachOnce) {
  const std::vector<SmStamp> before = {{0, 0, 0}, {0, 10, 0}, {3, 0, 0}};
  // SM 0 twice after (its first stamp counts), SM 3 never, SM 9 only after.
  const std::vector<SmStamp> after = {{0, 2'000'000, 1'000'000}, {0, 9'000'000, 1'000'000},
                                      {9, 5'000'000, 1'000'000}};
  EXPECT_DOUBLE_EQ(clock_between_mhz(before, after), 2000);
  EXPECT_EQ(clock_between_mhz(before, {}), 0) << "no SM stamped on both sides: no reading";
}

TEST(SmClockProbe, AWindowShorterThanTheTimersResolutionAllowsGivesNoReading) {
  const std::vector<SmStamp> before = {{0, 0, 0}};
  EXPECT_EQ(clock_between_mhz(before, {{0, 180'000, kMinWindowNs - 1}}), 0);
  EXPECT_GT(clock_between_mhz(before, {{0, 180'000, kMinWindowNs}}), 0);
  EXPECT_EQ(clock_between_mhz({{0, 500, 10}}, {{0, 400, kMinWindowNs + 20}}), 0)
      << "a counter that went backwards is not a clock";
}

TEST(SmClockProbe, TheCountIsTheRunsClockOnlyWhereMostSamplesHaveOne) {
  TimingResult r = samples_of({{1.0, 1980}, {1.0, 1980}, {1.0, 1980}, {1.0, 1980}});
  EXPECT_EQ(r.median_counted_clock_mhz, 0) << "no count";
  r.samples[0].sm_mhz_counted = 1500;
  summarize_samples(r);
  EXPECT_EQ(r.median_counted_clock_mhz, 0) << "one sample of four is not the run's clock";
  r.samples[1].sm_mhz_counted = 1600;
  r.samples[2].sm_mhz_counted = 1700;
  summarize_samples(r);
  EXPECT_DOUBLE_EQ(r.median_counted_clock_mhz, 1600);
  EXPECT_DOUBLE_EQ(r.median_clock_mhz, 1980) << "NVML's reading is kept beside it";
}

TEST(SmClockProbe, TwoRunsAreTurnedIntoCyclesWithTheSameKindOfClock) {
  const RunClock counted_a{1980, 1500}, counted_b{1980, 1650}, nvml_only{1950, 0}, none{0, 0};
  EXPECT_EQ(comparable_clocks(counted_a, counted_b), std::make_pair(1500.0, 1650.0));
  EXPECT_EQ(comparable_clocks(counted_a, nvml_only), std::make_pair(1980.0, 1950.0))
      << "one side without a count: NVML's on both, never one of each";
  EXPECT_EQ(comparable_clocks(nvml_only, counted_b), std::make_pair(1950.0, 1980.0));
  EXPECT_EQ(comparable_clocks(counted_a, none), std::make_pair(0.0, 0.0));
  EXPECT_EQ(comparable_clocks(RunClock{0, 1500}, RunClock{1980, 0}), std::make_pair(0.0, 0.0));
}

TEST(LoadTracker, LoadCountsUntilAnIdleGapLongerThanTheLimit) {
  LoadTracker t;
  EXPECT_EQ(t.continuous_s(0), 0) << "never busy";
  t.busy(10, 12);
  EXPECT_DOUBLE_EQ(t.continuous_s(12.5), 2);
  t.busy(13, 14);  // a 1 s gap: still the same stretch of load
  EXPECT_DOUBLE_EQ(t.continuous_s(14), 4);
  EXPECT_EQ(t.continuous_s(14 + LoadTracker::kIdleGapS + 0.1), 0) << "cooled down";
  t.busy(20, 21);  // after a long gap the count starts again
  EXPECT_DOUBLE_EQ(t.continuous_s(21), 1);
}

TEST(LoadTracker, ARestCountsTheLoadFromZeroAgain) {
  LoadTracker t;
  EXPECT_EQ(t.since_rest_s(), 0) << "never busy";
  t.busy(10, 10.03);
  t.busy(10.04, 10.05);  // verification, then timing: one stretch
  EXPECT_NEAR(t.since_rest_s(), 0.05, 1e-12);
  t.rested(10.1);
  EXPECT_EQ(t.since_rest_s(), 0);
  EXPECT_EQ(t.continuous_s(10.1), 0) << "a rest ends the stretch of load";
  t.busy(10.1, 10.12);
  EXPECT_NEAR(t.since_rest_s(), 0.02, 1e-12);
  EXPECT_NEAR(t.continuous_s(10.12), 0.02, 1e-12);
}

TEST(RunLog, EntriesMatchReportedRunsByIterationsInCallOrder) {
  RunLog log;
  // Google Benchmark's calls: probes with 1 and 10 iterations, then repetitions of 100.
  log.record("b", 1, "\"probe\": 1");
  log.record("b", 10, "\"probe\": 10");
  log.record("b", 100, "\"rep\": 0");
  log.record("b", 100, "\"rep\": 1");
  EXPECT_EQ(log.take("b", 100), "\"rep\": 0");
  EXPECT_EQ(log.take("b", 100), "\"rep\": 1");
  EXPECT_EQ(log.take("b", 100), "") << "consumed";
  EXPECT_EQ(log.take("b", 10), "") << "the probes before a reported run are dropped";
  EXPECT_EQ(log.take("other", 1), "");
}

TEST(RunLog, SamplesJsonHoldsEverySampleWithItsClockAndFlag) {
  const TimingResult r = samples_of({{1.5, 1980}, {2.5, 1800}, {1.5, 1980}});
  const std::string json = samples_json(r);
  EXPECT_EQ(json,
            "\"samples\": {\"ms\": [1.5, 2.5, 1.5], \"sm_clock_mhz\": [1980, 1800, 1980], "
            "\"sm_clock_counted_mhz\": [0, 0, 0], \"power_w\": [0, 0, 0], \"flagged\": [0, 1, 0], "
            "\"slowdown\": []}");
  TimingResult powered = r;
  powered.samples[1].power_w = 612.5;
  EXPECT_NE(samples_json(powered).find("\"power_w\": [0, 612.5, 0]"), std::string::npos);
  TimingResult throttled = r;
  throttled.reasons = 0x4 | 0x1;  // power cap, and idle (not a slowdown)
  EXPECT_NE(samples_json(throttled).find("\"slowdown\": [\"sw_power_cap\"]"), std::string::npos);
}

TEST(WaveFacts, WavesAndTheLastWavesFillFollowFromBlocksAndSlots) {
  // 132 SMs x 2 blocks = 264 slots.
  CounterValues f;
  add_wave_facts(f, 64, 2, 132);  // 512^2 in 64 x 64 tiles: a quarter of one wave
  EXPECT_DOUBLE_EQ(f["waves"], 64.0 / 264);
  EXPECT_DOUBLE_EQ(f["last_wave_fill"], 64.0 / 264);
  f.clear();
  add_wave_facts(f, 528, 2, 132);  // exactly two waves
  EXPECT_DOUBLE_EQ(f["waves"], 2);
  EXPECT_DOUBLE_EQ(f["last_wave_fill"], 1);
  f.clear();
  add_wave_facts(f, 265, 2, 132);  // one block into the second wave
  EXPECT_DOUBLE_EQ(f["last_wave_fill"], 1.0 / 264);
  EXPECT_DOUBLE_EQ(f["grid_blocks"], 265);
  EXPECT_DOUBLE_EQ(f["blocks_per_sm"], 2);
  f.clear();
  add_wave_facts(f, 10, 0, 132);  // the kernel fits no SM: no waves to speak of
  EXPECT_EQ(f.count("waves"), 0u);
}

TEST(CounterAggregation, SumsAddUpAndEverythingElseIsWeightedByDuration) {
  const std::vector<std::string> cupti = {"gpu__time_duration.sum", "dram__bytes_read.sum",
                                          "sm__warps_active.avg.pct_of_peak_sustained_active",
                                          "lts__t_sector_hit_rate.pct",
                                          "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"};
  const std::vector<std::string> short_names = {"gpu_time_ns", "dram_read_bytes",
                                                "achieved_occupancy", "l2_hit_rate",
                                                "stall_barrier"};
  // Two kernels: 300 ns and 100 ns.
  const std::vector<KernelCounters> kernels = {{{300, 1000, 80, 50, 2}}, {{100, 24, 40, 90, 6}}};
  const CounterValues v = aggregate_kernels(cupti, short_names, kernels);
  EXPECT_EQ(v.at("gpu_time_ns"), 400);
  EXPECT_EQ(v.at("dram_read_bytes"), 1024);
  EXPECT_DOUBLE_EQ(v.at("achieved_occupancy"), 0.75 * 80 + 0.25 * 40);
  EXPECT_DOUBLE_EQ(v.at("l2_hit_rate"), 0.75 * 50 + 0.25 * 90);
  EXPECT_DOUBLE_EQ(v.at("stall_barrier"), 0.75 * 2 + 0.25 * 6);
}

TEST(CounterAggregation, WithoutDurationsAveragesEqually) {
  const CounterValues v = aggregate_kernels({"a__b.pct", "c__d.sum"}, {"p", "s"},
                                            {{{10, 1}}, {{30, 2}}});
  EXPECT_DOUBLE_EQ(v.at("p"), 20);
  EXPECT_DOUBLE_EQ(v.at("s"), 3);
  EXPECT_TRUE(aggregate_kernels({"a__b.pct"}, {"p"}, {}).empty());
}

TEST(Counters, EachSelectionHasItsOwnMetricSet) {
  std::set<std::size_t> sets;
  for (CounterScope scope : {CounterScope::all, CounterScope::hardware})
    for (bool detail : {true, false}) sets.insert(set_index({scope, detail}));
  EXPECT_EQ(sets, (std::set<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(set_index({}), 0u) << "the default collects every metric";
}

TEST(Reporters, FactsBecomeTheFirstMemberOfEachEntry) {
  const std::string entry = ",\n    {\n      \"name\": \"gemm/fp32/x/m:1/n:1/k:1/manual_time\",\n"
                            "      \"real_time\": 1\n    }";
  const std::string out = insert_first_member(entry, "variant", "{\"family\": \"x\"}");
  EXPECT_EQ(out, ",\n    {\n      \"variant\": {\"family\": \"x\"},\n      \"name\": "
                 "\"gemm/fp32/x/m:1/n:1/k:1/manual_time\",\n      \"real_time\": 1\n    }");
  EXPECT_EQ(insert_first_member("no object", "variant", "{}"), "no object");
  const std::string two = insert_first_members(entry, "\"a\": 1, \"b\": [2]");
  EXPECT_NE(two.find("{\n      \"a\": 1, \"b\": [2],\n"), std::string::npos) << two;
}

TEST(Reporters, LongContextListsAreCountedShortOnesKept) {
  std::string entries;
  for (int i = 0; i < 3; ++i)
    entries += std::string(i ? ", " : "") + "{\"benchmark\": \"gemm/fp32/a/m:" + std::to_string(i) +
               "\", \"reason\": \"capped: [x, y], \\\"quoted\\\" {z}" + std::string(60, '.') + "\"}";
  const std::string text = "gpu_name: H100\nskipped: [" + entries + "]\nshort: [1, 2]\nempty: [" +
                           std::string(200, ' ') + "]\n";
  EXPECT_EQ(abbreviate_context_lists(text),
            "gpu_name: H100\nskipped: 3 entries (listed in full in the JSON file's context)\n"
            "short: [1, 2]\nempty: 0 entries (listed in full in the JSON file's context)\n");
  const std::string unclosed = "skipped: [" + std::string(200, '{') + "\n";
  EXPECT_EQ(abbreviate_context_lists(unclosed), unclosed);
}

TEST(Reporters, JsonStringsAreEscaped) {
  EXPECT_EQ(json_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(json_string(std::string("\x01", 1)), "\"\\u0001\"");
}

// The console table follows Google Benchmark's flags as its own display reporter would: no
// colour codes in logs and pipes, tabular counters only when asked for.
TEST(Reporters, ConsoleOptionsFollowTheFlags) {
  using benchmark::ConsoleReporter;
  EXPECT_EQ(console_output_options({"x"}, false), ConsoleReporter::OO_None);
  EXPECT_EQ(console_output_options({"x"}, true), ConsoleReporter::OO_Color);
  EXPECT_EQ(console_output_options({"x", "--benchmark_color=false"}, true), ConsoleReporter::OO_None);
  EXPECT_EQ(console_output_options({"x", "--benchmark_color=true"}, false), ConsoleReporter::OO_Color);
  EXPECT_EQ(console_output_options({"x", "--benchmark_counters_tabular=true"}, false),
            ConsoleReporter::OO_Tabular);
}

Variant tiled_for_test() {
  Variant v;
  v.family = "blocked";
  v.param_fields = {{"bm", 64}, {"bn", 32}};
  v.params = params_name(v.param_fields);
  v.tags = {"ladder", "tracked"};
  v.rung = 2;
  v.rung_name = "2-D register blocking";
  v.outputs_per_thread = 8;
  v.plan = [](const GemmShape& s) {
    LaunchPlan p;
    p.block = {256, 1, 1};
    p.grid = {(s.n + 31) / 32, (s.m + 63) / 64, 1};
    p.dynamic_smem_bytes = 4096;
    return p;
  };
  return v;
}

TEST(VariantFacts, ParamsBecomeTheNameAndSeparateFields) {
  const Variant v = tiled_for_test();
  EXPECT_EQ(v.name(), "blocked/bm:64/bn:32");
  const std::string json = variant_facts_json(v, {128, 64, 16}, false, false);
  for (const char* expected :
       {"\"family\": \"blocked\"", "\"params\": {\"bm\": 64, \"bn\": 32}",
        "\"tags\": [\"ladder\", \"tracked\"]", "\"rung\": 2", "\"block\": [256, 1, 1]",
        "\"grid\": [2, 2, 1]", "\"threads_per_block\": 256", "\"outputs_per_thread\": 8",
        "\"warps_launched\": 32", "\"smem_per_block_bytes\": 4096", "\"end_to_end\": false",
        "\"shape\": {\"m\": 128, \"n\": 64, \"k\": 16}", "\"compute\": \"fp32\""})
    EXPECT_NE(json.find(expected), std::string::npos) << expected << " in " << json;
}

TEST(VariantFacts, GridStrideOutputsPerThreadFollowTheGrid) {
  Variant v = tiled_for_test();
  v.outputs_per_thread = 0;  // derived
  v.plan = [](const GemmShape&) {
    LaunchPlan p;
    p.block = {1, 1, 1};
    p.grid = {4, 1, 1};
    return p;
  };
  EXPECT_DOUBLE_EQ(outputs_per_thread(v, v.plan({8, 8, 8}), {8, 8, 8}), 16);
}

}  // namespace
}  // namespace gemm
