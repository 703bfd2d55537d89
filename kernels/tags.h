// The tags every tool selects variants by (tags.inc, shared with the Python tools): one constant
// per tag (gemm::tag::seed == "seed"), and the list with what each means.
#pragma once

#include <string>
#include <vector>

namespace gemm::tag {

#define GEMM_TAG(name, meaning) inline constexpr const char* name = #name;
#include "tags.inc"
#undef GEMM_TAG

struct TagInfo {
  const char* name;
  const char* meaning;
};

// Every tag with what it means, in tags.inc's order, for --help, --list and the tests.
inline const std::vector<TagInfo>& all_tags() {
  static const std::vector<TagInfo> tags = {
#define GEMM_TAG(name, meaning) {#name, meaning},
#include "tags.inc"
#undef GEMM_TAG
  };
  return tags;
}

inline bool is_known_tag(const std::string& name) {
  for (const auto& t : all_tags())
    if (name == t.name) return true;
  return false;
}

}  // namespace gemm::tag
