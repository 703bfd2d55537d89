// The tags every tool selects variants by, instead of lists of family names: a new family
// appears in the tracking run, the cross-check, the summary or the tile report by being tagged.
#pragma once

#include <string>
#include <vector>

namespace gemm::tag {

inline constexpr const char* seed = "seed";                // a kernel of the lab write-ups
inline constexpr const char* ladder = "ladder";            // a CUDA-core rung above the write-ups
inline constexpr const char* tensor_core = "tensor_core";  // a rung on the tensor cores
inline constexpr const char* reference = "reference";      // cuBLAS
inline constexpr const char* cpu = "cpu";                  // the serial CPU baseline
inline constexpr const char* e2e = "e2e";            // also timed with the host-device copies
inline constexpr const char* tracked = "tracked";    // in the regression-tracking run
inline constexpr const char* crosscheck = "crosscheck";  // in the CUPTI-vs-ncu cross-check
inline constexpr const char* summary = "summary";        // in the summary table
inline constexpr const char* tile_sweep = "tile_sweep";  // params sweep a tile or block edge
inline constexpr const char* tuning = "tuning";  // sweep instance: only run when selected

struct TagInfo {
  const char* name;
  const char* meaning;
};

// Every tag with what it means, for --help, --list and the tests.
inline const std::vector<TagInfo>& all_tags() {
  static const std::vector<TagInfo> tags = {
      {seed, "kernels of the lab write-ups"},
      {ladder, "CUDA-core rungs above the write-ups"},
      {tensor_core, "rungs on the tensor cores"},
      {reference, "cuBLAS"},
      {cpu, "the serial CPU baseline"},
      {e2e, "also timed end to end, with the host-device copies"},
      {tracked, "the regression-tracking set"},
      {crosscheck, "the CUPTI-vs-ncu cross-check set"},
      {summary, "the summary table's set"},
      {tile_sweep, "families whose parameter sweeps a tile or block edge"},
      {tuning, "tuning-sweep instances: run only when --tags selects them"},
  };
  return tags;
}

inline bool is_known_tag(const std::string& name) {
  for (const auto& t : all_tags())
    if (name == t.name) return true;
  return false;
}

}  // namespace gemm::tag
