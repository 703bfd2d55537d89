// The one way a family makes a Variant: a chained builder that sets each fact once, e.g.
//
//   out.push_back(VariantBuilder::of<T>("warptile")
//                     .params({{"bm", 128}, {"bn", 128}, ...})
//                     .launch(kernel_launch<T>(block_tile_plan(128, 128, 256), warptile_kernel<...>))
//                     .outputs_per_thread(64)
//                     .precondition(vector_alignment_reason<T>)
//                     .representative()
//                     .build());
//
// Precision and arithmetic (and with it the unit roundoff) follow T; the name follows the
// parameter fields. What the manifest says (level tag, rung number and name, origin where the
// family names none) the registry adds. Host-only: kernels' launches come from launch.cuh.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "variant.h"

namespace gemm {

using PlanFn = std::function<LaunchPlan(const GemmShape&)>;
using RunFn = std::function<void(const Operands&, cudaStream_t)>;

// How a kernel variant launches: its plan for a shape (with the kernel it launches) and the run.
struct KernelLaunch {
  PlanFn plan;
  RunFn run;
};

template <typename T>
constexpr Precision precision_of() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  return sizeof(T) == 4 ? Precision::fp32 : Precision::fp64;
}

class VariantBuilder {
 public:
  VariantBuilder(std::string family, Precision precision) {
    v_.family = std::move(family);
    v_.precision = precision;
    compute(precision == Precision::fp32 ? Compute::fp32 : Compute::fp64);
  }
  template <typename T>
  static VariantBuilder of(std::string family) {
    return VariantBuilder(std::move(family), precision_of<T>());
  }

  // The parameters, as fields and as the name ("bm:128/bn:128").
  VariantBuilder& params(std::vector<Param> fields) {
    v_.params = params_name(fields);
    v_.param_fields = std::move(fields);
    return *this;
  }
  // A name of its own for the fields: the write-ups' names ("block:16x16") stay as they were.
  VariantBuilder& params(std::string name, std::vector<Param> fields) {
    v_.params = std::move(name);
    v_.param_fields = std::move(fields);
    return *this;
  }
  // The arithmetic, where it is not the storage precision's (TF32); sets the unit roundoff.
  VariantBuilder& compute(Compute c) {
    v_.compute = c;
    v_.unit_roundoff = unit_roundoff(c);
    return *this;
  }
  VariantBuilder& launch(KernelLaunch l) {
    v_.backend = Backend::cuda_kernel;
    v_.plan = std::move(l.plan);
    v_.run = std::move(l.run);
    return *this;
  }
  // A library or host loop instead of one of our kernels: no launch plan.
  VariantBuilder& runs_on(Backend backend, RunFn run) {
    v_.backend = backend;
    v_.plan = nullptr;
    v_.run = std::move(run);
    return *this;
  }
  // The device scratch a run needs for a shape (see Operands::workspace).
  VariantBuilder& workspace(std::function<std::size_t(const GemmShape&)> bytes) {
    v_.workspace_size = std::move(bytes);
    return *this;
  }
  // What it chose for a shape (see Variant::choice).
  VariantBuilder& choice(std::function<std::string(const GemmShape&)> describe) {
    v_.choice = std::move(describe);
    return *this;
  }
  // Elements of C per thread; 0: M*N over the threads launched.
  VariantBuilder& outputs_per_thread(double n) {
    v_.outputs_per_thread = n;
    return *this;
  }
  // Another reason to refuse a shape or device, checked after the ones given before.
  VariantBuilder& precondition(Precondition more) {
    Precondition before = std::move(v_.can_implement);
    if (!before) {
      v_.can_implement = std::move(more);
      return *this;
    }
    v_.can_implement = [before, more](const GemmShape& s,
                                      const DeviceLimits& d) -> std::optional<std::string> {
      if (auto why = before(s, d)) return why;
      return more(s, d);
    };
    return *this;
  }
  // The family's own tags (the registry adds the level's and the role's).
  VariantBuilder& tags(const Tags& more) {
    v_.tags.insert(v_.tags.end(), more.begin(), more.end());
    return *this;
  }
  VariantBuilder& role(Role r) {
    v_.role = r;
    return *this;
  }
  VariantBuilder& representative() { return role(Role::representative); }
  VariantBuilder& sweep() { return role(Role::sweep); }
  VariantBuilder& origin(std::string text) {
    v_.origin = std::move(text);
    return *this;
  }
  VariantBuilder& note(std::string text) {
    v_.note = std::move(text);
    return *this;
  }
  VariantBuilder& persistent_grid() {
    v_.persistent_grid = true;
    return *this;
  }
  // Its warps poll mbarriers (see Variant::spins).
  VariantBuilder& spins() {
    v_.spins = true;
    return *this;
  }
  VariantBuilder& default_max_work(double work) {
    v_.default_max_work = work;
    return *this;
  }

  Variant build() const { return v_; }

 private:
  Variant v_;
};

}  // namespace gemm
