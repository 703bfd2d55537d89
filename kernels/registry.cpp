// The registry: every family of manifest.inc, in its order, with the facts the manifest gives.
// A family's file appends its variants (add_<family>_variants); the registry gives each one its
// level's tag, its role's tags, and on a rung line the rung number (the line's position among
// the rung lines), rung name and origin; a rung's representative's note gets what it changes
// from the rung below on its ladder (common/rung_changes.h). A family whose build target was not
// compiled (sm90a) is listed as one variant that refuses every shape, with the reason.
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "common/rung_changes.h"
#include "registry.h"
#include "tags.h"

// The manifest to read: a test compiles this file against a toy manifest of its own.
#ifndef GEMM_MANIFEST
#define GEMM_MANIFEST "manifest.inc"
#endif

namespace gemm {

#define GEMM_FAMILY(level, family, build, rung_name, origin) \
  void add_##family##_variants(std::vector<Variant>& out);
#define GEMM_LADDER_START(variant)
#define GEMM_LADDER_SEED(variant, rung_name)
#include GEMM_MANIFEST
#undef GEMM_LADDER_SEED
#undef GEMM_LADDER_START
#undef GEMM_FAMILY

namespace {

// The registration function of a line, or null where its build target was not compiled.
#define GEMM_BUILT_any(add) add
#ifdef GEMM_HAVE_SM90A
#define GEMM_BUILT_sm90a(add) add
#else
#define GEMM_BUILT_sm90a(add) nullptr
#endif

const std::vector<ManifestLine>& manifest() {
  static const std::vector<ManifestLine> lines = {
#define GEMM_FAMILY(level, family, build, rung_name, origin) \
  {tag::level, #family, #build, rung_name, origin, GEMM_BUILT_##build(&add_##family##_variants)},
#define GEMM_LADDER_START(variant)
#define GEMM_LADDER_SEED(variant, rung_name)
#include GEMM_MANIFEST
#undef GEMM_LADDER_SEED
#undef GEMM_LADDER_START
#undef GEMM_FAMILY
  };
  return lines;
}

// The manifest's GEMM_LADDER_START, or "" where it names none (a toy manifest).
std::string ladder_start_from_manifest() {
#define GEMM_FAMILY(level, family, build, rung_name, origin)
#define GEMM_LADDER_SEED(variant, rung_name)
#define GEMM_LADDER_START(variant) return variant;
#include GEMM_MANIFEST
#undef GEMM_LADDER_START
#undef GEMM_LADDER_SEED
#undef GEMM_FAMILY
  return "";
}

// The manifest's GEMM_LADDER_SEED variants, in order (none in a toy manifest).
std::vector<std::string> ladder_seeds_from_manifest() {
  return {
#define GEMM_FAMILY(level, family, build, rung_name, origin)
#define GEMM_LADDER_START(variant)
#define GEMM_LADDER_SEED(variant, rung_name) variant,
#include GEMM_MANIFEST
#undef GEMM_LADDER_SEED
#undef GEMM_LADDER_START
#undef GEMM_FAMILY
  };
}

bool is_ladder_seed(const std::string& name) {
  for (const auto& seed : ladder_seeds())
    if (seed == name) return true;
  return false;
}

#undef GEMM_BUILT_any
#undef GEMM_BUILT_sm90a

bool is_rung_level(const std::string& level) {
  return level == tag::ladder || level == tag::tensor_core;
}

void add_tag(Tags& tags, const char* tag) {
  for (const auto& t : tags)
    if (t == tag) return;
  tags.push_back(tag);
}

// The level's tag, then the role's, then the family's own.
Tags tags_of(const ManifestLine& line, const Variant& v) {
  Tags tags = {line.level};
  if (v.role == Role::representative) {
    add_tag(tags, tag::tracked);
    add_tag(tags, tag::crosscheck);
    add_tag(tags, tag::summary);
  } else if (v.role == Role::sweep) {
    add_tag(tags, tag::tuning);
  }
  for (const auto& t : v.tags) add_tag(tags, t.c_str());
  return tags;
}

std::string build_reason(const std::string& build) {
  if (build == "sm90a")
    return "built without sm_90a: configure with -DGEMM_SM90A=ON (needs "
           "CMAKE_CUDA_ARCHITECTURES to include 90)";
  return "built without the " + build + " target";
}

// The stand-in of a family that was not compiled: it refuses every shape with the reason.
Variant refused_family(const ManifestLine& line) {
  Variant v;
  v.family = line.family;
  v.unit_roundoff = unit_roundoff(v.compute);
  v.role = is_rung_level(line.level) ? Role::representative : Role::none;
  const std::string why = build_reason(line.build);
  v.note = why;
  v.can_implement = [why](const GemmShape&, const DeviceLimits&) -> std::optional<std::string> {
    return why;
  };
  v.plan = [](const GemmShape&) { return LaunchPlan{}; };
  v.run = [family = v.family, why](const Operands&, cudaStream_t) {
    throw std::logic_error(family + ": " + why);
  };
  return v;
}

// What a rung's representative `rung` changes from `below`, the representative of the rung below
// it on its ladder (common/rung_changes.h), for its note: the fields of its change, and of the
// declared exceptions those that differ at this precision, with their reasons.
std::string change_note(const RungChange& c, const Variant& below, const Variant& rung) {
  std::string note = "against " + below.family + ": ";
  if (c.whole_configuration) return note + c.whole_configuration;
  std::string keys;
  for (const char* k : c.keys) keys += (keys.empty() ? "" : ", ") + std::string(k);
  note += keys.empty() ? "the same parameters (the change is in the code)"
                       : "differs in " + keys + " (the rung's change)";
  const std::set<std::string> differs = differing_fields(below, rung);
  for (const AlsoDiffers& a : c.also)
    if (differs.count(a.key)) note += "; also " + std::string(a.key) + ": " + a.why;
  return note;
}

// Which ladder a rung's variant is on: its level, storage precision and arithmetic.
std::string ladder_of(const std::string& level, const Variant& v) {
  return level + "/" + to_string(v.precision) + "/" + to_string(v.compute);
}

// Every line's variants with the facts the manifest gives them.
std::vector<Variant> assemble_registry(const std::vector<ManifestLine>& lines) {
  std::vector<Variant> out;
  std::map<std::string, std::size_t> top_rung;  // ladder -> its last representative so far
  int rung = 0;
  for (const ManifestLine& line : lines) {
    const bool is_rung = is_rung_level(line.level);
    if (is_rung) ++rung;
    const std::size_t first = out.size();
    if (line.add) {
      line.add(out);
    } else {
      out.push_back(refused_family(line));
    }
    for (std::size_t i = first; i < out.size(); ++i) {
      Variant& v = out[i];
      v.tags = tags_of(line, v);
      if (is_rung) {
        v.rung = rung;
        v.rung_name = line.rung_name;
      }
      if (v.origin.empty()) v.origin = line.origin;
    }
    if (!is_rung || !line.add) continue;  // a family not built has no parameters to compare
    for (std::size_t i = first; i < out.size(); ++i) {
      Variant& v = out[i];
      if (v.role != Role::representative) continue;
      const auto below = top_rung.find(ladder_of(line.level, v));
      const RungChange* c = rung_change(v.family);
      if (c && below != top_rung.end())
        v.note += (v.note.empty() ? "" : "; ") + change_note(*c, out[below->second], v);
      top_rung[ladder_of(line.level, v)] = i;
    }
  }
  // The write-ups' kernels collect counters up to 1024^3 (the cross-check's shape), where the
  // tile-size section reads them. Their SASS-level metrics (FFMA and shared-memory instruction
  // counts) instrument the kernel, which then runs 30 to 150 times slower, and their exact
  // counts scale with the shape; even their hardware counters cost 0.2 to 0.7 s per benchmark
  // at 2048^3 (ten replay passes; measured on an H100: 28 s of the study's 81 counter seconds)
  // and 2 to 5 s at 4096^3. The ladder's start (the manifest's GEMM_LADDER_START, the report's
  // rung 0) keeps every counter at every size. The bottleneck account explains the ladder's
  // rungs, not the other write-ups' kernels, so these also leave out its warp states and
  // ALU/LSU pipes (a third of the replay passes). The seed rungs below rung 0 (GEMM_LADDER_SEED)
  // are rungs: they run at every size, with their hardware counters and the account's; only
  // their SASS-instrumented counters stop at 1024^3 (naive_col at 4096^3 takes 0.28 s a launch,
  // 30-150x that under instrumentation).
  for (Variant& x : out) {
    if (!x.has_tag(tag::seed) || x.backend != Backend::cuda_kernel || x.name() == ladder_start()) continue;
    if (is_ladder_seed(x.name())) {
      x.default_max_work = 0;
      x.counters_max_work = 1024.0 * 1024.0 * 1024.0;
    } else if (x.counters_max_work == 0) {
      x.counters_max_work = 1024.0 * 1024.0 * 1024.0;
      x.hardware_counters_max_work = 1024.0 * 1024.0 * 1024.0;
      x.account_counters = false;
    }
  }
  return out;
}

}  // namespace

const std::vector<ManifestLine>& manifest_lines() { return manifest(); }

const std::string& ladder_start() {
  static const std::string name = ladder_start_from_manifest();
  return name;
}

const std::vector<std::string>& ladder_seeds() {
  static const std::vector<std::string> names = ladder_seeds_from_manifest();
  return names;
}

const std::vector<Variant>& all_variants() {
  // cublas_reference is the manifest's first line: every other variant is reported as a share
  // of cuBLAS.
  static const std::vector<Variant> variants = assemble_registry(manifest());
  return variants;
}

}  // namespace gemm
