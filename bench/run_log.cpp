#include "run_log.h"

#include <cstdio>

#include "nvml.h"
#include "reporters.h"

namespace gemm {

void RunLog::record(const std::string& benchmark, std::int64_t iterations, std::string members) {
  calls_[benchmark].emplace_back(iterations, std::move(members));
}

std::string RunLog::take(const std::string& benchmark, std::int64_t iterations) {
  auto found = calls_.find(benchmark);
  if (found == calls_.end()) return "";
  auto& calls = found->second;
  for (auto it = calls.begin(); it != calls.end(); ++it) {
    if (it->first != iterations) continue;
    std::string members = std::move(it->second);
    calls.erase(calls.begin(), it + 1);
    return members;
  }
  return "";
}

RunLog& run_log() {
  static RunLog log;
  return log;
}

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.7g", x);
  return buf;
}

template <typename Fn>
std::string array(const std::vector<Sample>& samples, Fn value) {
  std::string out = "[";
  for (std::size_t i = 0; i < samples.size(); ++i)
    out += (i ? ", " : "") + value(samples[i]);
  return out + "]";
}

}  // namespace

std::string samples_json(const TimingResult& t) {
  std::string slowdown = "[";
  const auto names = slowdown_names(t.reasons);
  for (std::size_t i = 0; i < names.size(); ++i)
    slowdown += (i ? ", " : "") + json_string(names[i]);
  slowdown += "]";
  return "\"samples\": {\"ms\": " +
         array(t.samples, [](const Sample& s) { return number(s.ms); }) +
         ", \"sm_clock_mhz\": " +
         array(t.samples, [](const Sample& s) { return number(s.sm_mhz); }) +
         ", \"sm_clock_counted_mhz\": " +
         array(t.samples, [](const Sample& s) { return number(s.sm_mhz_counted); }) +
         ", \"power_w\": " +
         array(t.samples, [](const Sample& s) { return number(s.power_w); }) +
         ", \"flagged\": " +
         array(t.samples, [](const Sample& s) { return std::string(s.flagged ? "1" : "0"); }) +
         ", \"slowdown\": " + slowdown + "}";
}

}  // namespace gemm
