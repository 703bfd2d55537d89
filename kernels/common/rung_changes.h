// What each rung changes from the rung below it on its ladder (the CUDA-core ladder of each
// precision, the TF32 and the FP64 tensor-core ladders; a ladder's first rung has no entry), said
// in the parameter fields of the two rungs' representatives. A rung is the one below plus one
// technique: its representative differs from the one below in the fields of that technique alone
// (none where the technique is code, not a parameter), or in a field it names here with the
// reason the difference cannot be avoided. The registry tests (tests/cpu/registry_test.cpp,
// RungChanges) hold every pair of neighbouring representatives to this table; the registry adds
// it to each representative's note.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "variant.h"

namespace gemm {

// A field that differs from the rung below for another reason than the rung's technique.
struct AlsoDiffers {
  const char* key;
  const char* why;
};

struct RungChange {
  const char* family;
  std::vector<const char*> keys;  // the fields of the rung's technique (empty: code only)
  std::vector<AlsoDiffers> also;  // other fields that differ, each with its reason
  // The tuned rung: its change is the configuration itself (a sweep's winner per size).
  const char* whole_configuration = nullptr;
};

inline const std::vector<RungChange>& rung_changes() {
  static const std::vector<RungChange> table = {
      // CUDA-core ladders (FP32 and FP64).
      {"blocktile_2d",
       {"tn"},
       {{"bm", "threads per block = block tile / outputs per thread: 8 x 8 (FP64: 8 x 4) "
               "outputs per thread in blocktile_1d's 64 x 64 tile would leave 64 (FP64: 128) "
               "threads per block; siboehm's 128 x 128 tile (FP64: 128 x 64) keeps 256"},
        {"bn", "at FP32 the same: the 128 x 128 tile keeps 256 threads per block"}}},
      {"vectorized", {}, {}},
      {"conflict_free", {}, {}},
      {"warptile", {"wm", "wn"}, {}},
      {"async_pipeline",
       {"stages"},
       {{"group", "0: the row-major block order of the rungs below, a parameter of the "
                  "pipelined kernel from this rung on"},
        {"minb", "the blocks per SM that __launch_bounds__ asks for, a parameter of the "
                 "pipelined kernel: 2 at FP32, 1 at FP64, the occupancy warptile's kernel has "
                 "without a bound (nvcc 13.0: 123 registers, 2 blocks of 256 threads per SM at "
                 "FP32; 140 registers, 1 block at FP64)"}}},
      {"rasterized", {"group"}, {}},
      {"mbarrier_stages", {"mbar"}, {}},
      {"tuned", {}, {}, "the configuration per precision and size that a sweep found fastest "
                        "(kernels/ladder/tuned_configs.inc): the rung's change by design"},
      // The TF32 tensor-core ladder.
      {"mma_tf32_pipelined", {"stages"}, {}},
      // wgmma's warp layout is the instruction's (a warpgroup per 64 rows of C^T): no warp tile.
      {"wgmma_tma", {"wm", "wn"}, {}},
      {"wgmma_persistent", {"group"}, {}},
      // The FP64 tensor-core ladder.
      {"mma_fp64_m16n8k16", {}, {}},
  };
  return table;
}

// The parameter fields in which two variants differ: a value changed, or a field only one has.
inline std::set<std::string> differing_fields(const Variant& a, const Variant& b) {
  std::map<std::string, std::int64_t> in_a, in_b;
  for (const Param& p : a.param_fields) in_a[p.key] = p.value;
  for (const Param& p : b.param_fields) in_b[p.key] = p.value;
  std::set<std::string> out;
  for (const auto& [key, value] : in_a)
    if (!in_b.count(key) || in_b[key] != value) out.insert(key);
  for (const auto& [key, value] : in_b)
    if (!in_a.count(key)) out.insert(key);
  return out;
}

// The entry of a family, or null.
inline const RungChange* rung_change(const std::string& family) {
  for (const RungChange& c : rung_changes())
    if (family == c.family) return &c;
  return nullptr;
}

}  // namespace gemm
