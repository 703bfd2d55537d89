#include <gtest/gtest.h>

#include "options.h"
#include "shape_suites.h"

namespace gemm {
namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "gemm-bench");
  return parse_options(args);
}

TEST(Options, DefaultsAreTheStudy) {
  const Options o = parse({});
  ASSERT_EQ(o.shapes.size(), 4u);
  EXPECT_EQ(o.shapes[0].m, 512);
  EXPECT_EQ(o.shapes[3].k, 4096);
  EXPECT_EQ(o.precisions.size(), 2u);
  EXPECT_TRUE(o.counters);
  EXPECT_FALSE(o.profile);
  EXPECT_TRUE(o.pinned_host);
}

TEST(Options, HostMemoryOfTheCopies) {
  EXPECT_FALSE(parse({"--host-memory=pageable"}).pinned_host);
  EXPECT_TRUE(parse({"--host-memory=pageable", "--host-memory=pinned"}).pinned_host);
}

TEST(Options, OrderOfEachShapesBenchmarks) {
  EXPECT_FALSE(parse({}).reversed_order);
  EXPECT_TRUE(parse({"--order=reversed"}).reversed_order);
  EXPECT_FALSE(parse({"--order=reversed", "--order=listed"}).reversed_order);
}

TEST(Options, CoolDownBeforeEachBurst) {
  EXPECT_EQ(parse({}).cool_down_s, 0) << "off unless asked";
  EXPECT_DOUBLE_EQ(parse({"--cool-down=0.1"}).cool_down_s, 0.1);
  EXPECT_EQ(parse({"--cool-down=0.1", "--cool-down=off"}).cool_down_s, 0);
}

TEST(Options, SizesAndShapes) {
  const Options o = parse({"--sizes=64,128", "--shapes=1023x517x2049"});
  ASSERT_EQ(o.shapes.size(), 3u);
  EXPECT_EQ(o.shapes[1].n, 128);
  EXPECT_EQ(o.shapes[2].m, 1023);
  EXPECT_EQ(o.shapes[2].n, 517);
  EXPECT_EQ(o.shapes[2].k, 2049);
}

TEST(Options, BadValuesAreOneLineErrors) {
  for (const char* bad : {"--sizes=0", "--sizes=-4", "--sizes=abc", "--sizes=", "--shapes=4x4",
                          "--shapes=4x4x0", "--precisions=fp16", "--counters=yes",
                          "--metrics=bad name", "--metrics=sm__warps_active", "--min-time=0",
                          "--frobnicate", "--profile=1", "--sizes=100000", "--min-samples=0",
                          "--max-samples=x", "--ci=0", "--ci=101", "--ci=nan", "--max-time=-1",
                          "--preroll-s=0", "--benchmark_min_time=1s", "--host-memory=mapped",
                          "--host-memory=", "--order=shuffled", "--order=", "--cool-down=-1", "--cool-down=soon"}) {
    try {
      parse({bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const OptionError& e) {
      const std::string what = e.what();
      EXPECT_FALSE(what.empty());
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(Options, SamplingDefaultsAndFlags) {
  const Options d = parse({});
  EXPECT_EQ(d.sampling.min_samples, 5) << "every benchmark has at least five samples";
  EXPECT_DOUBLE_EQ(d.sampling.ci_target, 0.005);
  const Options o = parse({"--min-samples=9", "--max-samples=50", "--ci=1.5", "--max-time=2",
                           "--min-time=0.5", "--preroll-s=0.1"});
  EXPECT_EQ(o.sampling.min_samples, 9);
  EXPECT_EQ(o.sampling.max_samples, 50);
  EXPECT_DOUBLE_EQ(o.sampling.ci_target, 0.015);
  EXPECT_DOUBLE_EQ(o.sampling.max_time_s, 2);
  EXPECT_DOUBLE_EQ(o.sampling.min_time_s, 0.5);
  EXPECT_DOUBLE_EQ(o.preroll_s, 0.1);
  EXPECT_THROW(parse({"--min-samples=10", "--max-samples=9"}), OptionError);
  EXPECT_THROW(parse({"--min-time=1", "--max-time=0.5"}), OptionError);
}

TEST(Options, CounterMetricsNameCatalogueMetrics) {
  const Options o = parse({"--counter-metrics=sm_active_cycles_max,dram_read_bytes"});
  ASSERT_EQ(o.counter_metrics.size(), 2u);
  EXPECT_EQ(o.counter_metrics[1], "dram_read_bytes");
  EXPECT_THROW(parse({"--counter-metrics=gld_sectors_per_request"}), OptionError)
      << "a derived ratio is not collected: its inputs are";
  EXPECT_THROW(parse({"--counter-metrics=dram__bytes_read.sum"}), OptionError)
      << "CUPTI names go to --metrics";
}

TEST(Options, SuitesAddTheirShapes) {
  const Options large_k = parse({"--suite=large_k"});
  ASSERT_EQ(large_k.shapes.size(), 2u);
  EXPECT_EQ(large_k.shapes[0].k, 65536);
  const Options both = parse({"--sizes=64", "--suite=large_k,odd"});
  EXPECT_EQ(both.shapes.front().m, 64) << "--sizes and --suite add up";
  EXPECT_GT(parse({"--suite=all"}).shapes.size(), parse({"--suite=study"}).shapes.size());
  for (const char* bad : {"--suite=nope", "--suite=", "--suite=odd,"})
    EXPECT_THROW(parse({bad}), OptionError) << bad;
  try {
    parse({"--suite=nope"});
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("known: squares, decode"), std::string::npos) << e.what();
  }
}

TEST(Options, SuitesHoldEachShapeOnceWithItsSource) {
  const auto all = shapes_of_suite("all");
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j)
      EXPECT_FALSE(all[i].m == all[j].m && all[i].n == all[j].n && all[i].k == all[j].k)
          << all[i].to_string() << " twice";
  for (const auto& s : suite_shapes()) EXPECT_FALSE(s.source.empty()) << s.shape.to_string();
  // The study's subset spans every suite.
  for (const auto& name : suite_names()) {
    if (name == "study" || name == "all") continue;
    bool in_study = false;
    for (const auto& s : suite_shapes()) in_study |= s.suite == name && s.study;
    EXPECT_TRUE(in_study) << name;
  }
}

TEST(Options, SustainedStateFromAnEdgeOrOff) {
  const Options d = parse({});
  ASSERT_TRUE(d.sustained_from_edge);
  EXPECT_EQ(*d.sustained_from_edge, 2048);
  EXPECT_EQ(d.sustained_s, 3.0);
  EXPECT_FALSE(parse({"--sustained-from=off"}).sustained_from_edge);
  EXPECT_EQ(*parse({"--sustained-from=1024"}).sustained_from_edge, 1024);
  EXPECT_EQ(parse({"--sustained-s=0.5"}).sustained_s, 0.5);
  for (const char* bad : {"--sustained-from=0", "--sustained-from=on", "--sustained-s=0",
                          "--sustained-s=-1", "--sustained-s=x"})
    EXPECT_THROW(parse({bad}), OptionError) << bad;
}

TEST(Options, CountersAndMetrics) {
  const Options o = parse({"--metrics=dram__bytes_read.sum,lts__t_sector_hit_rate.pct"});
  EXPECT_TRUE(o.counters);
  ASSERT_EQ(o.extra_metrics.size(), 2u);
  EXPECT_EQ(o.extra_metrics[1], "lts__t_sector_hit_rate.pct");
  EXPECT_FALSE(parse({"--counters=off"}).counters);
}

TEST(Options, CountersCap) {
  EXPECT_FALSE(parse({}).counters_cap_edge);
  EXPECT_EQ(*parse({"--counters-cap=512"}).counters_cap_edge, 512);
  EXPECT_THROW(parse({"--counters-cap=0"}), OptionError);
  EXPECT_THROW(parse({"--counters-cap=x"}), OptionError);
  EXPECT_THROW(parse({"--counters-cap=512", "--uncapped"}), OptionError);  // lifted and set
  EXPECT_THROW(parse({"--counters-cap=512", "--counters=off"}), OptionError);
  EXPECT_THROW(parse({"--counters-cap=512", "--profile"}), OptionError);
}

TEST(Options, MetricsWithoutCountersIsAContradiction) {
  EXPECT_THROW(parse({"--counters=off", "--metrics=dram__bytes_read.sum"}), OptionError);
  EXPECT_THROW(parse({"--profile", "--metrics=dram__bytes_read.sum"}), OptionError);
}

TEST(Options, TagsSelectVariantsWithAnyOfThem) {
  const Options none = parse({});
  EXPECT_TRUE(selects_tags(none, {"seed", "tracked"}));
  EXPECT_FALSE(selects_tags(none, {"ladder", "tuning"})) << "tuning instances are opt-in";
  const Options some = parse({"--tags=tracked,reference"});
  EXPECT_TRUE(selects_tags(some, {"seed", "tracked"}));
  EXPECT_TRUE(selects_tags(some, {"reference"}));
  EXPECT_FALSE(selects_tags(some, {"seed"}));
  const Options all = parse({"--tags=all"});
  EXPECT_TRUE(selects_tags(all, {"ladder", "tuning"}));
  EXPECT_TRUE(selects_tags(parse({"--tags=tuning"}), {"ladder", "tuning"}));
  EXPECT_FALSE(selects_tags(parse({"--tags=ladder"}), {"ladder", "tuning"}))
      << "a rung's tag selects the rung, not its sweep instances";
  EXPECT_TRUE(selects_tags(parse({"--tags=ladder,tuning"}), {"ladder", "tuning"}));
}

TEST(Options, UnknownTagIsRefusedWithTheKnownOnes) {
  try {
    parse({"--tags=seed,ladders"});
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown tag 'ladders'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor_core"), std::string::npos) << e.what();
  }
}

TEST(Options, GoogleBenchmarkFlagsPassThrough) {
  const Options o = parse({"--benchmark_filter=shared", "--profile", "--benchmark_repetitions=3"});
  EXPECT_TRUE(o.profile);
  ASSERT_EQ(o.passthrough.size(), 3u);
  EXPECT_EQ(o.passthrough[1], "--benchmark_filter=shared");
}

// Google Benchmark's flags that it would take without a nonzero status although nothing
// useful follows: a bad format (usage, exit 0), repetitions < 1 (nothing runs, or an exception),
// a filter that does not compile (--list would list everything).
TEST(Options, BadGoogleBenchmarkValuesAreOneLineErrors) {
  for (const char* bad : {"--benchmark_filter=(", "--benchmark_filter=-a{", "--benchmark_filter=fp(?=32)",
                          "--benchmark_out_format=xml", "--benchmark_format=", "--benchmark_format=JSON",
                          "--benchmark_repetitions=0", "--benchmark_repetitions=-3",
                          "--benchmark_repetitions=2x"}) {
    try {
      parse({"--list", bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const OptionError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  for (const char* good : {"--benchmark_filter=shared|tuned", "--benchmark_filter=-cublas",
                           "--benchmark_out_format=csv", "--benchmark_format=json",
                           "--benchmark_repetitions=10"})
    EXPECT_NO_THROW(parse({good})) << good;
}

// The filter as Google Benchmark applies it (POSIX extended grammar, searched in the name with
// /manual_time, "-" negates), so --list and the progress total show what it will run.
TEST(Options, FilterSelectsWhatGoogleBenchmarkRuns) {
  const std::string name = "gemm/fp32/cpu_serial/m:64/n:64/k:64";
  EXPECT_TRUE(filter_selects(name, ""));
  EXPECT_TRUE(filter_selects(name, "all"));
  EXPECT_TRUE(filter_selects(name, "serial/m:[0-9]+"));
  EXPECT_TRUE(filter_selects(name, "k:64/manual_time$"));
  EXPECT_FALSE(filter_selects(name, "serial/m:\\d+")) << "no \\d in the extended grammar";
  EXPECT_FALSE(filter_selects(name, "-fp32"));
  EXPECT_TRUE(filter_selects(name, "-fp64"));
  EXPECT_FALSE(filter_selects(name, "("));
}

TEST(Options, BenchmarkFlagsAreReadAsGoogleBenchmarkReadsThem) {
  const std::vector<std::string> args = {"gemm-bench", "--benchmark_list_tests=false",
                                         "--benchmark_filter=a", "--benchmark_filter=b"};
  EXPECT_EQ(benchmark_flag(args, "--benchmark_filter"), "b") << "the last one wins";
  EXPECT_FALSE(benchmark_flag(args, "--benchmark_out"));
  EXPECT_FALSE(benchmark_bool_flag(args, "--benchmark_list_tests"))
      << "--benchmark_list_tests=false is a run, not a listing";
  EXPECT_TRUE(benchmark_bool_flag({"x", "--benchmark_list_tests"}, "--benchmark_list_tests"));
  EXPECT_TRUE(benchmark_bool_flag({"x", "--benchmark_list_tests=true"}, "--benchmark_list_tests"));
  for (const char* no : {"0", "f", "N", "no", "Off", "FALSE"})
    EXPECT_FALSE(benchmark_bool_flag({"x", std::string("--benchmark_list_tests=") + no},
                                     "--benchmark_list_tests")) << no;
  EXPECT_FALSE(benchmark_bool_flag({"x", "--benchmark_list_tests_x"}, "--benchmark_list_tests"));
}

TEST(Options, HelpStatesTheCaps) {
  const std::string help = help_text();
  EXPECT_NE(help.find("single_thread_blocks: M*N*K <= 256^3"), std::string::npos) << help;
  EXPECT_NE(help.find("naive_col: M*N*K <= 2048^3"), std::string::npos);
  EXPECT_NE(help.find("SASS-instrumented counters"), std::string::npos);
  EXPECT_NE(help.find("only up to M*N*K <= 1024^3"), std::string::npos);
  EXPECT_NE(help.find("above it hardware counters only"), std::string::npos);
}

}  // namespace
}  // namespace gemm
