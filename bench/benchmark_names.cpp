#include "benchmark_names.h"

#include <regex>
#include <stdexcept>
#include <sstream>

namespace gemm {
namespace names {
// The grammar's strings, from the file the Python tools read too.
#define GEMM_NAME(key, value) inline constexpr const char* key = value;
#include "benchmark_names.inc"
#undef GEMM_NAME
}  // namespace names

namespace {

std::string shape_suffix(const GemmShape& s) {
  return "/m:" + std::to_string(s.m) + "/n:" + std::to_string(s.n) + "/k:" + std::to_string(s.k);
}

std::string without_manual_time(std::string name) {
  const std::string suffix = names::manual_time_suffix;
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

// Escapes regex metacharacters so --benchmark_filter matches the name literally.
std::string regex_escape(const std::string& text) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : text) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string benchmark_name(Precision p, const std::string& variant, const GemmShape& s) {
  return std::string(names::kernel_prefix) + "/" + to_string(p) + "/" + variant + shape_suffix(s);
}

std::string end_to_end_name(Precision p, const std::string& variant, const GemmShape& s) {
  return std::string(names::end_to_end_prefix) + "/" + to_string(p) + "/" + variant +
         shape_suffix(s);
}

bool is_variant_name(const std::string& variant) {
  static const std::regex pattern(names::variant_regex);
  return std::regex_match(variant, pattern);
}

std::string nvtx_range_name(const std::string& benchmark) {
  std::string name = without_manual_time(benchmark);
  const std::string from = names::nvtx_from, to = names::nvtx_to;
  for (char& c : name)
    if (auto at = from.find(c); at != std::string::npos) c = to[at];
  return name;
}

bool is_ncu_safe(const std::string& range_name) {
  return !range_name.empty() && range_name.find_first_of("/@,[]*+:\\ \"'") == std::string::npos;
}

bool parse_benchmark_name(const std::string& name, ParsedName& out) {
  static const std::regex pattern(names::benchmark_regex);
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return false;
  out.end_to_end = m[1] == names::end_to_end_prefix;
  out.precision = precision_from_string(m[2]);
  out.variant = m[3];
  try {
    out.shape = {std::stoll(m[4]), std::stoll(m[5]), std::stoll(m[6])};
  } catch (const std::out_of_range&) {
    return false;  // a dimension beyond 64 bits names no benchmark
  }
  return true;
}

std::string ncu_command(const std::string& benchmark, const std::string& executable) {
  ParsedName parsed;
  if (!parse_benchmark_name(benchmark, parsed))
    throw std::invalid_argument("'" + benchmark +
                                "' is not a benchmark name (gemm/<precision>/<variant>/m:M/n:N/k:K)");
  const std::string base = without_manual_time(benchmark);
  const std::string range = nvtx_range_name(base);
  std::ostringstream cmd;
  cmd << "ncu --nvtx --nvtx-include \"gemm@" << range << "/" << kTimedRange << "/\""
      << " --launch-count 1 --clock-control none"
      << " --set full -o " << range << " -f " << executable << " --profile"
      << " --shapes=" << parsed.shape.to_string() << " --precisions="
      << to_string(parsed.precision) << " --end-to-end=" << (parsed.end_to_end ? "on" : "off")
      << " --tags=all"
      << " --benchmark_filter='^" << regex_escape(base) << "(/manual_time)?$'";
  return cmd.str();
}

}  // namespace gemm
