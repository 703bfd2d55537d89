// Variant construction shared by the mma.sync families: a variant that picks, per shape, between
// a fast kernel (16-byte cp.async, which needs rows whose length is a multiple of 16 bytes) and
// the same kernel with element-wide copies, which takes any shape. Both kernels compute the same
// tiles in the same order; only the copy width differs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "launch.cuh"

namespace gemm::tensor {

// Elements per 16-byte copy: rows of A (K elements) and B (N elements) must be multiples of it
// for every 16-byte chunk to lie inside one row and be 16-byte aligned.
template <typename T>
constexpr int kVec16 = 16 / int(sizeof(T));

template <typename T>
bool rows_allow_16_byte_copies(const GemmShape& s) {
  return s.k % kVec16<T> == 0 && s.n % kVec16<T> == 0;
}

template <typename T>
VariantBuilder shape_dispatch_variant(const std::string& family, std::vector<Param> fields,
                                      int bm, int bn, int threads, std::size_t dynamic_smem,
                                      GemmKernel<T> vec16_kernel,
                                      GemmKernel<T> elementwise_kernel) {
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(std::move(fields))
      .launch(kernel_per_shape<T>(block_tile_plan(bm, bn, threads, dynamic_smem),
                                  [=](const GemmShape& s) {
                                    return rows_allow_16_byte_copies<T>(s) ? vec16_kernel
                                                                          : elementwise_kernel;
                                  }))
      .outputs_per_thread(double(bm) * bn / threads);
  return b;
}

}  // namespace gemm::tensor
