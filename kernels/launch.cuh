// Launch helpers shared by the kernel families: one place that converts a LaunchPlan into a
// <<<grid, block, smem, stream>>> launch and checks the launch status, the KernelLaunch of a
// variant (variant_builder.h) for a kernel, and the plans most families use.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.h"
#include "gemm_types.h"
#include "tags.h"
#include "variant_builder.h"

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

// Every kernel of the study takes (A, B, C, M, N, K), then whatever its family adds (`Extra`,
// e.g. the lab's tile_x, tile_y).
template <typename T, typename... Extra>
using GemmKernel = void (*)(const T*, const T*, T*, int, int, int, Extra...);

// The launch of one kernel on `plan_fn`'s plan with the operands and `extra`.
template <typename T, typename... Extra>
KernelLaunch kernel_launch(PlanFn plan_fn, GemmKernel<T, Extra...> kernel,
                           std::type_identity_t<Extra>... extra) {
  KernelLaunch l;
  l.plan = [plan_fn, kernel](const GemmShape& s) {
    LaunchPlan p = plan_fn(s);
    p.kernel = reinterpret_cast<const void*>(kernel);
    return p;
  };
  l.run = [plan_fn, kernel, extra...](const Operands& ops, cudaStream_t stream) {
    launch(plan_fn(ops.shape), stream, kernel, static_cast<const T*>(ops.a),
           static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(ops.shape.m),
           int(ops.shape.n), int(ops.shape.k), extra...);
  };
  return l;
}

// The launch of the kernel `pick` chooses for a shape (a fast path where the shape allows it,
// a checked one for the rest), all on `plan_fn`'s plan.
template <typename T>
KernelLaunch kernel_per_shape(PlanFn plan_fn,
                              std::function<GemmKernel<T>(const GemmShape&)> pick) {
  KernelLaunch l;
  l.plan = [plan_fn, pick](const GemmShape& s) {
    LaunchPlan p = plan_fn(s);
    p.kernel = reinterpret_cast<const void*>(pick(s));
    return p;
  };
  l.run = [plan_fn, pick](const Operands& ops, cudaStream_t stream) {
    launch(plan_fn(ops.shape), stream, pick(ops.shape), static_cast<const T*>(ops.a),
           static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(ops.shape.m),
           int(ops.shape.n), int(ops.shape.k));
  };
  return l;
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

// A block of `threads` threads per BM x BN tile of C; grid.x covers the columns.
inline PlanFn block_tile_plan(int bm, int bn, int threads, std::size_t dynamic_smem = 0,
                              std::size_t static_smem = 0) {
  return [=](const GemmShape& s) {
    LaunchPlan p;
    p.block = {threads, 1, 1};
    p.grid = {ceil_div(s.n, bn), ceil_div(s.m, bm), 1};
    p.tile_m = bm;
    p.tile_n = bn;
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
template <typename Fn>
void for_each_precision(Fn&& fn) {
  fn(TypeTag<float>{});
  fn(TypeTag<double>{});
}

// Calls fn.template operator()<C>() for each configuration C, in order: a family's table of named
// configurations, each instantiated at compile time ([&]<Config C>() { ... }).
template <auto... CONFIGS, typename Fn>
void for_each_config(Fn&& fn) {
  (fn.template operator()<CONFIGS>(), ...);
}

// The same for every entry of a constexpr table: for_each_entry<kConfigs>(fn).
template <const auto& TABLE, typename Fn>
void for_each_entry(Fn&& fn) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (fn.template operator()<TABLE[I]>(), ...);
  }(std::make_index_sequence<std::size(TABLE)>{});
}

// The compile-time tile sizes the study sweeps: fn(std::integral_constant<int, TILE>{}) each.
template <typename Fn>
void for_each_static_tile(Fn&& fn) {
  fn(std::integral_constant<int, 8>{});
  fn(std::integral_constant<int, 16>{});
  fn(std::integral_constant<int, 32>{});
}

}  // namespace gemm
