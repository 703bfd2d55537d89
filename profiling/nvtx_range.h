// NVTX push/pop ranges in the domain "gemm", so `ncu --nvtx --nvtx-include "gemm@<range>/"`
// selects exactly one benchmark's kernels. Header-only (nvtx3 ships with the CUDA toolkit) and
// nearly free when no tool is attached.
#pragma once

#include <nvtx3/nvtx3.hpp>

namespace gemm {

struct nvtx_domain {
  static constexpr const char* name{"gemm"};
};

using NvtxRange = nvtx3::scoped_range_in<nvtx_domain>;

}  // namespace gemm
