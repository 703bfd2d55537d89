// The shape suites of shape_suites.inc: gemm-bench --suite=NAME runs one.
#pragma once

#include <string>
#include <vector>

#include "gemm_types.h"

namespace gemm {

struct SuiteShape {
  std::string suite;
  GemmShape shape;
  bool study;          // in the default study's subset
  std::string source;  // where the shape comes from
};

const std::vector<SuiteShape>& suite_shapes();

// The suite names, in file order, plus "all" (every shape) and "study" (the study's subset).
std::vector<std::string> suite_names();

// The shapes of a suite name (see suite_names), each once; throws std::invalid_argument naming
// the known suites for an unknown one.
std::vector<GemmShape> shapes_of_suite(const std::string& name);

}  // namespace gemm
