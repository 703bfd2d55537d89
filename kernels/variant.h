// A Variant is one rung of the study: a kernel family with fixed parameters at one precision.
// It knows its name, the facts every tool reports (parameters, tags, threads, outputs per
// thread), what shapes and devices it can take (with the reason when not), how it maps a
// problem onto a launch, and how to run on buffers the caller owns. Variants never allocate,
// copy or synchronize.
//
// Adding a family: write kernels/<folder>/<family>.cu with an add_<family>_variants() that
// appends its variants, and add its line to kernels/manifest.inc. The registry (registry.cpp)
// calls it in manifest order and gives its variants what the manifest says: the level's tag, the
// rung number, the rung name and origin, and the tags of each variant's role. Tags, not names,
// decide where a variant appears.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gemm_types.h"

namespace gemm {

enum class Backend {
  cuda_kernel,  // one of our kernels: has a LaunchPlan
  cublas,       // library reference on device buffers
  cpu,          // serial host loop on host buffers
};
std::string to_string(Backend b);

// The arithmetic a variant does, apart from the storage precision of A, B and C.
enum class Compute { fp32, tf32, fp64 };
std::string to_string(Compute c);
double unit_roundoff(Compute c);  // 2^-24, 2^-11, 2^-53

// Pointers are device pointers, except for Backend::cpu where they are host pointers.
// The workspace (CUTLASS's): device scratch of at least the variant's workspace_bytes(shape),
// allocated by the caller once per shape (null where the variant needs none). It holds zeros
// when the caller hands it to a variant for the first time; a variant leaves every counter it
// keeps there at zero again at the end of each run (partial results may stay), so its next run
// at that shape needs no clearing. A buffer that served another shape is handed over zeroed
// again: the layout follows the shape (tile counters, then partial tiles), so this shape's
// counters may lie where the other's partial results stayed. Kernels still never allocate, copy
// into it from the host, or synchronize.
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  GemmShape shape;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// One named numeric parameter of a family ("bm" = 128). Written into the results as a field.
struct Param {
  std::string key;
  std::int64_t value = 0;
};

// Tags every tool selects by (see tags.h for what each means).
using Tags = std::vector<std::string>;

// What a variant of a rung is for; the registry turns it into tags (registry.cpp). Variants of
// the write-ups' kernels and the references have none and carry their own tags.
enum class Role {
  none,
  representative,  // the rung's instance: tracked, cross-checked, in the summary
  sweep,           // a tuning-sweep instance: runs only when --tags selects `tuning`
};

// Why this variant cannot take this shape on this device, or nothing when it can.
using Precondition =
    std::function<std::optional<std::string>(const GemmShape&, const DeviceLimits&)>;

struct Variant {
  std::string family;  // "naive_row"
  std::string params;  // "block:16x16"; empty for parameterless references
  Precision precision = Precision::fp32;
  Compute compute = Compute::fp32;
  Backend backend = Backend::cuda_kernel;
  std::vector<Param> param_fields;  // the parameters as numbers, in name order
  Tags tags;              // the family's own; the registry adds its level's and its role's
  Role role = Role::none;
  int rung = 0;           // position on the ladder above the write-ups (0: not a rung)
  std::string rung_name;  // "2-D register blocking"
  std::string origin;     // which write-up or rung it reproduces, for reports
  std::string note;       // caveat shown next to its results
  // Elements of C each thread computes (kernels only); 0: as many as the grid gives each
  // thread, M*N over the threads launched (grid-stride kernels).
  double outputs_per_thread = 1;
  // Largest M*N*K the default sweep runs it at (0: no cap). Lifted by --uncapped.
  double default_max_work = 0;
  // Largest M*N*K the default sweep collects its SASS-instrumented counters at (0: gemm-bench's
  // default cap); above it, hardware counters only. Lifted by --uncapped.
  double counters_max_work = 0;
  // Largest M*N*K the default sweep collects any counters at (0: no cap); above it the
  // benchmark is verified and timed, without counters. Lifted by --uncapped.
  double hardware_counters_max_work = 0;
  // Whether its counters include the bottleneck account's warp states and ALU/LSU pipes
  // (the write-ups' kernels, outside the account, leave them out; --uncapped adds them).
  bool account_counters = true;
  // Arithmetic accuracy, for the verification tolerance: unit roundoff of the products.
  double unit_roundoff = 0;
  // One block per SM walks the tiles of C (the grid follows the device, not the shape).
  bool persistent_grid = false;
  // Warps wait on mbarriers in a polling loop (mbarrier.try_wait): how many instructions they
  // execute depends on timing, so instruction counts are not exact for this variant.
  bool spins = false;

  Precondition can_implement;                        // empty: any legal shape
  std::function<LaunchPlan(const GemmShape&)> plan;  // cuda_kernel only
  std::function<void(const Operands&, cudaStream_t)> run;
  // Device scratch a run at this shape needs (Operands::workspace); empty: none.
  std::function<std::size_t(const GemmShape&)> workspace_size;
  // What the variant chose for a shape on its own (a library's autotuned algorithm), as a JSON
  // object for the results; empty function or "" when there is nothing to say.
  std::function<std::string(const GemmShape&)> choice;

  std::string name() const { return params.empty() ? family : family + "/" + params; }
  std::size_t workspace_bytes(const GemmShape& s) const { return workspace_size ? workspace_size(s) : 0; }
  bool has_tag(const std::string& tag) const {
    return std::find(tags.begin(), tags.end(), tag) != tags.end();
  }
};

// "bm:128/bn:128/bk:8": the variant-name form of parameter fields.
std::string params_name(const std::vector<Param>& fields);

// Every variant of every family, in study order, both precisions.
const std::vector<Variant>& all_variants();

// Why a variant cannot run this shape on this device, or nothing when it can: its own
// precondition first, then the launch limits (threads, block and grid dimensions, shared
// memory against the opt-in limit).
std::optional<std::string> check_launch(const Variant& v, const GemmShape& shape,
                                        const DeviceLimits& limits);
std::optional<std::string> check_shape(const GemmShape& shape);
// A, B, C and the FP64 reference must fit in the free device memory.
std::optional<std::string> check_fits_memory(const GemmShape& shape, Precision p,
                                             std::size_t free_bytes);
// The same for every precision of a run at one shape: their workspaces stay allocated together.
std::optional<std::string> check_fits_memory(const GemmShape& shape,
                                             const std::vector<Precision>& precisions,
                                             std::size_t free_bytes);

}  // namespace gemm
