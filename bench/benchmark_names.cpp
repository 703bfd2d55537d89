#include "benchmark_names.h"

#include <regex>
#include <sstream>

namespace gemm {
namespace {

std::string shape_suffix(const GemmShape& s) {
  return "/m:" + std::to_string(s.m) + "/n:" + std::to_string(s.n) + "/k:" + std::to_string(s.k);
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
  return "gemm/" + to_string(p) + "/" + variant + shape_suffix(s);
}

std::string end_to_end_name(Precision p, const std::string& variant, const GemmShape& s) {
  return "gemm_e2e/" + to_string(p) + "/" + variant + shape_suffix(s);
}

std::string nvtx_range_name(const std::string& benchmark) {
  std::string name = benchmark;
  const std::string suffix = "/manual_time";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(),
                                                  suffix) == 0)
    name.resize(name.size() - suffix.size());
  for (char& c : name) {
    if (c == '/') c = '.';
    if (c == ':') c = '-';
  }
  return name;
}

bool is_ncu_safe(const std::string& range_name) {
  return !range_name.empty() && range_name.find_first_of("/@,[]*+:\\ \"'") == std::string::npos;
}

bool parse_benchmark_name(const std::string& name, ParsedName& out) {
  static const std::regex pattern(
      R"(^(gemm|gemm_e2e)/(fp32|fp64)/(.+)/m:(\d+)/n:(\d+)/k:(\d+)(/manual_time)?$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return false;
  out.end_to_end = m[1] == "gemm_e2e";
  out.precision = precision_from_string(m[2]);
  out.variant = m[3];
  out.shape = {std::stoll(m[4]), std::stoll(m[5]), std::stoll(m[6])};
  return true;
}

std::string ncu_command(const std::string& benchmark, const std::string& executable) {
  ParsedName parsed;
  if (!parse_benchmark_name(benchmark, parsed))
    throw std::invalid_argument("'" + benchmark +
                                "' is not a benchmark name (gemm/<precision>/<variant>/m:M/n:N/k:K)");
  std::string base = benchmark;
  const std::string suffix = "/manual_time";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
    base.resize(base.size() - suffix.size());
  const std::string range = nvtx_range_name(base);
  std::ostringstream cmd;
  cmd << "ncu --nvtx --nvtx-include \"gemm@" << range << "/" << kTimedRange << "/\""
      << " --launch-count 1 --clock-control none"
      << " --set full -o " << range << " -f " << executable << " --profile"
      << " --shapes=" << parsed.shape.to_string() << " --precisions="
      << to_string(parsed.precision) << " --end-to-end=" << (parsed.end_to_end ? "on" : "off")
      << " --benchmark_filter='^" << regex_escape(base) << "(/manual_time)?$'";
  return cmd.str();
}

}  // namespace gemm
