#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "reference.h"
#include "reference/random_inputs.h"
#include "variant.h"

namespace gemm {
namespace {

TEST(CpuReference, SmallProductByHand) {
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  const auto c = cpu_reference_gemm(Precision::fp64, a.data(), b.data(), {2, 2, 3});
  EXPECT_EQ(c, (std::vector<double>{58, 64, 139, 154}));
}

TEST(CpuReference, Fp32InputsAreAccumulatedExactlyEnough) {
  // 1 + 2^-30 - 1 loses the small term in float arithmetic but not in the double accumulator.
  const std::vector<float> a = {1.0f, std::ldexp(1.0f, -15), -1.0f};
  const std::vector<float> b = {1.0f, std::ldexp(1.0f, -15), 1.0f};
  const auto c = cpu_reference_gemm(Precision::fp32, a.data(), b.data(), {1, 1, 3});
  EXPECT_EQ(c[0], std::ldexp(1.0, -30));
}

TEST(CpuSerial, MatchesReferenceOnOddShapes) {
  for (const GemmShape s : {GemmShape{1, 1, 1}, GemmShape{7, 13, 5}, GemmShape{33, 1, 70}}) {
    for (Precision p : {Precision::fp32, Precision::fp64}) {
      std::vector<double> a(std::size_t(s.m * s.k)), b(std::size_t(s.k * s.n)),
          c(std::size_t(s.m * s.n));  // sized for doubles; FP32 uses the first half
      fill_random(p, a.data(), a.size(), 11);
      fill_random(p, b.data(), b.size(), 12);
      fill_poison(p, c.data(), c.size());
      cpu_serial_gemm(p, a.data(), b.data(), c.data(), s);
      const auto ref = cpu_reference_gemm(p, a.data(), b.data(), s);
      const double u = p == Precision::fp32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
      const Verification v = verify(p, c.data(), ref, verification_tolerance(u, s.k));
      EXPECT_TRUE(v.passed) << s.to_string() << " " << to_string(p) << " " << v.max_rel_err;
    }
  }
}

// The inputs' contract: a function of (seed, index) in [-1, 1], never zero, different for
// another seed, and uniform enough that the moments of 2^16 values land where U(-1, 1)'s do
// (mean 0, variance 1/3; five standard errors of slack: 5 * sqrt(1/3 / n) and
// 5 * sqrt(4/45 / n)).
TEST(RandomInputs, UniformNonZeroAndAFunctionOfSeedAndIndex) {
  constexpr std::size_t n = 1 << 16;
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    std::vector<double> a(n), again(n), other(n);  // doubles hold either precision
    fill_random(p, a.data(), n, 5);
    fill_random(p, again.data(), n, 5);
    fill_random(p, other.data(), n, 6);
    auto value = [p](const std::vector<double>& v, std::size_t i) {
      return p == Precision::fp32 ? double(reinterpret_cast<const float*>(v.data())[i]) : v[i];
    };
    double sum = 0, sum_sq = 0;
    std::size_t same_as_other = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = value(a, i);
      ASSERT_NE(x, 0.0);
      ASSERT_GE(x, -1.0);
      ASSERT_LE(x, 1.0);
      EXPECT_EQ(x, value(again, i));
      same_as_other += x == value(other, i);
      sum += x;
      sum_sq += x * x;
    }
    EXPECT_LT(same_as_other, 4u) << to_string(p);
    EXPECT_NEAR(sum / n, 0.0, 5 * std::sqrt(1.0 / 3 / n)) << to_string(p);
    EXPECT_NEAR(sum_sq / n, 1.0 / 3, 5 * std::sqrt(4.0 / 45 / n)) << to_string(p);
    // Element i is random_input(seed, i), whatever came before it: what lets the GPU fill
    // the same values in parallel.
    for (std::size_t i : {std::size_t(0), n / 3, n - 1}) {
      const double expected = p == Precision::fp32 ? double(float(random_input(5, i))) : random_input(5, i);
      EXPECT_EQ(value(a, i), expected) << to_string(p) << " element " << i;
    }
  }
}

TEST(Verify, PoisonedElementsFail) {
  std::vector<float> c = {1.0f, 2.0f, 3.0f};
  fill_poison(Precision::fp32, c.data() + 1, 1);
  const Verification v = verify(Precision::fp32, c.data(), {1.0, 2.0, 3.0}, 1e-3);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.unwritten, 1);
}

TEST(Verify, WrongValueFailsAndRightValuePasses) {
  const std::vector<double> ref = {10.0, -20.0};
  const std::vector<double> good = {10.0, -20.0 + 1e-12}, bad = {10.0, -19.0};
  EXPECT_TRUE(verify(Precision::fp64, good.data(), ref, 1e-10).passed);
  const Verification v = verify(Precision::fp64, bad.data(), ref, 1e-10);
  EXPECT_FALSE(v.passed);
  EXPECT_DOUBLE_EQ(v.max_rel_err, 1.0 / 20.0);
}

TEST(Verify, ToleranceGrowsWithKAndIsCapped) {
  const double u32 = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(verification_tolerance(u32, 1), 4 * u32);
  EXPECT_DOUBLE_EQ(verification_tolerance(u32, 1000), 2000 * u32);
  EXPECT_DOUBLE_EQ(verification_tolerance(std::ldexp(1.0, -11), 4096), 1e-2);
}

TEST(FillRandom, NeverZeroAndInRange) {
  std::vector<float> x(100000);
  fill_random(Precision::fp32, x.data(), x.size(), 3);
  for (float v : x) {
    EXPECT_NE(v, 0.0f);
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}

}  // namespace
}  // namespace gemm
