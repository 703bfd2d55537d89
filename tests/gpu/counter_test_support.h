// What every counter test shares: the process's one CUPTI session (the range profiler allows
// one per context), running a variant under it, and comparing exact counts.
#pragma once

#include <optional>
#include <string>

#include "counters.h"
#include "gpu_test_support.h"

namespace gemm::test {

CounterCollector& test_collector();

#define GEMM_REQUIRE_COUNTERS()                                                          \
  do {                                                                                   \
    GEMM_REQUIRE_GPU();                                                                  \
    if (!::gemm::test::test_collector().available())                                     \
      GTEST_SKIP() << "hardware counters unavailable here: "                             \
                   << ::gemm::test::test_collector().status();                           \
  } while (0)

// Runs the variant once under the profiler at `s` (fresh random inputs) and returns its
// counters with the launch facts and derived ratios.
CounterValues measure(const Variant& v, const GemmShape& s);
CounterValues measure(const std::string& variant, Precision p, const GemmShape& s);
// The same, or nothing with `refused` set when the variant refuses the shape on this device.
std::optional<CounterValues> measure_if_accepted(const std::string& variant, Precision p,
                                                 const GemmShape& s, std::string& refused);

// Counts are exact; a tiny relative slack absorbs nothing but floating-point formatting.
void expect_count(double measured, double predicted, const std::string& what);

}  // namespace gemm::test
