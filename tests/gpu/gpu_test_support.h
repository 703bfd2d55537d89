// Shared fixtures of the GPU tests: skipping without a device, random inputs with their
// higher-precision reference per (precision, shape), and running a variant on poisoned output.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "device_info.h"
#include "reference.h"
#include "variant.h"
#include "workspace.h"

namespace gemm::test {

// Why GPU tests cannot run here, or nothing.
const std::optional<std::string>& no_gpu_reason();
const DeviceInfo& device();

#define GEMM_REQUIRE_GPU()                                                        \
  do {                                                                            \
    if (const auto& why = ::gemm::test::no_gpu_reason())                          \
      GTEST_SKIP() << "no CUDA device available (" << *why << ")";              \
  } while (0)

// Fresh random inputs (the seed is printed once per process) and their host reference.
struct TestData {
  Precision precision;
  GemmShape shape;
  std::vector<unsigned char> a, b;
  DeviceBuffer dev_a, dev_b, dev_c;
  std::vector<double> reference;  // filled on first use: large shapes never need it
  const std::vector<double>& ref();
};
TestData& test_data(Precision p, const GemmShape& shape);

const Variant& find_variant(const std::string& name, Precision p);
// The rung's representative (the variant the registry tags tracked) at a precision.
const Variant& representative(const std::string& family, Precision p);
// A parameter field of a variant ("bm"), or `otherwise` where it has none.
std::int64_t param(const Variant& v, const std::string& key, std::int64_t otherwise = 0);

// The operands of a variant on the data's device buffers, with the device scratch it needs at the
// data's shape: one buffer for the process, grown as needed and zeroed when another variant, or
// the same one at another shape or precision, used it last (the contract of Operands::workspace,
// as gemm-bench keeps it with one buffer per shape).
Operands operands_for(const Variant& v, TestData& data);

// Poisons C with NaN, runs the variant and returns the verification against the reference.
Verification run_and_verify(const Variant& v, TestData& data);
Verification verify_device_output(const Variant& v, TestData& data);

cudaStream_t test_stream();

}  // namespace gemm::test
