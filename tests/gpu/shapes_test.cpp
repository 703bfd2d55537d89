// The kernels for shapes beyond large squares (kernels/shapes/) and the dispatcher
// (kernels/dispatch/): split sums that are the same bit for bit in every run, workspaces whose
// counters every run leaves at zero, the workspace contract's refusals, each schedule's both
// ways of finishing a tile, and the counters that follow from a split (the partial tiles'
// stores, the grid's waves). Every variant also runs the generic correctness suite
// (correctness_test.cpp) at its odd shapes and tails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "counter_test_support.h"
#include "cuda_check.h"
#include "dispatch/shape_model.h"
#include "dispatch/timed_choice.h"
#include "gpu_test_support.h"

namespace gemm::test {
namespace {

// The workspace a variant asks for at a shape, zeroed (the contract's starting state).
struct Scratch {
  DeviceBuffer buffer;
  std::size_t bytes = 0;
  Scratch(const Variant& v, const GemmShape& s) : bytes(v.workspace_bytes(s)) {
    if (bytes == 0) return;
    buffer = DeviceBuffer(bytes);
    GEMM_CUDA_CHECK(cudaMemset(buffer.get(), 0, bytes));
  }
};

// The bytes a wgmma split keeps before its split's counters: the padded copies of A (K % 4 != 0:
// M x K rounded up to 4) and B (N % 4 != 0: K x N rounded up), each 256-byte aligned
// (tensor/tma_padded.cuh); 0 for the other families.
std::size_t padded_copies_bytes(const Variant& v, const GemmShape& s) {
  if (v.family.find("wgmma") == std::string::npos) return 0;
  const auto round4 = [](std::int64_t x) { return (x + 3) / 4 * 4; };
  const auto aligned = [](std::int64_t bytes) { return std::size_t((bytes + 255) / 256 * 256); };
  std::size_t bytes = 0;
  if (s.k % 4 != 0) bytes += aligned(s.m * round4(s.k) * 4);
  if (s.n % 4 != 0) bytes += aligned(s.k * round4(s.n) * 4);
  return bytes;
}

Operands operands_of(TestData& d, Scratch& w) {
  Operands ops{d.dev_a.get(), d.dev_b.get(), d.dev_c.get(), d.shape};
  ops.workspace = w.buffer.get();
  ops.workspace_bytes = w.bytes;
  return ops;
}

std::vector<unsigned char> run_once(const Variant& v, TestData& d, Scratch& w) {
  GEMM_CUDA_CHECK(cudaMemsetAsync(d.dev_c.get(), 0xFF, d.dev_c.bytes(), test_stream()));
  v.run(operands_of(d, w), test_stream());
  GEMM_CUDA_CHECK(cudaStreamSynchronize(test_stream()));
  std::vector<unsigned char> c(d.dev_c.bytes());
  GEMM_CUDA_CHECK(cudaMemcpy(c.data(), d.dev_c.get(), c.size(), cudaMemcpyDeviceToHost));
  return c;
}

struct Case {
  const char* variant;
  Precision precision;
  GemmShape shape;
};

// Shapes with tails in M, N and K where the split is real: one tile with many slices (the grid
// resident at once: every slice's block sums a share), many tiles with a fixed split (more blocks
// than the GPU holds: the last slice to arrive sums), decode rows, and a partial last wave for
// stream-K.
const std::vector<Case> kSplitCases = {
    {"split_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1/slices:0",
     Precision::fp32, {130, 70, 8195}},
    {"split_k/bm:64/bn:128/bk:16/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:3/slices:16",
     Precision::fp32, {1000, 1003, 700}},
    {"split_k/bm:64/bn:64/bk:8/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:4/slices:0",
     Precision::fp64, {67, 129, 4097}},
    {"split_k_mma/bm:128/bn:128/bk:32/wm:64/wn:32/stages:3/slices:0", Precision::fp32,
     {130, 70, 8196}},
    {"split_k_mma/bm:32/bn:128/bk:16/wm:16/wn:64/stages:4/slices:0", Precision::fp64,
     {31, 300, 4097}},
    {"stream_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1",
     Precision::fp32, {2300, 2052, 1030}},
    {"stream_k/mma:1/bm:128/bn:128/bk:16/wm:64/wn:32/stages:4", Precision::fp64,
     {2300, 2052, 1030}},
    // Over the wgmma mainloop: K and N not multiples of 4 (padded operand copies before the
    // split's workspace), the consumer warpgroups finishing the tiles by themselves.
    {"split_k_wgmma/bm:128/bn:128/bk:32/stages:4/slices:0", Precision::fp32, {130, 70, 8195}},
    {"split_k_wgmma/bm:64/bn:128/bk:32/stages:6/slices:16", Precision::fp32, {1000, 1003, 700}},
    {"split_k_wgmma/bm:64/bn:64/bk:32/stages:8/slices:0", Precision::fp32, {96, 1024, 4100}},
    {"stream_k_wgmma/bm:128/bn:128/bk:32/stages:4", Precision::fp32, {2300, 2052, 1030}},
    {"stream_k_wgmma/bm:64/bn:128/bk:32/stages:6", Precision::fp32, {200, 5120, 5121}},
    {"gemv/warps:4/vectors:1/unroll:4/ks:0", Precision::fp32, {1, 4100, 4097}},
    {"gemv/warps:4/vectors:1/unroll:4/ks:0", Precision::fp64, {13, 1000, 5000}},
    {"gemv/warps:4/vectors:1/unroll:4/ks:16", Precision::fp32, {16, 4096, 4096}},
    // Eight rows' sums take more than 128 registers a thread: one 8-warp block per SM. The
    // down projection's 32 column blocks of 128 then take 4 slices on 132 SMs (the up
    // projection, 8 x 14336 x 4096, is 112 column blocks: one wave already, no split).
    {"gemv/warps:8/vectors:1/unroll:4/ks:0", Precision::fp32, {8, 4096, 14336}},
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = to_string(info.param.precision) + "_" + info.param.variant + "_" +
                     info.param.shape.to_string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class SplitSums : public ::testing::TestWithParam<Case> {};

TEST_P(SplitSums, AreCorrectAndTheSameBitForBitInEveryRun) {
  GEMM_REQUIRE_GPU();
  const Case& c = GetParam();
  const Variant& v = find_variant(c.variant, c.precision);
  if (auto refused = check_launch(v, c.shape, device().limits)) GTEST_SKIP() << *refused;
  ASSERT_GT(v.workspace_bytes(c.shape), padded_copies_bytes(v, c.shape))
      << "the case must split its sums";
  TestData& d = test_data(c.precision, c.shape);
  Scratch w(v, c.shape);
  const std::vector<unsigned char> first = run_once(v, d, w);
  const Verification r = verify(v.precision, first.data(), d.ref(),
                                verification_tolerance(v.unit_roundoff, c.shape.k));
  EXPECT_EQ(r.unwritten, 0);
  EXPECT_TRUE(r.passed) << "max_rel_err " << r.max_rel_err << " > " << r.tolerance;
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(std::memcmp(first.data(), run_once(v, d, w).data(), first.size()), 0)
        << "run " << run + 2 << " differs from the first";
}

TEST_P(SplitSums, LeaveTheirCountersAtZero) {
  GEMM_REQUIRE_GPU();
  const Case& c = GetParam();
  const Variant& v = find_variant(c.variant, c.precision);
  if (auto refused = check_launch(v, c.shape, device().limits)) GTEST_SKIP() << *refused;
  TestData& d = test_data(c.precision, c.shape);
  Scratch w(v, c.shape);
  run_once(v, d, w);
  // The counters come first in the workspace (shapes/split_launch.cuh), 2 per output tile (per
  // column block for gemv); a run must leave every one at zero for the next (variant.h). The
  // wgmma splits keep the padded copies of A and B before them.
  const std::int64_t tiles =
      v.family == "gemv"
          ? (c.shape.n + 32 * param(v, "vectors") * 16 / std::int64_t(element_size(c.precision)) - 1) /
                (32 * param(v, "vectors") * 16 / std::int64_t(element_size(c.precision)))
          : ((c.shape.m + param(v, "bm") - 1) / param(v, "bm")) *
                ((c.shape.n + param(v, "bn") - 1) / param(v, "bn"));
  const std::size_t offset = padded_copies_bytes(v, c.shape);
  std::vector<unsigned> counters(std::size_t(2 * tiles));
  ASSERT_LE(offset + counters.size() * sizeof(unsigned), w.bytes);
  GEMM_CUDA_CHECK(cudaMemcpy(counters.data(), static_cast<unsigned char*>(w.buffer.get()) + offset,
                             counters.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < counters.size(); ++i) ASSERT_EQ(counters[i], 0u) << "counter " << i;
}

INSTANTIATE_TEST_SUITE_P(CorrectnessSplit, SplitSums, ::testing::ValuesIn(kSplitCases), case_name);

// The same at sizes compute-sanitizer's racecheck takes in seconds (scripts/sanitize.sh with
// SANITIZE_FILTER=CorrectnessSplitTails/*): tails everywhere, slices that all finish in one
// block or every block, stream-K sharing every tile.
const std::vector<Case> kSanitizerCases = {
    {"split_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1/slices:0",
     Precision::fp32, {131, 67, 1030}},
    {"split_k/bm:64/bn:128/bk:16/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:3/slices:4",
     Precision::fp32, {300, 270, 190}},
    {"split_k_mma/bm:64/bn:128/bk:32/wm:32/wn:64/stages:4/slices:0", Precision::fp32,
     {70, 300, 1001}},
    {"split_k_mma/bm:64/bn:64/bk:16/wm:32/wn:32/stages:4/slices:0", Precision::fp64,
     {70, 130, 1001}},
    {"stream_k/bm:128/bn:128/bk:32/wm:32/wn:64/tm:8/tn:8/stages:3/group:0/minb:2/mbar:1",
     Precision::fp32, {700, 700, 2000}},
    {"stream_k/mma:1/bm:128/bn:128/bk:32/wm:64/wn:32/stages:3", Precision::fp32,
     {700, 699, 2001}},
    {"split_k_wgmma/bm:128/bn:128/bk:32/stages:4/slices:0", Precision::fp32, {131, 67, 1030}},
    {"split_k_wgmma/bm:64/bn:128/bk:32/stages:6/slices:4", Precision::fp32, {300, 270, 190}},
    {"stream_k_wgmma/bm:128/bn:128/bk:32/stages:4", Precision::fp32, {700, 699, 2001}},
    {"gemv/warps:4/vectors:1/unroll:4/ks:0", Precision::fp32, {5, 300, 1001}},
    {"gemv/warps:4/vectors:1/unroll:4/ks:4", Precision::fp64, {3, 260, 1000}},
};
INSTANTIATE_TEST_SUITE_P(CorrectnessSplitTails, SplitSums, ::testing::ValuesIn(kSanitizerCases),
                         case_name);

TEST(CorrectnessWorkspace, AMissingWorkspaceIsRefusedWithItsSizeNotACrash) {
  GEMM_REQUIRE_GPU();
  const Case& c = kSplitCases.front();
  const Variant& v = find_variant(c.variant, c.precision);
  if (auto refused = check_launch(v, c.shape, device().limits)) GTEST_SKIP() << *refused;
  TestData& d = test_data(c.precision, c.shape);
  const Operands ops{d.dev_a.get(), d.dev_b.get(), d.dev_c.get(), d.shape};
  try {
    v.run(ops, test_stream());
    FAIL() << "ran without the workspace it needs";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs a workspace of"), std::string::npos) << e.what();
  }
}

// Off the table, on a GPU, auto's choice before its first run at a shape is the candidate its
// model predicts fastest, scaled from its times at the two nearest sweep shapes of the same kind
// (kernels/dispatch/shape_model.h).
TEST(DispatchModel, AShapeOffTheTableIsChosenByTheModelFromTwoSweepShapesOfItsKind) {
  GEMM_REQUIRE_GPU();
  const struct {
    const char* family;
    Precision precision;
    GemmShape shape;
  } cases[] = {{"auto", Precision::fp32, {48, 14336, 4096}},
               {"auto_tf32", Precision::fp32, {96, 28672, 8192}},
               {"auto", Precision::fp64, {3000, 3000, 3000}},
               {"auto", Precision::fp64, {7, 4096, 14336}}};
  for (const auto& c : cases) {
    const Variant& v = find_variant(c.family, c.precision);
    const std::string choice = v.choice(c.shape);
    SCOPED_TRACE(choice);
    const std::size_t at = choice.find("\"rule\": \"model: ");
    ASSERT_NE(at, std::string::npos);
    // "... scaled from its times at AxBxC and DxExF": two shapes, each of the shape's kind.
    const std::size_t from = choice.find("times at ", at) + 9;
    const std::string shapes = choice.substr(from, choice.find('"', from) - from);
    long long m1 = 0, n1 = 0, k1 = 0, m2 = 0, n2 = 0, k2 = 0;
    ASSERT_EQ(std::sscanf(shapes.c_str(), "%lldx%lldx%lld and %lldx%lldx%lld", &m1, &n1, &k1, &m2, &n2,
                          &k2),
              6);
    const int kind = dispatch::shape_kind(c.shape.m, c.shape.n);
    EXPECT_EQ(dispatch::shape_kind(m1, n1), kind);
    EXPECT_EQ(dispatch::shape_kind(m2, n2), kind);
    EXPECT_FALSE(check_launch(v, c.shape, device().limits).has_value());
  }
}

// The number after `key` in a choice's text, or NaN.
double number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  return at == std::string::npos ? NAN : std::strtod(text.c_str() + at + key.size(), nullptr);
}

// The first run at such a shape times the model's fastest predictions on its operands and keeps
// the fastest (kernels/dispatch/timed_choice.h): the choice says so, names a candidate predicted
// no faster than the model's first (they are ranked by prediction), stays settled, and every run
// before and after is verified, the runs after on the workspace the timing left behind. Shapes of
// each kind (a few rows, a few columns, neither) and K not a multiple of 4.
TEST(DispatchModel, TheFirstRunTimesTheModelsFastestPredictionsAndKeepsTheFastest) {
  GEMM_REQUIRE_GPU();
  const struct {
    const char* family;
    Precision precision;
    GemmShape shape;
  } cases[] = {{"auto", Precision::fp32, {333, 4444, 555}},
               {"auto", Precision::fp32, {1, 4096, 4093}},
               {"auto", Precision::fp32, {4097, 1, 4096}},
               {"auto_tf32", Precision::fp32, {200, 5120, 5120}},
               {"auto", Precision::fp64, {1234, 4321, 2048}}};
  for (const auto& c : cases) {
    const Variant& v = find_variant(c.family, c.precision);
    const std::string before = v.choice(c.shape);
    SCOPED_TRACE(before);
    const double first_prediction = number_after(before, "\"rule\": \"model: ");
    ASSERT_GT(first_prediction, 0.0);
    TestData& d = test_data(c.precision, c.shape);
    const Verification first = run_and_verify(v, d);
    EXPECT_TRUE(first.passed) << "max_rel_err " << first.max_rel_err << ", unwritten " << first.unwritten;
    const std::string after = v.choice(c.shape);
    SCOPED_TRACE(after);
    const double timed_ms = number_after(after, "\"rule\": \"timed: ");
    EXPECT_GT(timed_ms, 0.0);
    EXPECT_TRUE(std::isfinite(timed_ms));
    const double timed = number_after(after, "kept from the model's ");
    EXPECT_GE(timed, 2.0);
    EXPECT_LE(timed, double(dispatch::kTimedCandidates));
    EXPECT_GE(number_after(after, "(model: "), first_prediction);
    for (int again = 0; again < 2; ++again) {
      const Verification next = run_and_verify(v, d);
      EXPECT_TRUE(next.passed) << "max_rel_err " << next.max_rel_err << ", unwritten " << next.unwritten;
      EXPECT_EQ(v.choice(c.shape), after);
    }
  }
}

// Timing synchronizes, which a stream being captured into a CUDA graph must not do: a first run
// under capture keeps the fastest prediction for good, untimed, so that the graph and every
// direct run after it use one variant and one workspace layout. The graph computes the right
// product before and after a direct run on the same workspace.
TEST(DispatchModel, AFirstRunUnderGraphCaptureKeepsTheFastestPredictionForGood) {
  GEMM_REQUIRE_GPU();
  const Variant& v = find_variant("auto", Precision::fp32);
  const GemmShape shape{640, 640, 640};
  const std::string before = v.choice(shape);
  ASSERT_NE(before.find("\"rule\": \"model: "), std::string::npos) << before;
  TestData& d = test_data(Precision::fp32, shape);
  const Operands ops = operands_for(v, d);
  cudaStream_t stream = test_stream();
  cudaGraph_t graph = nullptr;
  GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  v.run(ops, stream);
  GEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  const std::string captured = v.choice(shape);
  EXPECT_NE(captured.find("(first run under graph capture: not timed)"), std::string::npos) << captured;
  cudaGraphExec_t exec = nullptr;
  GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const auto replay_and_verify = [&] {
    GEMM_CUDA_CHECK(cudaMemsetAsync(d.dev_c.get(), 0xFF, d.dev_c.bytes(), stream));
    GEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return verify_device_output(v, d);
  };
  const Verification first = replay_and_verify();
  EXPECT_TRUE(first.passed) << "max_rel_err " << first.max_rel_err << ", unwritten " << first.unwritten;
  const Verification direct = run_and_verify(v, d);
  EXPECT_TRUE(direct.passed) << "max_rel_err " << direct.max_rel_err << ", unwritten " << direct.unwritten;
  EXPECT_EQ(v.choice(shape), captured);  // not timed by the direct run either
  const Verification again = replay_and_verify();
  EXPECT_TRUE(again.passed) << "max_rel_err " << again.max_rel_err << ", unwritten " << again.unwritten;
  GEMM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
}

// Less workspace than auto asks for (the largest any candidate it would time needs) is refused
// before anything runs, as every variant refuses less than it asks for: running the fastest
// prediction there and timing the candidates later on another caller's buffer would switch the
// layout under the first. The refusal settles nothing; a run with the workspace asked for times.
TEST(DispatchModel, AWorkspaceSmallerThanAskedForIsRefusedAndSettlesNothing) {
  GEMM_REQUIRE_GPU();
  const Variant& v = find_variant("auto", Precision::fp32);
  // N = 1: gemv_cols needs no workspace; the split-K tiles among the candidates do.
  const GemmShape shape{4099, 1, 4096};
  const std::size_t asked = v.workspace_bytes(shape);
  ASSERT_GT(asked, 0u);
  TestData& d = test_data(Precision::fp32, shape);
  const Operands without{d.dev_a.get(), d.dev_b.get(), d.dev_c.get(), d.shape};
  try {
    v.run(without, test_stream());
    FAIL() << "ran with no workspace where " << asked << " bytes were asked for";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs a workspace of " + std::to_string(asked)), std::string::npos)
        << e.what();
  }
  EXPECT_NE(v.choice(shape).find("\"rule\": \"model: "), std::string::npos) << v.choice(shape);
  EXPECT_TRUE(run_and_verify(v, d).passed);
  EXPECT_NE(v.choice(shape).find("\"rule\": \"timed: "), std::string::npos) << v.choice(shape);
}

}  // namespace
}  // namespace gemm::test
