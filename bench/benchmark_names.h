// One naming scheme everywhere: Google Benchmark names, NVTX range names that ncu's
// --nvtx-include syntax cannot misread, and the ncu command that selects one benchmark.
// The grammar itself is benchmark_names.inc, which the Python tools read too.
#pragma once

#include <string>

#include "gemm_types.h"

namespace gemm {

// "gemm/fp32/shared/tile:16/m:512/n:512/k:512" (Google Benchmark appends "/manual_time").
std::string benchmark_name(Precision p, const std::string& variant, const GemmShape& s);
// The same with the prefix "gemm_e2e": timed with the host-device copies.
std::string end_to_end_name(Precision p, const std::string& variant, const GemmShape& s);

// Whether `variant` follows the grammar <family>[/<param>:<value>]... (benchmark_names.inc).
bool is_variant_name(const std::string& variant);

// ncu reads / @ , [ ] * + in --nvtx-include as syntax and ':' is risky in its other filters:
// '/' becomes '.', ':' becomes '-', so
// "gemm/fp32/shared/tile:16/m:512/n:512/k:512" -> "gemm.fp32.shared.tile-16.m-512.n-512.k-512".
std::string nvtx_range_name(const std::string& benchmark);
bool is_ncu_safe(const std::string& range_name);

// Inner ranges inside a benchmark's range: only "timed" launches are the benchmark proper.
inline constexpr const char* kTimedRange = "timed";
inline constexpr const char* kWarmupRange = "warmup";
inline constexpr const char* kVerifyRange = "verify";
inline constexpr const char* kCountersRange = "counters";

// Parses a benchmark name back (with or without "/manual_time"); false if it is not one.
struct ParsedName {
  bool end_to_end = false;
  Precision precision = Precision::fp32;
  std::string variant;  // "shared/tile:16"
  GemmShape shape;
};
bool parse_benchmark_name(const std::string& name, ParsedName& out);

// The ncu command line that profiles exactly the timed launch of `benchmark`.
std::string ncu_command(const std::string& benchmark, const std::string& executable);

}  // namespace gemm
