// Registration of the wgmma_tma family. Always compiled (plain C++), so the variants exist in
// every build: without GEMM_HAVE_SM90A (no sm_90a object library) they refuse every shape with
// the reason, and on a device other than compute capability 9.0 they refuse it too (sm_90a code
// runs on 9.0 alone).
#include <stdexcept>
#include <string>

#include "families.h"
#include "tensor_families.h"
#include "wgmma_tma.h"

namespace gemm {

Variant tensor::wgmma_variant(const std::string& family, std::vector<Param> fields,
                              bool representative) {
  Variant v;
  v.family = family;
  v.param_fields = std::move(fields);
  v.params = params_name(v.param_fields);
  v.precision = Precision::fp32;
  v.compute = Compute::tf32;
  v.unit_roundoff = unit_roundoff(Compute::tf32);
  v.backend = Backend::cuda_kernel;
  v.tags = representative ? Tags{tag::tensor_core, tag::tracked, tag::crosscheck, tag::summary}
                          : Tags{tag::tensor_core, tag::tuning};
  v.note = "computes C^T = B^T A^T: tf32 wgmma needs K-major shared operands and B is N-major, "
           "so B^T is the register operand; FP32 inputs truncated to TF32 by the tensor core; "
           "outputs per thread counted per tile over the consumer warpgroups";
  v.can_implement = [](const GemmShape& s, const DeviceLimits& d) -> std::optional<std::string> {
#ifndef GEMM_HAVE_SM90A
    (void)s;
    (void)d;
    return std::string("built without sm_90a: configure with -DGEMM_SM90A=ON (needs "
                       "CMAKE_CUDA_ARCHITECTURES to include 90)");
#else
    if (d.cc_major != 9 || d.cc_minor != 0)
      return "sm_90a code runs on compute capability 9.0 only (this device: " +
             std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
    if (s.k % 4 != 0)
      return std::string("K % 4 != 0: TMA needs the row stride of A (K floats) to be a "
                         "multiple of 16 bytes");
    if (s.n % 4 != 0)
      return std::string("N % 4 != 0: TMA needs the row stride of B (N floats) to be a "
                         "multiple of 16 bytes");
    return std::nullopt;
#endif
  };
  return v;
}

void tensor::set_wgmma_launch(Variant& v, const WgmmaTmaConfig& tile, int config,
                              std::function<Dim3(const GemmShape&)> grid,
                              WgmmaEntryPoints entry) {
  v.plan = [tile, config, grid, entry](const GemmShape& s) {
    LaunchPlan p;
    p.block = {tile.threads(), 1, 1};
    p.grid = grid(s);
    p.dynamic_smem_bytes = tile.smem_bytes();
    if (entry.kernel) p.kernel = entry.kernel(config);
    return p;
  };
  const std::string family = v.family;
  v.run = [plan = v.plan, config, entry, family](const Operands& ops, cudaStream_t stream) {
    if (!entry.launch)
      throw std::logic_error(family + ": built without sm_90a (the variant refuses every shape)");
    entry.launch(config, plan(ops.shape), ops, stream);
  };
}

void add_wgmma_tma_variants(std::vector<Variant>& out) {
  using tensor::kWgmmaTmaConfigs;
  using tensor::WgmmaTmaConfig;
  for (int i = 0; i < tensor::kWgmmaTmaConfigCount; ++i) {
    const WgmmaTmaConfig c = kWgmmaTmaConfigs[i];
    Variant v = tensor::wgmma_variant(
        "wgmma_tma", {{"bm", c.bm}, {"bn", c.bn}, {"bk", WgmmaTmaConfig::bk}, {"stages", c.stages}},
        c.representative);
    v.rung = kRungWgmmaTma;
    v.rung_name = "wgmma + TMA";
    v.origin = "wgmma.mma_async m64n" + std::to_string(c.bm) +
               "k8 tf32 (A operand in registers), TMA tiles on mbarriers, producer warpgroup";
    v.outputs_per_thread = double(c.bm) * c.bn / (c.consumers() * 128);
    tensor::set_wgmma_launch(
        v, c, i,
        [c](const GemmShape& s) { return Dim3{(s.n + c.bn - 1) / c.bn, (s.m + c.bm - 1) / c.bm, 1}; },
        tensor::kWgmmaTmaEntryPoints);
    out.push_back(std::move(v));
  }
}

}  // namespace gemm
