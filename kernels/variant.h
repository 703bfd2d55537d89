// A Variant is one rung of the study: a kernel family with fixed parameters at one precision.
// It knows its name, how it maps a problem onto a launch, and how to run on buffers the caller
// owns. Variants never allocate, copy or synchronize.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemm_types.h"

namespace gemm {

enum class Backend {
  cuda_kernel,  // one of our kernels: has a LaunchPlan
  cublas,       // library reference on device buffers
  cpu,          // serial host loop on host buffers
};

// Pointers are device pointers, except for Backend::cpu where they are host pointers.
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  GemmShape shape;
};

struct Variant {
  std::string family;  // "naive_row"
  std::string params;  // "block:16x16"; empty for parameterless references
  Precision precision = Precision::fp32;
  Backend backend = Backend::cuda_kernel;
  std::string origin;  // which write-up or reference it reproduces, for reports
  std::string note;    // caveat shown next to its results
  // Largest M*N*K the default sweep runs it at (0: no cap). Lifted by --uncapped.
  double default_max_work = 0;
  // Arithmetic accuracy, for the verification tolerance: unit roundoff of the products.
  double unit_roundoff = 0;

  std::function<LaunchPlan(const GemmShape&)> plan;  // cuda_kernel only
  std::function<void(const Operands&, cudaStream_t)> run;

  std::string name() const { return params.empty() ? family : family + "/" + params; }
};

// Every variant of every family, in study order, both precisions.
const std::vector<Variant>& all_variants();

// Why a variant cannot run this shape on this device, or nothing when it can.
std::optional<std::string> check_launch(const Variant& v, const GemmShape& shape,
                                        const DeviceLimits& limits);
std::optional<std::string> check_shape(const GemmShape& shape);
// A, B, C and the FP64 reference must fit in the free device memory.
std::optional<std::string> check_fits_memory(const GemmShape& shape, Precision p,
                                             std::size_t free_bytes);

}  // namespace gemm
