#include "gemm_types.h"

#include <stdexcept>

namespace gemm {

std::string to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "fp64"; }

Precision precision_from_string(const std::string& text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "fp64") return Precision::fp64;
  throw std::invalid_argument("unknown precision '" + text + "' (expected fp32 or fp64)");
}

std::size_t element_size(Precision p) { return p == Precision::fp32 ? 4 : 8; }

std::string GemmShape::to_string() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

}  // namespace gemm
