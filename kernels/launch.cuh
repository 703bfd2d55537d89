// Launch helper shared by the kernel families: one place that converts a LaunchPlan into a
// <<<grid, block, smem, stream>>> launch and checks the launch status.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.h"
#include "gemm_types.h"
#include "variant.h"

namespace gemm {

inline dim3 to_dim3(const Dim3& d) {
  return dim3(unsigned(d.x), unsigned(d.y), unsigned(d.z));
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

template <typename... KernelArgs, typename... Args>
void launch(const LaunchPlan& plan, cudaStream_t stream, void (*kernel)(KernelArgs...),
            Args... args) {
  kernel<<<to_dim3(plan.grid), to_dim3(plan.block), plan.dynamic_smem_bytes, stream>>>(
      static_cast<KernelArgs>(args)...);
  GEMM_CHECK_LAUNCH();
}

template <typename T>
constexpr Precision precision_of() {
  return sizeof(T) == 4 ? Precision::fp32 : Precision::fp64;
}

// Unit roundoff of the arithmetic: 2^-24 for FP32, 2^-53 for FP64.
template <typename T>
constexpr double unit_roundoff_of() {
  return sizeof(T) == 4 ? 5.9604644775390625e-08 : 1.1102230246251565e-16;
}

using PlanFn = std::function<LaunchPlan(const GemmShape&)>;

// A variant of one of our kernels. Every kernel takes (A, B, C, M, N, K) followed by any
// compile-time-unknown parameters of its family (`extra`, e.g. the lab's tile_x, tile_y).
template <typename T, typename... KernelArgs, typename... Extra>
Variant kernel_variant(std::string family, std::string params, PlanFn plan_fn,
                       void (*kernel)(KernelArgs...), Extra... extra) {
  Variant v;
  v.family = std::move(family);
  v.params = std::move(params);
  v.precision = precision_of<T>();
  v.backend = Backend::cuda_kernel;
  v.unit_roundoff = unit_roundoff_of<T>();
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
