// Variant construction shared by the tensor-core families: a variant that picks, per shape,
// between a fast kernel (16-byte cp.async, which needs rows whose length is a multiple of 16
// bytes) and the same kernel with element-wide copies, which takes any shape. Both kernels
// compute the same tiles in the same order; only the copy width differs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "launch.cuh"
#include "tags.h"

namespace gemm::tensor {

template <typename T>
using GemmKernel = void (*)(const T*, const T*, T*, int, int, int);

// Elements per 16-byte copy: rows of A (K elements) and B (N elements) must be multiples of it
// for every 16-byte chunk to lie inside one row and be 16-byte aligned.
template <typename T>
constexpr int kVec16 = 16 / int(sizeof(T));

template <typename T>
bool rows_allow_16_byte_copies(const GemmShape& s) {
  return s.k % kVec16<T> == 0 && s.n % kVec16<T> == 0;
}

template <typename T>
Variant shape_dispatch_variant(const std::string& family, std::vector<Param> fields, int bm,
                               int bn, int threads, std::size_t dynamic_smem,
                               GemmKernel<T> vec16_kernel, GemmKernel<T> elementwise_kernel) {
  const PlanFn tile_plan = block_tile_plan(bm, bn, threads, dynamic_smem);
  Variant v = kernel_variant<T>(family, params_name(fields), tile_plan, vec16_kernel);
  v.param_fields = std::move(fields);
  auto pick = [=](const GemmShape& s) {
    return rows_allow_16_byte_copies<T>(s) ? vec16_kernel : elementwise_kernel;
  };
  v.plan = [tile_plan, pick](const GemmShape& s) {
    LaunchPlan p = tile_plan(s);
    p.kernel = reinterpret_cast<const void*>(pick(s));
    return p;
  };
  v.run = [tile_plan, pick](const Operands& ops, cudaStream_t stream) {
    launch(tile_plan(ops.shape), stream, pick(ops.shape), static_cast<const T*>(ops.a),
           static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(ops.shape.m),
           int(ops.shape.n), int(ops.shape.k));
  };
  v.outputs_per_thread = double(bm) * bn / threads;
  return v;
}

// The tag set of a tensor-core rung: the representative instance is tracked, cross-checked and
// summarized; the others are tuning-sweep instances.
inline Tags tensor_tags(bool representative) {
  if (representative)
    return {tag::tensor_core, tag::tracked, tag::crosscheck, tag::summary};
  return {tag::tensor_core, tag::tuning};
}

}  // namespace gemm::tensor
