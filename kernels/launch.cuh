// Launch helper shared by the kernel families: one place that converts a LaunchPlan into a
// <<<grid, block, smem, stream>>> launch and checks the launch status.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.h"
#include "tags.h"
#include "gemm_types.h"
#include "variant.h"

namespace gemm {

inline dim3 to_dim3(const Dim3& d) {
  return dim3(unsigned(d.x), unsigned(d.y), unsigned(d.z));
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Kernels that ask for more than 48 KB of shared memory must opt in once per kernel before
// their first launch; check_launch has already refused plans above the device's opt-in limit.
void allow_dynamic_smem(const void* kernel, std::size_t bytes);

template <typename... KernelArgs, typename... Args>
void launch(const LaunchPlan& plan, cudaStream_t stream, void (*kernel)(KernelArgs...),
            Args... args) {
  if (plan.dynamic_smem_bytes > kDefaultSmemPerBlock)
    allow_dynamic_smem(reinterpret_cast<const void*>(kernel), plan.dynamic_smem_bytes);
  kernel<<<to_dim3(plan.grid), to_dim3(plan.block), plan.dynamic_smem_bytes, stream>>>(
      static_cast<KernelArgs>(args)...);
  GEMM_CHECK_LAUNCH();
}

template <typename T>
constexpr Precision precision_of() {
  return sizeof(T) == 4 ? Precision::fp32 : Precision::fp64;
}

template <typename T>
constexpr Compute compute_of() {
  return sizeof(T) == 4 ? Compute::fp32 : Compute::fp64;
}

using PlanFn = std::function<LaunchPlan(const GemmShape&)>;

// A variant of one of our kernels. Every kernel takes (A, B, C, M, N, K) followed by any
// compile-time-unknown parameters of its family (`extra`, e.g. the lab's tile_x, tile_y).
// The caller adds tags, parameter fields, origin and, where needed, a precondition.
template <typename T, typename... KernelArgs, typename... Extra>
Variant kernel_variant(std::string family, std::string params, PlanFn plan_fn,
                       void (*kernel)(KernelArgs...), Extra... extra) {
  Variant v;
  v.family = std::move(family);
  v.params = std::move(params);
  v.precision = precision_of<T>();
  v.compute = compute_of<T>();
  v.backend = Backend::cuda_kernel;
  v.unit_roundoff = unit_roundoff(v.compute);
  v.plan = [plan_fn, kernel](const GemmShape& s) {
    LaunchPlan p = plan_fn(s);
    p.kernel = reinterpret_cast<const void*>(kernel);
    return p;
  };
  v.run = [plan_fn, kernel, extra...](const Operands& ops, cudaStream_t stream) {
    launch(plan_fn(ops.shape), stream, kernel, static_cast<const T*>(ops.a),
           static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(ops.shape.m),
           int(ops.shape.n), int(ops.shape.k), extra...);
  };
  return v;
}

// One thread per element of C in edge_x x edge_y blocks; grid.x covers the columns.
inline PlanFn element_per_thread_plan(int edge_x, int edge_y, std::size_t static_smem = 0,
                                      std::size_t dynamic_smem = 0) {
  return [=](const GemmShape& s) {
    LaunchPlan p;
    p.block = {edge_x, edge_y, 1};
    p.grid = {ceil_div(s.n, edge_x), ceil_div(s.m, edge_y), 1};
    p.static_smem_bytes = static_smem;
    p.dynamic_smem_bytes = dynamic_smem;
    return p;
  };
}

// A variant named by its parameter fields: family/bm:128/bn:128/... (the fields are also
// written into the results one by one, so no tool parses them back out of the name).
template <typename T, typename... KernelArgs>
Variant tiled_variant(std::string family, std::vector<Param> fields, PlanFn plan_fn,
                      void (*kernel)(KernelArgs...)) {
  Variant v = kernel_variant<T>(std::move(family), params_name(fields), std::move(plan_fn), kernel);
  v.param_fields = std::move(fields);
  return v;
}

// A block of `threads` threads per BM x BN tile of C; grid.x covers the columns.
inline PlanFn block_tile_plan(int bm, int bn, int threads, std::size_t dynamic_smem = 0,
                              std::size_t static_smem = 0) {
  return [=](const GemmShape& s) {
    LaunchPlan p;
    p.block = {threads, 1, 1};
    p.grid = {ceil_div(s.n, bn), ceil_div(s.m, bm), 1};
    p.static_smem_bytes = static_smem;
    p.dynamic_smem_bytes = dynamic_smem;
    return p;
  };
}

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) for T = float then double: families register both precisions.
// (Tags rather than template lambdas keep the kernels C++17, which every nvcc accepts.)
template <typename Fn>
void for_each_precision(Fn&& fn) {
  fn(TypeTag<float>{});
  fn(TypeTag<double>{});
}

// The compile-time tile sizes the study sweeps: fn(std::integral_constant<int, TILE>{}) each.
template <typename Fn>
void for_each_static_tile(Fn&& fn) {
  fn(std::integral_constant<int, 8>{});
  fn(std::integral_constant<int, 16>{});
  fn(std::integral_constant<int, 32>{});
}

}  // namespace gemm
