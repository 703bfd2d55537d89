#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "benchmark_names.h"
#include "common/rung_changes.h"
#include "registry.h"
#include "ladder/tuned_configs.h"
#include "tags.h"
#include "variant.h"
#include "variant_facts.h"

namespace gemm {
namespace {

bool has(const std::string& name, Precision p) {
  for (const auto& v : all_variants())
    if (v.name() == name && v.precision == p) return true;
  return false;
}

TEST(Registry, NamesAreUniquePerPrecision) {
  std::set<std::string> seen;
  for (const auto& v : all_variants())
    EXPECT_TRUE(seen.insert(to_string(v.precision) + "/" + v.name()).second) << v.name();
}

TEST(Registry, EverySeedVariantExistsInBothPrecisions) {
  std::vector<std::string> expected = {"cublas", "cpu_serial", "grid_stride/threads:256"};
  for (const char* family : {"naive_row", "naive_col"})
    for (const char* block : {"8x8", "16x16", "32x32"})
      expected.push_back(std::string(family) + "/block:" + block);
  for (const char* tile : {"8x8", "16x16", "32x32"})
    expected.push_back(std::string("naive_tile/tile:") + tile);
  for (const char* family : {"shared", "shared_col", "shared_col_padded", "shared_register",
                             "shared_register_col"})
    for (int tile : {8, 16, 32}) expected.push_back(std::string(family) + "/tile:" + std::to_string(tile));
  for (int tile : {8, 16, 32, 64}) expected.push_back("shared_dynamic/tile:" + std::to_string(tile));
  for (int blocks = 1; blocks <= 1024; blocks *= 2)
    expected.push_back("single_thread_blocks/blocks:" + std::to_string(blocks));
  for (const auto& name : expected) {
    EXPECT_TRUE(has(name, Precision::fp32)) << name << " fp32";
    EXPECT_TRUE(has(name, Precision::fp64)) << name << " fp64";
  }
}

TEST(Registry, TheLadderStartIsAWriteUpKernelOfTheManifest) {
  ASSERT_FALSE(ladder_start().empty()) << "manifest.inc names no GEMM_LADDER_START";
  int found = 0;
  for (const auto& v : all_variants())
    if (v.name() == ladder_start()) {
      EXPECT_TRUE(v.has_tag(tag::seed)) << v.name();
      ++found;
    }
  EXPECT_EQ(found, 2) << "one variant per precision";
}

TEST(Registry, OnlyTheWriteUpsKernelsHaveCounterCapsAndTheLadderStartHasNone) {
  const auto& seeds = ladder_seeds();
  for (const auto& v : all_variants()) {
    const bool write_up = v.has_tag(tag::seed) && v.backend == Backend::cuda_kernel &&
                          v.name() != ladder_start();
    const bool seed_rung = std::find(seeds.begin(), seeds.end(), v.name()) != seeds.end();
    const bool capped = write_up && !seed_rung;
    EXPECT_EQ(v.counters_max_work, write_up ? 1024.0 * 1024.0 * 1024.0 : 0.0)
        << to_string(v.precision) << "/" << v.name();
    EXPECT_EQ(v.hardware_counters_max_work, capped ? 1024.0 * 1024.0 * 1024.0 : 0.0)
        << to_string(v.precision) << "/" << v.name();
    EXPECT_EQ(v.account_counters, !capped) << to_string(v.precision) << "/" << v.name();
    if (seed_rung) {
      EXPECT_EQ(v.default_max_work, 0.0) << "a rung runs at every size: " << v.name();
    }
  }
}

// The seed rungs are write-up kernels, one variant per precision, none of them rung 0 itself; the
// last has rung 0's 32 x 32 threads, to which rung 0 adds only the shared-memory tiling.
TEST(Registry, TheLadderSeedsAreWriteUpKernelsBelowTheStart) {
  ASSERT_EQ(ladder_seeds().size(), 3u);
  const auto threads = [](const Variant& v) { return v.plan(GemmShape{1000, 1000, 1000}).block.count(); };
  for (const auto& seed : ladder_seeds()) {
    EXPECT_NE(seed, ladder_start());
    int found = 0;
    for (const auto& v : all_variants())
      if (v.name() == seed) {
        EXPECT_TRUE(v.has_tag(tag::seed)) << seed;
        if (seed == ladder_seeds().back()) {
          EXPECT_EQ(threads(v), 1024) << seed;
        }
        ++found;
      }
    EXPECT_EQ(found, 2) << seed << ": one variant per precision";
  }
  for (const auto& v : all_variants()) {
    if (v.name() == ladder_start()) {
      EXPECT_EQ(threads(v), 1024) << v.name();
    }
  }
}

TEST(Registry, Tf32ReferenceIsFp32OnlyAndLabelled) {
  EXPECT_TRUE(has("cublas_tf32", Precision::fp32));
  EXPECT_FALSE(has("cublas_tf32", Precision::fp64));
}

TEST(Registry, KernelsHavePlansAndEveryVariantRuns) {
  for (const auto& v : all_variants()) {
    EXPECT_TRUE(bool(v.run)) << v.name();
    EXPECT_GT(v.unit_roundoff, 0) << v.name();
    EXPECT_EQ(bool(v.plan), v.backend == Backend::cuda_kernel) << v.name();
    EXPECT_FALSE(v.origin.empty()) << v.name();
  }
}

TEST(Registry, EveryVariantHasKnownTagsAndAKindTag) {
  for (const auto& v : all_variants()) {
    EXPECT_FALSE(v.tags.empty()) << v.name();
    for (const auto& t : v.tags) EXPECT_TRUE(tag::is_known_tag(t)) << v.name() << ": " << t;
    const int kinds = v.has_tag(tag::seed) + v.has_tag(tag::ladder) + v.has_tag(tag::tensor_core) +
                      v.has_tag(tag::reference) + v.has_tag(tag::shapes) + v.has_tag(tag::dispatch);
    EXPECT_EQ(kinds, 1) << v.name()
                        << ": exactly one of seed, ladder, tensor_core, reference, shapes, dispatch";
  }
}

TEST(Registry, RungsAreNamedAndTheirParamsAreTheirName) {
  for (const auto& v : all_variants()) {
    if (v.rung == 0) continue;
    EXPECT_TRUE(v.has_tag(tag::ladder) || v.has_tag(tag::tensor_core)) << v.name();
    EXPECT_FALSE(v.rung_name.empty()) << v.name();
    EXPECT_EQ(v.params, params_name(v.param_fields)) << v.name();
  }
}

TEST(Registry, NamesFollowTheGrammarAndParameterKeysCannotBeShapes) {
  for (const auto& v : all_variants()) {
    EXPECT_TRUE(is_variant_name(v.name())) << v.name();
    for (const auto& p : v.param_fields) {
      EXPECT_NE(p.key, "m") << v.name();
      EXPECT_NE(p.key, "n") << v.name();
      EXPECT_NE(p.key, "k") << v.name();
    }
  }
}

TEST(Registry, TheTrackedAndEndToEndSetsHoldTheReferences) {
  for (Precision p : {Precision::fp32, Precision::fp64})
    for (const auto& v : all_variants())
      if (v.name() == "cublas" && v.precision == p) {
        EXPECT_TRUE(v.has_tag(tag::tracked));
        EXPECT_TRUE(v.has_tag(tag::e2e));
      }
}

TEST(Registry, ComputeTypeSetsTheUnitRoundoff) {
  for (const auto& v : all_variants()) {
    if (v.compute != Compute::tf32) {
      EXPECT_EQ(v.unit_roundoff, unit_roundoff(v.compute)) << v.name();
      continue;
    }
    EXPECT_EQ(v.precision, Precision::fp32) << v.name();
    // TF32: 2^-11 where both operands are rounded to the nearest TF32, up to 2^-10 where the
    // tensor core truncates them; a variant that truncates an operand says which.
    EXPECT_GE(v.unit_roundoff, unit_roundoff(Compute::tf32)) << v.name();
    EXPECT_LE(v.unit_roundoff, 2 * unit_roundoff(Compute::tf32)) << v.name();
    if (v.unit_roundoff > unit_roundoff(Compute::tf32)) {
      EXPECT_NE(v.note.find("truncated"), std::string::npos) << v.name() << ": " << v.note;
    }
  }
}

bool is_rung(const Variant& v) { return v.has_tag(tag::ladder) || v.has_tag(tag::tensor_core); }

TEST(Registry, RungNumbersAreThePositionsOfTheRungLinesOfTheManifest) {
  int rung = 0;
  for (const ManifestLine& line : manifest_lines()) {
    const std::string level = line.level;
    if (level != tag::ladder && level != tag::tensor_core) continue;
    ++rung;
    int found = 0;
    for (const auto& v : all_variants())
      if (v.family == line.family) {
        ++found;
        EXPECT_EQ(v.rung, rung) << v.name();
        EXPECT_EQ(v.rung_name, line.rung_name) << v.name();
        EXPECT_EQ(v.tags.front(), level) << v.name();
      }
    EXPECT_GT(found, 0) << line.family << ": a rung line without variants";
  }
  EXPECT_GE(rung, 15) << "the CUDA-core and tensor-core ladders";
  for (const auto& v : all_variants())
    if (!is_rung(v)) {
      EXPECT_EQ(v.rung, 0) << v.name() << ": not a rung";
    }
}

TEST(Registry, OneFamilyPerPrecisionAndRung) {
  std::map<std::pair<Precision, int>, std::string> family_of;
  for (const auto& v : all_variants()) {
    if (v.rung == 0) continue;
    auto [it, fresh] = family_of.emplace(std::pair{v.precision, v.rung}, v.family);
    EXPECT_EQ(it->second, v.family) << to_string(v.precision) << " rung " << v.rung;
  }
}

// --- one change per rung ---------------------------------------------------------------------
// The representatives of the built rung families, per ladder (level, storage precision and
// arithmetic: the CUDA-core ladder of each precision, the TF32 and the FP64 tensor-core ladders),
// in rung order.
std::map<std::string, std::vector<const Variant*>> ladders() {
  std::set<std::string> built;
  for (const ManifestLine& line : manifest_lines())
    if (line.add) built.insert(line.family);
  std::map<std::string, std::vector<const Variant*>> out;
  for (const auto& v : all_variants())
    if (v.rung > 0 && v.role == Role::representative && built.count(v.family))
      out[v.tags.front() + "/" + to_string(v.precision) + "/" + to_string(v.compute)].push_back(&v);
  for (auto& [ladder, rungs] : out)
    std::stable_sort(rungs.begin(), rungs.end(),
                     [](const Variant* a, const Variant* b) { return a->rung < b->rung; });
  return out;
}

TEST(RungChanges, TheFourLaddersAreThere) {
  std::set<std::string> names;
  for (const auto& [ladder, rungs] : ladders()) names.insert(ladder);
  EXPECT_TRUE(names.count("ladder/fp32/fp32") && names.count("ladder/fp64/fp64") &&
              names.count("tensor_core/fp32/tf32") && names.count("tensor_core/fp64/fp64"))
      << names.size() << " ladders";
}

TEST(RungChanges, EachRungDiffersFromTheOneBelowInItsDeclaredChangeOnly) {
  int pairs = 0;
  for (const auto& [ladder, rungs] : ladders())
    for (std::size_t i = 1; i < rungs.size(); ++i) {
      const Variant &below = *rungs[i - 1], &rung = *rungs[i];
      const std::string step = ladder + ": " + below.name() + " -> " + rung.name();
      const RungChange* change = rung_change(rung.family);
      ASSERT_NE(change, nullptr) << step << ": say what it changes in common/rung_changes.h";
      ++pairs;
      if (change->whole_configuration) {
        EXPECT_GT(std::string(change->whole_configuration).size(), 20u) << step;
        continue;
      }
      std::set<std::string> declared(change->keys.begin(), change->keys.end());
      for (const AlsoDiffers& also : change->also) declared.insert(also.key);
      for (const std::string& key : differing_fields(below, rung))
        EXPECT_TRUE(declared.count(key))
            << step << ": `" << key << "` differs but is neither the rung's change nor a declared "
            << "exception (common/rung_changes.h)";
    }
  EXPECT_GE(pairs, 8 + 8 + 1) << "the CUDA-core ladders' and the FP64 tensor ladder's steps";
}

TEST(RungChanges, EveryDeclaredFieldDiffersOnALadderAndEveryEntryIsARungAboveAnother) {
  std::map<std::string, std::set<std::string>> differs;  // family -> fields it changes somewhere
  std::set<std::string> upper;                           // families with a rung below them
  for (const auto& [ladder, rungs] : ladders())
    for (std::size_t i = 1; i < rungs.size(); ++i) {
      upper.insert(rungs[i]->family);
      for (const std::string& key : differing_fields(*rungs[i - 1], *rungs[i]))
        differs[rungs[i]->family].insert(key);
    }
  std::set<std::string> built;
  for (const ManifestLine& line : manifest_lines())
    if (line.add) built.insert(line.family);
  for (const RungChange& c : rung_changes()) {
    if (!built.count(c.family)) continue;  // an sm90a family of a build without it
    EXPECT_TRUE(upper.count(c.family)) << c.family << ": not a rung above another on its ladder";
    for (const char* key : c.keys)
      EXPECT_TRUE(differs[c.family].count(key)) << c.family << ": declares `" << key
                                                << "` as its change, which differs nowhere";
    for (const AlsoDiffers& also : c.also) {
      EXPECT_TRUE(differs[c.family].count(also.key))
          << c.family << ": declares `" << also.key << "` as an exception, which differs nowhere";
      EXPECT_GT(std::string(also.why).size(), 20u) << c.family << ": " << also.key;
    }
  }
}

TEST(RungChanges, ARepresentativesNoteSaysWhatElseDiffersFromTheRungBelow) {
  for (const auto& [ladder, rungs] : ladders())
    for (std::size_t i = 1; i < rungs.size(); ++i) {
      const Variant& rung = *rungs[i];
      const RungChange* change = rung_change(rung.family);
      if (!change) continue;  // reported above
      EXPECT_NE(rung.note.find("against " + rungs[i - 1]->family + ": "), std::string::npos)
          << rung.name() << ": " << rung.note;
      const std::set<std::string> differs = differing_fields(*rungs[i - 1], rung);
      for (const AlsoDiffers& also : change->also)
        if (differs.count(also.key)) {
          EXPECT_NE(rung.note.find("also " + std::string(also.key) + ": " + also.why),
                    std::string::npos)
              << rung.name() << ": " << rung.note;
        }
    }
}

TEST(Registry, EveryVariantStartsWithItsLevelTag) {
  std::set<std::string> levels;
  for (const ManifestLine& line : manifest_lines()) levels.insert(line.level);
  EXPECT_EQ(levels, (std::set<std::string>{tag::reference, tag::cpu, tag::seed, tag::ladder,
                                           tag::tensor_core, tag::shapes, tag::dispatch}));
  for (const auto& v : all_variants()) {
    ASSERT_FALSE(v.tags.empty()) << v.name();
    EXPECT_TRUE(levels.count(v.tags.front())) << v.name() << ": first tag " << v.tags.front();
    for (std::size_t i = 1; i < v.tags.size(); ++i)
      EXPECT_FALSE(levels.count(v.tags[i]) && v.tags[i] != tag::seed)
          << v.name() << ": a second level tag " << v.tags[i];
  }
}

TEST(Registry, EachResultNamesItsVariantsLevel) {
  for (const auto& v : all_variants()) {
    const std::string json = variant_facts_json(v, {64, 64, 64}, false, false);
    EXPECT_NE(json.find("\"level\": \"" + v.tags.front() + "\""), std::string::npos)
        << v.name() << ": " << json;
  }
}

TEST(Registry, RepresentativesAndSweepInstancesCarryTheirRolesTags) {
  std::map<std::pair<std::string, Precision>, int> representatives;
  for (const auto& v : all_variants()) {
    const std::string what = to_string(v.precision) + "/" + v.name();
    if (!is_rung(v)) {
      // Off the ladders a variant has no representative; sweep instances are tagged for tuning.
      EXPECT_NE(v.role, Role::representative) << what;
      EXPECT_EQ(v.has_tag(tag::tuning), v.role == Role::sweep) << what;
      continue;
    }
    ASSERT_NE(v.role, Role::none) << what << ": a rung's variant is its representative or a sweep";
    const bool rep = v.role == Role::representative;
    if (rep) ++representatives[{v.family, v.precision}];
    EXPECT_EQ(v.has_tag(tag::tracked), rep) << what;
    EXPECT_EQ(v.has_tag(tag::crosscheck), rep) << what;
    EXPECT_EQ(v.has_tag(tag::summary), rep) << what;
    EXPECT_EQ(v.has_tag(tag::tuning), !rep) << what;
  }
  // Each rung has exactly one representative in every precision it has.
  for (const auto& v : all_variants())
    if (is_rung(v)) {
      EXPECT_EQ((representatives[{v.family, v.precision}]), 1) << v.name();
    }
}

TEST(Registry, PersistentGridsAreOneDimensionalAndNoLargerThanTheTiles) {
  // The correctness suite walks several tiles per block with the variants that say they have a
  // persistent grid: the wgmma_persistent family, where it was built.
  int persistent = 0;
  for (const auto& v : all_variants()) {
    if (!v.persistent_grid) continue;
    ++persistent;
    const GemmShape s{4096, 2048, 256};
    const LaunchPlan p = v.plan(s);
    const std::int64_t tiles = (s.m / 128) * (s.n / 128);
    EXPECT_EQ(p.grid.y * p.grid.z, 1) << v.name();
    EXPECT_LE(p.grid.x, tiles) << v.name();
  }
  bool built = false;
  for (const auto& v : all_variants())
    built = built || (v.family == "wgmma_persistent" && !v.param_fields.empty());
  if (built) {
    EXPECT_GT(persistent, 0);
  }
}

TEST(Registry, VariantsThatPollMbarriersSaySo) {
  // Their instruction counts depend on timing: the cross-check and the comparisons read the fact.
  int spinning = 0;
  std::map<Precision, bool> tuned_spins;  // any configuration of the tuned table on mbarriers
  for (const auto& c : tuned_configurations())
    tuned_spins[c.precision] = tuned_spins[c.precision] || c.spins;
  for (const auto& v : all_variants()) {
    // Split schedules whose blocks wait for each other poll a counter as well.
    const bool mbar = v.params.find("mbar:1") != std::string::npos ||
                      v.family.find("wgmma") != std::string::npos ||
                      (v.family == "tuned" && v.params.empty() && tuned_spins[v.precision]) ||
                      v.family == "gemv" || v.family == "split_k" || v.family == "split_k_mma" ||
                      v.has_tag(tag::dispatch);
    EXPECT_EQ(v.spins, mbar) << to_string(v.precision) << "/" << v.name();
    spinning += v.spins ? 1 : 0;
  }
  EXPECT_GT(spinning, 4) << "mbarrier_stages, tuned's mbar configurations and the wgmma rungs";
}

TEST(Registry, CuBlasComesFirstSoOthersCanBeReportedAgainstIt) {
  ASSERT_FALSE(all_variants().empty());
  EXPECT_EQ(all_variants().front().family, "cublas");
}

}  // namespace
}  // namespace gemm
