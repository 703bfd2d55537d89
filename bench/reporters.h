// The two reporters gemm-bench hands Google Benchmark: the JSON file gets each benchmark's
// variant facts as an object of its own (so no tool parses them back out of a name), and the
// terminal gets a progress line per finished run on stderr.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gemm {

// Google Benchmark's JSON, with "variant": {...} added to every entry of a registered name, and
// what the run logged (run_log.h: its samples and clocks, the kernels it ran) to each run.
class FactsJsonReporter : public benchmark::JSONReporter {
 public:
  // Registered benchmark name (without /manual_time) -> a JSON object's text, made when the
  // benchmark's result is written.
  explicit FactsJsonReporter(std::map<std::string, std::function<std::string()>> facts)
      : facts_(std::move(facts)) {}
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  std::map<std::string, std::function<std::string()>> facts_;
};

// The console table as usual, plus "[k/N] name  GFLOP/s  elapsed  ETA" on stderr.
class ProgressReporter : public benchmark::ConsoleReporter {
 public:
  ProgressReporter(std::size_t total_runs, OutputOptions options)
      : ConsoleReporter(options), total_(total_runs) {}
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The console table's options as Google Benchmark sets them for its own display reporter:
// colour per --benchmark_color (auto: only on a colour terminal), tabular counters only with
// --benchmark_counters_tabular.
benchmark::ConsoleReporter::OutputOptions console_output_options(
    const std::vector<std::string>& passthrough, bool is_color_terminal);
// Whether stdout is a terminal that shows colour (Google Benchmark's "auto").
bool color_terminal();

// The context block as Google Benchmark prints it, with each line whose value is a long JSON
// list ("skipped: [...]") shortened to its number of entries. Exposed for its test.
std::string abbreviate_context_lists(const std::string& context_text);

// Inserts `"variant": facts,` as the first member of each JSON object in `entries` (the text
// JSONReporter writes for a list of runs). Exposed for its test.
std::string insert_first_member(const std::string& entries, const std::string& key,
                                const std::string& value_json);

// Inserts `members` (JSON object members without braces) the same way.
std::string insert_first_members(const std::string& entries, const std::string& members);

// JSON string literal of `text`, quotes included.
std::string json_string(const std::string& text);

}  // namespace gemm
