// tuned: the pipelined, rasterized warp-tiled kernel (pipelined_kernel.cuh), on a
// __syncthreads or on mbarriers per stage, at the configuration a sweep found fastest per
// precision and problem size.
//   - tuning instances (tuning_instances.inc): family `tuned`, tag `tuning`, whole tiles only;
//     `scripts/tune_ladder.sh` runs them and writes the winners into tuned_configs.inc;
//   - the `tuned` variant (tag tracked/summary): any shape. It takes the configuration tuned at
//     the size nearest the shape, then the fastest mode of that configuration that the shape
//     allows (unchecked on whole tiles, checked 16-byte copies when N % V == 0, element copies
//     otherwise), so an odd shape loses only the bounds checks.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "pipelined_kernel.cuh"
#include "tuned_configs.h"

namespace gemm {
namespace {

template <Precision P>
using Element = std::conditional_t<P == Precision::fp32, float, double>;

// The tuned rung's configuration per precision and size (tuned_configs.inc), and the sweep's
// instances (tuning_instances.inc).
struct TunedConfig {
  Precision precision;
  int size;  // the cube edge the configuration won at
  PipelinedConfig config;
};
constexpr TunedConfig kTunedConfigs[] = {
#define LADDER_TUNED(PRECISION, SIZE, ...) {Precision::PRECISION, SIZE, PipelinedConfig __VA_ARGS__},
#include "tuned_configs.inc"
#undef LADDER_TUNED
};
struct TuningInstance {
  Precision precision;
  PipelinedConfig config;
};
constexpr TuningInstance kTuningInstances[] = {
#define LADDER_TUNING(PRECISION, ...) {Precision::PRECISION, PipelinedConfig __VA_ARGS__},
#include "tuning_instances.inc"
#undef LADDER_TUNING
};

struct TunedEntry {
  int size;
  Variant variant;  // all three modes of the configuration
};

template <typename T>
std::vector<TunedEntry>& tuned_table() {
  static std::vector<TunedEntry> table;
  return table;
}

void fill_tuned_tables() {
  static bool filled = false;
  if (filled) return;
  filled = true;
  for_each_entry<kTunedConfigs>([&]<TunedConfig E>() {
    using T = Element<E.precision>;
    tuned_table<T>().push_back({E.size, pipelined_variant<T, E.config>("tuned").build()});
  });
}

// The entry tuned at the size whose cube is nearest M*N*K in log scale.
template <typename T>
const Variant& tuned_for(const GemmShape& s) {
  const auto& table = tuned_table<T>();
  const double log_work = std::log(std::max(1.0, s.work()));
  const Variant* best = &table.front().variant;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : table) {
    const double d = std::abs(3.0 * std::log(double(e.size)) - log_work);
    if (d < best_distance) {
      best_distance = d;
      best = &e.variant;
    }
  }
  return *best;
}

template <typename T>
void add_tuned(std::vector<Variant>& out) {
  if (tuned_table<T>().empty()) return;
  std::string configs;
  for (const auto& e : tuned_table<T>())
    configs += (configs.empty() ? "" : "; ") + std::to_string(e.size) + "^3: " + e.variant.params;
  // The plan, run and preconditions of the configuration tuned for the shape.
  KernelLaunch per_size;
  per_size.plan = [](const GemmShape& s) { return tuned_for<T>(s).plan(s); };
  per_size.run = [](const Operands& ops, cudaStream_t stream) {
    tuned_for<T>(ops.shape).run(ops, stream);
  };
  VariantBuilder tuned = VariantBuilder::of<T>("tuned");
  // Where any size's configuration hands its stages over on mbarriers, its instruction counts
  // depend on timing at that size: the fact is kept for the variant as a whole.
  for (const auto& e : tuned_table<T>())
    if (e.variant.spins) tuned.spins();
  out.push_back(
      tuned.launch(per_size)
          .precondition([](const GemmShape& s, const DeviceLimits& d) {
            return tuned_for<T>(s).can_implement(s, d);
          })
          // Facts of the configuration for the largest size (outputs per thread of that entry).
          .outputs_per_thread(tuned_table<T>().back().variant.outputs_per_thread)
          .representative()
          .tags({tag::e2e})
          .note("any shape; configuration per size from kernels/ladder/tuned_configs.inc: " + configs)
          .build());
}

}  // namespace

std::vector<Variant> tuned_configurations() {
  fill_tuned_tables();
  std::vector<Variant> out;
  auto add = [&](const Variant& v) {  // a configuration that won at several sizes, once
    for (const Variant& o : out)
      if (o.precision == v.precision && o.params == v.params) return;
    out.push_back(v);
  };
  for (const auto& e : tuned_table<float>()) add(e.variant);
  for (const auto& e : tuned_table<double>()) add(e.variant);
  return out;
}

void add_tuned_variants(std::vector<Variant>& out) {
  fill_tuned_tables();
  add_tuned<float>(out);
  add_tuned<double>(out);
  for_each_entry<kTuningInstances>([&]<TuningInstance E>() {
    out.push_back(pipelined_variant<Element<E.precision>, E.config, Shapes::whole_tiles>("tuned")
                      .sweep()
                      .origin("tuning sweep instance")
                      .note("tuning instance: whole tiles only")
                      .build());
  });
}

}  // namespace gemm
