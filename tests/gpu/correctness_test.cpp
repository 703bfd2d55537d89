// Every variant x precision against the higher-precision host reference, on odd shapes that
// are multiples of no tile, with fresh random inputs and NaN-poisoned output.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <vector>

#include "cuda_check.h"
#include "gpu_test_support.h"
#include "ladder/tuned_configs.h"
#include "tags.h"

namespace gemm::test {
namespace {

// Multiples of no tile. The last is also aligned for 16-byte loads (N and K multiples of 4,
// neither of 8), so the vectorized and TMA fast paths are checked on tails as well.
const std::vector<GemmShape> kOddShapes = {
    {1, 1, 1}, {7, 13, 5}, {257, 1, 300}, {1023, 517, 2049}, {999, 516, 2052}};

std::vector<std::size_t> device_variant_indices() {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < all_variants().size(); ++i)
    if (all_variants()[i].backend != Backend::cpu) indices.push_back(i);
  return indices;
}

// Runs v at shape on fresh inputs over NaN-poisoned output and checks it against the reference.
void expect_matches_reference(const Variant& v, const GemmShape& shape) {
  TestData& data = test_data(v.precision, shape);
  const Verification r = run_and_verify(v, data);
  EXPECT_EQ(r.unwritten, 0) << "elements left unwritten (still NaN)";
  EXPECT_TRUE(r.passed) << v.name() << " " << to_string(v.precision) << " " << shape.to_string()
                        << ": max_rel_err " << r.max_rel_err << " > " << r.tolerance;
}

// A test name from a variant and a shape: precision_name_shape, non-alphanumerics as '_'.
std::string test_case_name(const Variant& v, const GemmShape& shape) {
  std::string name = to_string(v.precision) + "_" + v.name() + "_" + shape.to_string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class CorrectnessVariant
    : public ::testing::TestWithParam<std::tuple<std::size_t, GemmShape>> {};

TEST_P(CorrectnessVariant, MatchesReference) {
  GEMM_REQUIRE_GPU();
  const Variant& v = all_variants()[std::get<0>(GetParam())];
  const GemmShape shape = std::get<1>(GetParam());
  if (auto refused = check_launch(v, shape, device().limits)) {
    // A refusal is accepted when it carries a reason (the variant's declared precondition, or
    // a launch limit such as the write-ups' 64x64 tile); it is reported, never launched.
    ASSERT_FALSE(refused->empty());
    GTEST_SKIP() << "refused before launch: " << *refused;
  }
  if (v.family == "single_thread_blocks" && shape.work() > 1e9 &&
      v.plan(shape).grid.x < 64)
    GTEST_SKIP() << v.name() << " at " << shape.to_string()
                 << ": fewer than 64 single-thread blocks take tens of seconds here; this "
                    "variant is checked at the three smaller odd shapes";
  expect_matches_reference(v, shape);
}

std::string case_name(const ::testing::TestParamInfo<CorrectnessVariant::ParamType>& info) {
  return test_case_name(all_variants()[std::get<0>(info.param)], std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Correctness, CorrectnessVariant,
                         ::testing::Combine(::testing::ValuesIn(device_variant_indices()),
                                            ::testing::ValuesIn(kOddShapes)),
                         case_name);

// The rungs (tags ladder, tensor_core; sweep instances too) at shapes small enough for
// compute-sanitizer's racecheck. The first two have whole block tiles AND tails in every
// dimension: 300 = 2 x 128 + 44 rows, 270 and 264 = 2 x 128 + 14 / 8 columns, 72 and 76 = whole
// and partial k-tiles of 16 and 32; the second is aligned for 16-byte loads (N, K multiples of 4),
// so the vectorized, cp.async-16 and TMA paths run with tails as well; the first takes the
// element-wise paths. The third is whole tiles of every rung (block edges up to 256, k-tiles up to
// 32): the unchecked fast paths, and the sweep instances that take nothing else.
// scripts/sanitize.sh runs this suite under memcheck, racecheck and synccheck; the plain test
// run includes it too (ctest's gpu.Correctness filter).
const std::vector<GemmShape> kSanitizerShapes = {{300, 270, 72}, {300, 264, 76}, {512, 512, 64}};

std::vector<std::size_t> rung_variant_indices() {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < all_variants().size(); ++i) {
    const Variant& v = all_variants()[i];
    if (v.backend != Backend::cpu && (v.has_tag(tag::ladder) || v.has_tag(tag::tensor_core)))
      indices.push_back(i);
  }
  return indices;
}

INSTANTIATE_TEST_SUITE_P(CorrectnessTails, CorrectnessVariant,
                         ::testing::Combine(::testing::ValuesIn(rung_variant_indices()),
                                            ::testing::ValuesIn(kSanitizerShapes)),
                         case_name);

// Persistent grids (one block per SM walking the tiles): a shape with more tiles than the H100's
// 132 SMs for every configuration, so blocks run several tiles and the k-tile pipeline carries
// over from one tile to the next, with tails in M (2300 = 8 x 256 + 252), N (2052 = 16 x 128 + 4)
// and K (36 = 32 + 4). scripts/sanitize.sh runs this suite too.
const std::vector<GemmShape> kManyTiles = {{2300, 2052, 36}};

std::vector<std::size_t> persistent_variant_indices() {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < all_variants().size(); ++i)
    if (all_variants()[i].persistent_grid) indices.push_back(i);
  return indices;
}

class CorrectnessPersistentGrid : public CorrectnessVariant {};

TEST_P(CorrectnessPersistentGrid, WalksSeveralTilesPerBlock) {
  GEMM_REQUIRE_GPU();
  const Variant& v = all_variants()[std::get<0>(GetParam())];
  const GemmShape shape = std::get<1>(GetParam());
  if (auto refused = check_launch(v, shape, device().limits)) GTEST_SKIP() << *refused;
  std::int64_t bm = 0, bn = 0;
  for (const Param& p : v.param_fields) {
    if (p.key == "bm") bm = p.value;
    if (p.key == "bn") bn = p.value;
  }
  ASSERT_GT(bm * bn, 0) << v.name() << ": no bm/bn parameters";
  const std::int64_t tiles = ((shape.m + bm - 1) / bm) * ((shape.n + bn - 1) / bn);
  ASSERT_LT(v.plan(shape).grid.count(), tiles) << "every block would run a single tile";
  expect_matches_reference(v, shape);
}

INSTANTIATE_TEST_SUITE_P(CorrectnessPersistent, CorrectnessPersistentGrid,
                         ::testing::Combine(::testing::ValuesIn(persistent_variant_indices()),
                                            ::testing::ValuesIn(kManyTiles)),
                         case_name);

// The tuned rung's configuration of every size, each in the modes the tail shapes need: at the
// test shapes `tuned` itself runs only the smallest size's configuration (it picks by size), and
// the sweep's instances take whole tiles only. Besides the tail shapes, one with a single
// partial k-tile: fewer k-tiles than the pipelines keep in flight. scripts/sanitize.sh runs this
// suite too.
const std::vector<GemmShape> kTunedConfigShapes = {{300, 270, 72}, {300, 264, 76}, {129, 131, 5}};

const std::vector<Variant>& tuned_configs() {
  static const std::vector<Variant> configs = tuned_configurations();
  return configs;
}

class CorrectnessTunedConfig
    : public ::testing::TestWithParam<std::tuple<std::size_t, GemmShape>> {};

TEST_P(CorrectnessTunedConfig, MatchesReference) {
  GEMM_REQUIRE_GPU();
  const Variant& v = tuned_configs()[std::get<0>(GetParam())];
  const GemmShape shape = std::get<1>(GetParam());
  if (auto refused = check_launch(v, shape, device().limits)) GTEST_SKIP() << *refused;
  expect_matches_reference(v, shape);
}

std::vector<std::size_t> tuned_config_indices() {
  std::vector<std::size_t> indices(tuned_configs().size());
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  return indices;
}

INSTANTIATE_TEST_SUITE_P(
    CorrectnessTunedConfigs, CorrectnessTunedConfig,
    ::testing::Combine(::testing::ValuesIn(tuned_config_indices()),
                       ::testing::ValuesIn(kTunedConfigShapes)),
    [](const ::testing::TestParamInfo<CorrectnessTunedConfig::ParamType>& info) {
      return test_case_name(tuned_configs()[std::get<0>(info.param)], std::get<1>(info.param));
    });

// --- TF32 rounding ----------------------------------------------------------------------------
// x = 1 + 2^-11 + 2^-12 lies 3/4 of a TF32 ulp above 1: its nearest TF32 (cvt.rna) is 1 + 2^-10,
// its truncation 1. With one operand all x and the other all ones, every element of C is
// K (1 + 2^-10) where the kernel rounds that operand and K where the tensor core truncates it,
// exactly (the partial sums need at most 18 significant bits).
constexpr float kBetweenTf32s = 1.0f + 0x1p-11f + 0x1p-12f;
const GemmShape kRoundingShape{256, 256, 256};  // whole tiles of every TF32 rung

// C of v at kRoundingShape with A all `a` and B all `b`.
std::vector<float> product_of_constants(const Variant& v, float a, float b) {
  const GemmShape s = kRoundingShape;
  const std::vector<float> host_a(s.m * s.k, a), host_b(s.k * s.n, b);
  DeviceBuffer dev_a(host_a.size() * sizeof(float)), dev_b(host_b.size() * sizeof(float));
  DeviceBuffer dev_c(std::size_t(s.m * s.n) * sizeof(float));
  DeviceBuffer workspace(v.workspace_bytes(s));
  GEMM_CUDA_CHECK(cudaMemcpy(dev_a.get(), host_a.data(), dev_a.bytes(), cudaMemcpyHostToDevice));
  GEMM_CUDA_CHECK(cudaMemcpy(dev_b.get(), host_b.data(), dev_b.bytes(), cudaMemcpyHostToDevice));
  if (workspace.bytes()) GEMM_CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
  Operands ops;
  ops.a = dev_a.get();
  ops.b = dev_b.get();
  ops.c = dev_c.get();
  ops.shape = s;
  ops.workspace = workspace.get();
  ops.workspace_bytes = workspace.bytes();
  v.run(ops, test_stream());
  GEMM_CUDA_CHECK(cudaStreamSynchronize(test_stream()));
  std::vector<float> c(s.m * s.n);
  GEMM_CUDA_CHECK(cudaMemcpy(c.data(), dev_c.get(), dev_c.bytes(), cudaMemcpyDeviceToHost));
  return c;
}

// Whether v rounds the operand that is all x (true) or lets the tensor core truncate it, read
// from C; nothing when C is neither (printed).
std::optional<bool> rounds(const Variant& v, bool operand_a) {
  const double k = double(kRoundingShape.k);
  const std::vector<float> c = operand_a ? product_of_constants(v, kBetweenTf32s, 1.0f)
                                         : product_of_constants(v, 1.0f, kBetweenTf32s);
  int rounded = 0, truncated = 0;
  for (float e : c) {
    rounded += e == float(k * (1 + 0x1p-10));
    truncated += e == float(k);
  }
  if (rounded == int(c.size())) return true;
  if (truncated == int(c.size())) return false;
  std::cout << v.name() << ": C[0] = " << c[0] << ", neither " << k * (1 + 0x1p-10) << " nor " << k
            << " everywhere\n";
  return std::nullopt;
}

TEST(CorrectnessTf32Rounding, EachRungRoundsOrTruncatesTheOperandsItSaysItDoes) {
  GEMM_REQUIRE_GPU();
  int checked = 0;
  for (const Variant& v : all_variants()) {
    if (v.compute != Compute::tf32 || !v.has_tag(tag::tensor_core)) continue;
    if (check_launch(v, kRoundingShape, device().limits)) continue;  // sm_90a code elsewhere
    // What the families say: mma_tf32 and mma_tf32_pipelined round A and B (its truncating
    // instance neither); the wgmma rungs round their register operand, B, and leave the TMA
    // operand, A, to the tensor core's truncation.
    const bool wgmma = v.family.rfind("wgmma", 0) == 0;
    const bool truncating = param(v, "truncated") == 1;
    EXPECT_EQ(rounds(v, true), std::optional<bool>(!wgmma && !truncating)) << v.name() << ": A";
    EXPECT_EQ(rounds(v, false), std::optional<bool>(!truncating)) << v.name() << ": B";
    ++checked;
  }
  EXPECT_GE(checked, 2) << "mma_tf32 and mma_tf32_pipelined run on every GPU with TF32";
  // What cuBLAS's TF32 path does with the same operands, for the record.
  const Variant& cublas = find_variant("cublas_tf32", Precision::fp32);
  auto said = [](std::optional<bool> r) { return !r ? "neither" : *r ? "rounded" : "truncated"; };
  std::cout << "[ info     ] cublas_tf32: A " << said(rounds(cublas, true)) << ", B "
            << said(rounds(cublas, false)) << "\n";
}

TEST(CorrectnessReference, DeviceDoubleDoubleMatchesHost) {
  GEMM_REQUIRE_GPU();
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    TestData& data = test_data(p, {1023, 517, 2049});
    DeviceBuffer ref(data.ref().size() * sizeof(double));
    device_reference_gemm(p, data.dev_a.get(), data.dev_b.get(), static_cast<double*>(ref.get()),
                          data.shape, test_stream());
    GEMM_CUDA_CHECK(cudaStreamSynchronize(test_stream()));
    std::vector<double> got(data.ref().size());
    GEMM_CUDA_CHECK(cudaMemcpy(got.data(), ref.get(), ref.bytes(), cudaMemcpyDeviceToHost));
    // Both are accurate to about 2^-60 relative; a 1e-13 normwise bound is far above that.
    const Verification r = verify(Precision::fp64, got.data(), data.ref(), 1e-13);
    EXPECT_TRUE(r.passed) << to_string(p) << ": " << r.max_rel_err;
  }
}

// The benchmarks make their inputs on the device; a host copy (CPU variants, end-to-end copies,
// a run without a GPU) must hold the same values bit for bit. Odd counts, several blocks' worth
// and more elements than the fill's grid has threads (its stride loop).
TEST(CorrectnessReference, DeviceInputsEqualHostInputs) {
  GEMM_REQUIRE_GPU();
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    for (std::size_t count : {std::size_t(1), std::size_t(1023), std::size_t(4096 * 256 * 3 + 7)}) {
      const std::size_t bytes = count * element_size(p);
      std::vector<unsigned char> host(bytes), back(bytes);
      fill_random(p, host.data(), count, 0xC0FFEEull + count);
      DeviceBuffer dev(bytes);
      fill_random_on_device(p, dev.get(), count, 0xC0FFEEull + count, test_stream());
      GEMM_CUDA_CHECK(cudaStreamSynchronize(test_stream()));
      GEMM_CUDA_CHECK(cudaMemcpy(back.data(), dev.get(), bytes, cudaMemcpyDeviceToHost));
      EXPECT_TRUE(back == host) << to_string(p) << ", " << count << " elements";
    }
  }
}

// The benchmarks verify on the device; the host's verify() is the definition. Both see the same
// doubles, so every field agrees exactly: an exact output (passes), then a planted error of known
// size (fails), then unwritten elements as well (fails).
TEST(CorrectnessReference, DeviceVerificationAgreesWithHost) {
  GEMM_REQUIRE_GPU();
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const std::size_t count = 1000003;  // not a multiple of any block or grid
    std::vector<double> reference(count);
    std::vector<unsigned char> c(count * element_size(p));
    const auto set = [&](std::size_t i, double value) {
      if (p == Precision::fp32)
        reinterpret_cast<float*>(c.data())[i] = float(value);
      else
        reinterpret_cast<double*>(c.data())[i] = value;
    };
    for (std::size_t i = 0; i < count; ++i) {
      reference[i] = std::ldexp(double((i * 7919) % 1001) - 500.0, -9);  // exact in FP32
      set(i, reference[i]);
    }
    const std::size_t planted = 765432;
    const double error = 0.25;  // exact in both precisions; values are below 1 in magnitude
    const double tolerance = 1e-3;
    DeviceBuffer dev_c(c.size()), dev_ref(count * sizeof(double));
    GEMM_CUDA_CHECK(cudaMemcpy(dev_ref.get(), reference.data(), dev_ref.bytes(), cudaMemcpyHostToDevice));
    struct Case {
      bool error;
      std::int64_t unwritten;
    };
    for (const Case k : {Case{false, 0}, Case{true, 0}, Case{true, 3}}) {
      if (k.error) set(planted, reference[planted] + error);
      for (std::int64_t j = 0; j < k.unwritten; ++j) fill_poison(p, c.data() + (17 + 99991 * j) * element_size(p), 1);
      GEMM_CUDA_CHECK(cudaMemcpy(dev_c.get(), c.data(), c.size(), cudaMemcpyHostToDevice));
      const Verification host = verify(p, c.data(), reference, tolerance);
      const Verification dev = verify_on_device(p, dev_c.get(), static_cast<const double*>(dev_ref.get()),
                                                count, tolerance, test_stream());
      const std::string what = to_string(p) + (k.error ? ", planted error" : ", exact") +
                               (k.unwritten ? ", unwritten elements" : "");
      EXPECT_EQ(dev.unwritten, k.unwritten) << what;
      EXPECT_EQ(dev.max_abs_err, k.error ? error : 0.0) << what;
      EXPECT_EQ(dev.passed, !k.error && k.unwritten == 0) << what;
      EXPECT_EQ(dev.tolerance, tolerance) << what;
      EXPECT_EQ(dev.unwritten, host.unwritten) << what;
      EXPECT_EQ(dev.max_abs_err, host.max_abs_err) << what;
      EXPECT_EQ(dev.max_abs_ref, host.max_abs_ref) << what;
      EXPECT_EQ(dev.max_rel_err, host.max_rel_err) << what;
      EXPECT_EQ(dev.passed, host.passed) << what;
      EXPECT_EQ(dev.tolerance, host.tolerance) << what;
    }
  }
}

TEST(CorrectnessLaunchCheck, Tile64IsRefusedOnThisDevice) {
  GEMM_REQUIRE_GPU();
  const auto why = check_launch(find_variant("shared_dynamic/tile:64", Precision::fp32),
                                {512, 512, 512}, device().limits);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("4096 threads per block"), std::string::npos) << *why;
}

}  // namespace
}  // namespace gemm::test
