#include "variant.h"

namespace gemm {

std::string to_string(Backend b) {
  switch (b) {
    case Backend::cuda_kernel: return "cuda_kernel";
    case Backend::cublas: return "cublas";
    case Backend::cpu: return "cpu";
  }
  return "unknown";
}

std::string to_string(Compute c) {
  switch (c) {
    case Compute::fp32: return "fp32";
    case Compute::tf32: return "tf32";
    case Compute::fp64: return "fp64";
  }
  return "unknown";
}

double unit_roundoff(Compute c) {
  switch (c) {
    case Compute::fp32: return 5.9604644775390625e-08;  // 2^-24
    case Compute::tf32: return 4.8828125e-04;           // 2^-11: 10 stored mantissa bits
    case Compute::fp64: return 1.1102230246251565e-16;  // 2^-53
  }
  return 0;
}

std::string params_name(const std::vector<Param>& fields) {
  std::string name;
  for (const auto& f : fields) {
    if (!name.empty()) name += "/";
    name += f.key + ":" + std::to_string(f.value);
  }
  return name;
}

}  // namespace gemm
