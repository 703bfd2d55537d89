#include "variant_facts.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <sstream>

#include "cuda_check.h"
#include "registry.h"
#include "reporters.h"

namespace gemm {
namespace {

std::string dims_json(const Dim3& d) {
  return std::string("[") + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "]";
}

// JSON has no NaN or infinity: such a value is written as null.
std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

}  // namespace

double outputs_per_thread(const Variant& v, const LaunchPlan& plan, const GemmShape& shape) {
  if (v.outputs_per_thread > 0) return v.outputs_per_thread;
  const double threads = double(plan.grid.count()) * double(plan.block.count());
  return threads > 0 ? double(shape.m) * double(shape.n) / threads : 0;
}

std::string variant_facts_json(const Variant& v, const GemmShape& shape, bool end_to_end,
                               bool with_device) {
  std::ostringstream j;
  j << "{\"name\": " << json_string(v.name()) << ", \"family\": " << json_string(v.family)
    << ", \"precision\": " << json_string(to_string(v.precision))
    << ", \"compute\": " << json_string(to_string(v.compute))
    << ", \"unit_roundoff\": " << number(v.unit_roundoff)
    << ", \"backend\": " << json_string(to_string(v.backend)) << ", \"params\": {";
  for (std::size_t i = 0; i < v.param_fields.size(); ++i)
    j << (i ? ", " : "") << json_string(v.param_fields[i].key) << ": " << v.param_fields[i].value;
  j << "}, \"tags\": [";
  for (std::size_t i = 0; i < v.tags.size(); ++i) j << (i ? ", " : "") << json_string(v.tags[i]);
  j << "]";
  // The manifest's level: the registry gives every variant its line's level as its first tag.
  for (const ManifestLine& line : manifest_lines())
    if (!v.tags.empty() && v.tags.front() == line.level) {
      j << ", \"level\": " << json_string(line.level);
      break;
    }
  if (v.rung > 0) j << ", \"rung\": " << v.rung << ", \"rung_name\": " << json_string(v.rung_name);
  j << ", \"origin\": " << json_string(v.origin) << ", \"note\": " << json_string(v.note)
    << ", \"spins\": " << (v.spins ? "true" : "false")
    << ", \"persistent_grid\": " << (v.persistent_grid ? "true" : "false")
    << ", \"end_to_end\": " << (end_to_end ? "true" : "false") << ", \"shape\": {\"m\": "
    << shape.m << ", \"n\": " << shape.n << ", \"k\": " << shape.k << "}";
  if (v.backend == Backend::cuda_kernel) {
    const LaunchPlan p = v.plan(shape);
    const std::int64_t threads = p.block.count();
    const std::int64_t warps_per_block = (threads + 31) / 32;
    j << ", \"block\": " << dims_json(p.block) << ", \"grid\": " << dims_json(p.grid)
      << ", \"threads_per_block\": " << threads
      << ", \"outputs_per_thread\": " << number(outputs_per_thread(v, p, shape))
      << ", \"warps_launched\": " << warps_per_block * p.grid.count();
    std::size_t smem = p.static_smem_bytes + p.dynamic_smem_bytes;
    if (with_device && p.kernel) {
      cudaFuncAttributes attr{};
      GEMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, p.kernel));
      smem = attr.sharedSizeBytes + p.dynamic_smem_bytes;
      j << ", \"registers_per_thread\": " << attr.numRegs;
    }
    j << ", \"smem_per_block_bytes\": " << smem;
  }
  j << "}";
  return j.str();
}

}  // namespace gemm
