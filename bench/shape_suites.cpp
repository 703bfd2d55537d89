#include "shape_suites.h"

#include <algorithm>
#include <stdexcept>

namespace gemm {

const std::vector<SuiteShape>& suite_shapes() {
  static const std::vector<SuiteShape> all = {
#define GEMM_SHAPE(suite, m, n, k, study, source) {#suite, {m, n, k}, study != 0, source},
#include "shape_suites.inc"
#undef GEMM_SHAPE
  };
  return all;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const auto& s : suite_shapes())
    if (std::find(names.begin(), names.end(), s.suite) == names.end()) names.push_back(s.suite);
  names.push_back("study");
  names.push_back("all");
  return names;
}

std::vector<GemmShape> shapes_of_suite(const std::string& name) {
  std::vector<GemmShape> shapes;
  for (const auto& s : suite_shapes()) {
    const bool in = name == "all" || (name == "study" && s.study) || name == s.suite;
    const auto same = [&](const GemmShape& o) {
      return o.m == s.shape.m && o.n == s.shape.n && o.k == s.shape.k;
    };
    if (in && std::none_of(shapes.begin(), shapes.end(), same)) shapes.push_back(s.shape);
  }
  if (shapes.empty()) {
    std::string known;
    for (const auto& n : suite_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown suite '" + name + "' (known: " + known + ")");
  }
  return shapes;
}

}  // namespace gemm
