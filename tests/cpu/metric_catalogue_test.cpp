#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "metric_catalogue.h"

namespace gemm {
namespace {

TEST(MetricCatalogue, ShortNamesAreUniqueAcrossAllKinds) {
  std::set<std::string> names;
  for (const auto& m : metric_catalogue()) EXPECT_TRUE(names.insert(m.short_name).second) << m.short_name;
  for (const auto& d : derived_metrics()) EXPECT_TRUE(names.insert(d.short_name).second) << d.short_name;
  for (const auto& l : launch_metrics()) EXPECT_TRUE(names.insert(l.short_name).second) << l.short_name;
}

TEST(MetricCatalogue, EveryMetricMapsToAPerfworksName) {
  std::set<std::string> cupti;
  for (const auto& m : metric_catalogue()) {
    EXPECT_TRUE(looks_like_metric_name(m.cupti_name)) << m.cupti_name;
    EXPECT_TRUE(cupti.insert(m.cupti_name).second) << m.cupti_name;
    EXPECT_FALSE(m.description.empty());
  }
  EXPECT_EQ(catalogue_cupti_names().size(), metric_catalogue().size());
}

TEST(MetricCatalogue, TheIssueCatalogueIsComplete) {
  std::set<std::string> names;
  for (const auto& m : metric_catalogue()) names.insert(m.short_name);
  for (const char* required :
       {"gld_requests", "gld_sectors", "gst_requests", "gst_sectors", "smem_ld_requests",
        "smem_ld_wavefronts", "smem_ld_bank_conflicts", "smem_st_bank_conflicts",
        "achieved_occupancy", "dram_read_bytes", "dram_write_bytes", "l2_hit_rate", "gpu_time_ns"})
    EXPECT_TRUE(names.count(required)) << required;
}

TEST(MetricCatalogue, DerivedInputsExist) {
  std::set<std::string> names;
  for (const auto& m : metric_catalogue()) names.insert(m.short_name);
  for (const auto& l : launch_metrics()) names.insert(l.short_name);
  auto terms = [](const std::string& sum) {  // "a+b" -> {a, b}
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t plus; (plus = sum.find('+', start)) != std::string::npos; start = plus + 1)
      out.push_back(sum.substr(start, plus - start));
    out.push_back(sum.substr(start));
    return out;
  };
  for (const auto& d : derived_metrics()) {
    for (const auto& t : terms(d.numerator)) EXPECT_TRUE(names.count(t)) << d.short_name << ": " << t;
    for (const auto& t : terms(d.denominator)) EXPECT_TRUE(names.count(t)) << d.short_name << ": " << t;
  }
}

TEST(DerivedMetrics, ASumDenominatorAddsItsTerms) {
  std::map<std::string, double> values = {{"l2_read_hits", 30}, {"l2_read_misses", 10}};
  add_derived_metrics(values);
  ASSERT_TRUE(values.count("l2_read_hit_rate"));
  EXPECT_DOUBLE_EQ(values["l2_read_hit_rate"], 0.75) << "hits over hits + misses";
  std::map<std::string, double> partial = {{"l2_read_hits", 30}};
  add_derived_metrics(partial);
  EXPECT_FALSE(partial.count("l2_read_hit_rate")) << "a missing term leaves the ratio out";
}

TEST(DerivedMetrics, ZeroDenominatorIsUnavailableNotInfinity) {
  EXPECT_FALSE(safe_ratio(5, 0).has_value());
  EXPECT_FALSE(safe_ratio(std::numeric_limits<double>::quiet_NaN(), 1).has_value());
  EXPECT_FALSE(safe_ratio(1, std::numeric_limits<double>::infinity()).has_value());
  EXPECT_DOUBLE_EQ(*safe_ratio(33, 2), 16.5);

  std::map<std::string, double> values = {{"gld_sectors", 33}, {"gld_requests", 2},
                                          {"smem_ld_wavefronts", 0}, {"smem_ld_requests", 0}};
  add_derived_metrics(values);
  EXPECT_DOUBLE_EQ(values.at("gld_sectors_per_request"), 16.5);
  EXPECT_EQ(values.count("smem_ld_wavefronts_per_request"), 0u);  // naive kernels: no LDS
  EXPECT_EQ(values.count("gst_sectors_per_request"), 0u);         // inputs absent
  for (const auto& [name, v] : values) EXPECT_TRUE(std::isfinite(v)) << name;
}

TEST(MetricCatalogue, AccountDetailIsTheWarpStatesAndTheAluAndLsuPipes) {
  // The write-ups' kernels leave these out: every other metric must stay with them.
  int warp_states = 0;
  for (const auto& m : metric_catalogue()) {
    const bool stall = m.short_name.rfind("stall_", 0) == 0;
    warp_states += stall;
    const bool pipe = m.short_name.rfind("alu_pipe", 0) == 0 || m.short_name.rfind("lsu_pipe", 0) == 0;
    EXPECT_EQ(is_account_detail(m.short_name), stall || pipe) << m.short_name;
  }
  EXPECT_EQ(warp_states, 18) << "every warp state the scheduler reports";
  EXPECT_FALSE(is_account_detail("warp_inst"));
  EXPECT_FALSE(is_account_detail("fma_pipe_inst"));
  EXPECT_FALSE(is_account_detail("smem_wavefronts"));
}

TEST(MetricNames, Syntax) {
  EXPECT_TRUE(looks_like_metric_name("dram__bytes_read.sum"));
  EXPECT_TRUE(looks_like_metric_name("sm__warps_active.avg.pct_of_peak_sustained_active"));
  EXPECT_FALSE(looks_like_metric_name("dram_bytes_read"));
  EXPECT_FALSE(looks_like_metric_name("dram__bytes_read"));
  EXPECT_FALSE(looks_like_metric_name("dram__bytes read.sum"));
}

}  // namespace
}  // namespace gemm
