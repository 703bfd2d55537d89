#include "reporters.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "options.h"
#include "run_log.h"

namespace gemm {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

benchmark::ConsoleReporter::OutputOptions console_output_options(
    const std::vector<std::string>& passthrough, bool is_color_terminal) {
  using benchmark::ConsoleReporter;
  const auto color = benchmark_flag(passthrough, "--benchmark_color").value_or("auto");
  const bool colored =
      color == "auto" ? is_color_terminal : benchmark_bool_flag(passthrough, "--benchmark_color");
  const bool tabular = benchmark_bool_flag(passthrough, "--benchmark_counters_tabular");
  return ConsoleReporter::OutputOptions((colored ? ConsoleReporter::OO_Color : 0) |
                                        (tabular ? ConsoleReporter::OO_Tabular : 0));
}

bool color_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(fileno(stdout)) && term && *term && std::strcmp(term, "dumb") != 0;
}

std::string insert_first_member(const std::string& entries, const std::string& key,
                                const std::string& value_json) {
  return insert_first_members(entries, json_string(key) + ": " + value_json);
}

std::string insert_first_members(const std::string& entries, const std::string& members) {
  // JSONReporter opens each run's object with "{\n" and never puts '{' inside a string it
  // writes before the first member, so the first '{' of each run is the object's.
  const auto brace = entries.find('{');
  if (brace == std::string::npos) return entries;
  const auto line_end = entries.find('\n', brace);
  if (line_end == std::string::npos) return entries;
  const std::string indent(6, ' ');
  return entries.substr(0, line_end + 1) + indent + members + ",\n" + entries.substr(line_end + 1);
}

void FactsJsonReporter::ReportRuns(const std::vector<Run>& runs) {
  std::ostream* file = &GetOutputStream();
  for (const auto& run : runs) {
    std::ostringstream text;
    SetOutputStream(&text);
    JSONReporter::ReportRuns({run});
    SetOutputStream(file);
    const std::string& name = run.run_name.function_name;
    std::string members;
    if (const auto facts = facts_.find(name); facts != facts_.end() && facts->second)
      members = "\"variant\": " + facts->second();
    // Aggregates (mean, median, ...) summarise runs that already carry their samples.
    if (run.run_type == Run::RT_Iteration) {
      const std::string extra = run_log().take(name, run.iterations);
      if (!extra.empty()) members += (members.empty() ? "" : ", ") + extra;
    }
    *file << (members.empty() ? text.str() : insert_first_members(text.str(), members));
  }
}

namespace {

// Top-level entries of the JSON list that starts at text[open] ('['); -1 if it does not close.
long list_entries(const std::string& text, std::size_t open) {
  long entries = 0;
  int depth = 0;
  bool in_string = false, empty = true;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') ++depth;
    else if (c == ']' || c == '}') {
      if (--depth == 0) return empty ? 0 : entries + 1;
    } else if (c == ',' && depth == 1) {
      ++entries;
    }
    if (depth >= 1 && i > open && c != ' ' && c != '\n') empty = false;
  }
  return -1;
}

}  // namespace

std::string abbreviate_context_lists(const std::string& context_text) {
  // Longer than a terminal line: the per-family summaries above the table already say what
  // these lists hold, and the JSON file's context keeps them whole.
  constexpr std::size_t kLongLine = 160;
  std::istringstream lines(context_text);
  std::string line, out;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(": [");
    if (line.size() > kLongLine && colon != std::string::npos) {
      const long entries = list_entries(line, colon + 2);
      if (entries >= 0)
        line = line.substr(0, colon) + ": " + std::to_string(entries) +
               " entries (listed in full in the JSON file's context)";
    }
    out += line;
    out += '\n';
  }
  return out;
}

bool ProgressReporter::ReportContext(const Context& context) {
  // Google Benchmark writes the context to the error stream; catch it there and shorten it.
  std::ostringstream text;
  std::ostream& terminal = GetErrorStream();
  SetErrorStream(&text);
  const bool ok = ConsoleReporter::ReportContext(context);
  SetErrorStream(&terminal);
  terminal << abbreviate_context_lists(text.str());
  return ok;
}

void ProgressReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const auto& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    ++done_;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const auto gflops = run.counters.find("gflops");
    char rate[32] = "   (no result)";
    if (gflops != run.counters.end())
      std::snprintf(rate, sizeof(rate), "%11.1f GFLOP/s", double(gflops->second));
    std::string eta = "?";
    if (done_ <= total_) {
      const double seconds = elapsed / double(done_) * double(total_ - done_);
      eta = std::to_string(int(seconds + 0.5)) + " s";
    }
    std::fprintf(stderr, "[%zu/%zu] %s  %s  elapsed %.0f s  ETA %s\n", done_, total_,
                 run.run_name.function_name.c_str(), rate, elapsed, eta.c_str());
  }
}

}  // namespace gemm
