// A new family is its kernel file plus one manifest line: the registry (kernels/registry.cpp),
// compiled here against a toy manifest (toy_manifest.inc), calls each line's add_<family>_variants
// and gives its variants the rung number of the line's position, the rung name, the origin, the
// level's and the role's tags; an inserted rung line renumbers the rungs after it; a family of a
// target the build lacks is listed as refused. Built twice: without the inserted line and the
// sm_90a target, and with both (GEMM_TOY_INSERTED, GEMM_HAVE_SM90A).
#include <gtest/gtest.h>

#include <string>

#include "registry.h"
#include "tags.h"
#include "variant_builder.h"

namespace gemm {

namespace {

// A toy family: a representative (its origin from the manifest) and a sweep instance with an
// origin and a tag of its own.
void add_toy(std::vector<Variant>& out, const char* family) {
  const RunFn nothing = [](const Operands&, cudaStream_t) {};
  out.push_back(VariantBuilder(family, Precision::fp32)
                    .params({{"bm", 64}})
                    .runs_on(Backend::cpu, nothing)
                    .representative()
                    .build());
  out.push_back(VariantBuilder(family, Precision::fp32)
                    .params({{"bm", 128}})
                    .runs_on(Backend::cpu, nothing)
                    .sweep()
                    .origin("its own origin")
                    .tags({tag::e2e})
                    .build());
}

}  // namespace

void add_toy_reference_variants(std::vector<Variant>& out) {
  out.push_back(VariantBuilder("toy_cublas", Precision::fp32)
                    .runs_on(Backend::cublas, [](const Operands&, cudaStream_t) {})
                    .tags({tag::tracked})
                    .origin("reference")
                    .build());
}
void add_toy_seed_variants(std::vector<Variant>& out) {
  out.push_back(VariantBuilder("toy_seed_kernel", Precision::fp64)
                    .runs_on(Backend::cpu, [](const Operands&, cudaStream_t) {})
                    .tags({tag::tile_sweep})
                    .origin("a write-up")
                    .build());
}
void add_toy_first_variants(std::vector<Variant>& out) { add_toy(out, "toy_first"); }
void add_toy_inserted_variants(std::vector<Variant>& out) { add_toy(out, "toy_inserted"); }
void add_toy_last_variants(std::vector<Variant>& out) { add_toy(out, "toy_last"); }
void add_toy_sm90a_variants(std::vector<Variant>& out) { add_toy(out, "toy_sm90a"); }

namespace {

#ifndef GEMM_TOY_INSERTED
#error "build with GEMM_TOY_INSERTED=0 or 1"
#endif
constexpr bool kInserted = GEMM_TOY_INSERTED;
#ifdef GEMM_HAVE_SM90A
constexpr bool kSm90a = true;
#else
constexpr bool kSm90a = false;
#endif

std::vector<const Variant*> of_family(const std::string& family) {
  std::vector<const Variant*> found;
  for (const Variant& v : all_variants())
    if (v.family == family) found.push_back(&v);
  return found;
}

TEST(NewFamily, TheRegistryReadsTheToyManifest) {
  EXPECT_EQ(manifest_lines().size(), kInserted ? 6u : 5u);
  ASSERT_FALSE(all_variants().empty());
  EXPECT_EQ(all_variants().front().family, "toy_cublas");
}

TEST(NewFamily, RungsAreNumberedByTheirLinesPosition) {
  const std::vector<std::pair<std::string, int>> expected =
      kInserted ? std::vector<std::pair<std::string, int>>{{"toy_first", 1}, {"toy_inserted", 2},
                                                           {"toy_last", 3}, {"toy_sm90a", 4}}
                : std::vector<std::pair<std::string, int>>{{"toy_first", 1}, {"toy_last", 2},
                                                           {"toy_sm90a", 3}};
  for (const auto& [family, rung] : expected) {
    const auto variants = of_family(family);
    ASSERT_FALSE(variants.empty()) << family;
    for (const Variant* v : variants) EXPECT_EQ(v->rung, rung) << v->name();
  }
  EXPECT_TRUE(of_family("toy_inserted").empty() != kInserted);
  for (const char* family : {"toy_cublas", "toy_seed_kernel"})
    for (const Variant* v : of_family(family)) EXPECT_EQ(v->rung, 0) << family;
}

TEST(NewFamily, TheManifestGivesRungNameOriginAndTheLevelsTag) {
  const auto last = of_family("toy_last");
  ASSERT_EQ(last.size(), 2u);
  for (const Variant* v : last) {
    EXPECT_EQ(v->rung_name, "last rung");
    EXPECT_EQ(v->tags.front(), tag::ladder);
  }
  EXPECT_EQ(last[0]->origin, "origin of the last");  // none of its own
  EXPECT_EQ(last[1]->origin, "its own origin");
  EXPECT_EQ(of_family("toy_cublas").at(0)->tags, (Tags{tag::reference, tag::tracked}));
  EXPECT_EQ(of_family("toy_seed_kernel").at(0)->tags, (Tags{tag::seed, tag::tile_sweep}));
}

TEST(NewFamily, RolesBecomeTags) {
  const auto first = of_family("toy_first");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0]->tags, (Tags{tag::ladder, tag::tracked, tag::crosscheck, tag::summary}));
  EXPECT_EQ(first[1]->tags, (Tags{tag::ladder, tag::tuning, tag::e2e}));
}

TEST(NewFamily, AFamilyOfATargetNotBuiltIsListedAsRefused) {
  const auto sm90a = of_family("toy_sm90a");
  if (kSm90a) {
    EXPECT_EQ(sm90a.size(), 2u);
    for (const Variant* v : sm90a) EXPECT_FALSE(v->can_implement) << v->name();
    return;
  }
  ASSERT_EQ(sm90a.size(), 1u);
  const Variant& v = *sm90a[0];
  EXPECT_EQ(v.name(), "toy_sm90a");
  EXPECT_EQ(v.tags.front(), tag::tensor_core);
  EXPECT_EQ(v.rung_name, "sm90a rung");
  ASSERT_TRUE(v.can_implement);
  const auto why = v.can_implement({64, 64, 64}, DeviceLimits{});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("built without sm_90a"), std::string::npos) << *why;
  EXPECT_THROW(v.run(Operands{}, nullptr), std::logic_error);
}

}  // namespace
}  // namespace gemm
