// The family manifest (manifest.inc) as the registry reads it, for the registry and its tests.
// all_variants() (variant.h) is the registry's product.
#pragma once

#include <string>
#include <vector>

#include "variant.h"

namespace gemm {

// One line of manifest.inc.
struct ManifestLine {
  const char* level;      // the level's tag: reference, cpu, seed, ladder, tensor_core
  const char* family;     // kernels/<folder>/<family>.cu and add_<family>_variants
  const char* build;      // any | sm90a
  const char* rung_name;  // on a rung line (ladder, tensor_core)
  const char* origin;     // for variants that name none
  void (*add)(std::vector<Variant>& out);  // null where the build target was not compiled
};

// The manifest's lines, in study order.
const std::vector<ManifestLine>& manifest_lines();

// Rung 0 of the CUDA-core ladders, a variant name (manifest.inc's GEMM_LADDER_START; "" where the
// manifest names none).
const std::string& ladder_start();

// The write-ups' rungs below rung 0, variant names in ladder order (manifest.inc's
// GEMM_LADDER_SEED lines: rungs -3, -2, -1; empty where the manifest names none).
const std::vector<std::string>& ladder_seeds();

}  // namespace gemm
