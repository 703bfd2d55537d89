// How `auto` times the model's candidates at the first run off its table
// (kernels/dispatch/timed_choice.h): how many launches make a sample, how many rounds fit the
// budget, and which candidate's median wins. Each expected value follows from the constants and
// the inputs written beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "dispatch/timed_choice.h"

namespace gemm::dispatch {
namespace {

TEST(TimedChoice, ASampleLastsAtLeastTheEventsCanResolveWithABoundedBatch) {
  // 0.05 ms per sample: a 0.01 ms kernel five times, a 0.02 ms one three (ceil 2.5).
  EXPECT_EQ(launches_per_sample(0.01), 5);
  EXPECT_EQ(launches_per_sample(0.02), 3);
  // A kernel as long as the sample or longer: one launch.
  EXPECT_EQ(launches_per_sample(kSampleMs), 1);
  EXPECT_EQ(launches_per_sample(3.0), 1);
  // A microsecond kernel would need 50; a near-empty one stops at the cap.
  EXPECT_EQ(launches_per_sample(0.001), 50);
  EXPECT_EQ(launches_per_sample(1e-6), kMaxLaunchesPerSample);
  // No prediction (or a nonsense one): one launch, never zero or a negative count.
  EXPECT_EQ(launches_per_sample(0.0), 1);
  EXPECT_EQ(launches_per_sample(-1.0), 1);
  EXPECT_EQ(launches_per_sample(NAN), 1);
}

TEST(TimedChoice, RoundsFillTheBudgetBetweenOneAndTheMaximum) {
  // Four candidates of 0.2 ms: a round of 0.8 ms, 250 would fit the 200 ms; five are taken.
  EXPECT_EQ(timing_rounds(0.8), kMaxRounds);
  // A round of 50 ms: four fit.
  EXPECT_EQ(timing_rounds(50.0), 4);
  // A round longer than the budget still gets one timed round.
  EXPECT_EQ(timing_rounds(1000.0), 1);
  EXPECT_EQ(timing_rounds(0.0), kMaxRounds);
}

TEST(TimedChoice, TheShortestMedianWinsNotTheShortestSample) {
  // Candidate 0 has the single shortest sample (0.5) but a median of 1.0; candidate 1's median
  // is 0.9, 10% shorter: beyond the margin, so it is kept.
  const std::vector<std::vector<double>> samples = {{0.5, 1.0, 1.2}, {0.9, 0.9, 0.95}, {2.0}};
  EXPECT_EQ(kept_index(samples), 1u);
  EXPECT_DOUBLE_EQ(median_of({3.0, 1.0, 2.0, 4.0}), 2.5);
}

TEST(TimedChoice, WithinTheMarginTheModelsEarlierRankIsKept) {
  // 1.015 is within 2% of 1.0: the model's first stays. 1.03 is not: the faster one is kept.
  EXPECT_EQ(kept_index({{1.015}, {1.0}}), 0u);
  EXPECT_EQ(kept_index({{1.03}, {1.0}}), 1u);
  // Among several within the margin of the fastest, the earliest of them, not the fastest.
  EXPECT_EQ(kept_index({{1.5}, {1.01}, {1.0}, {1.005}}), 1u);
  EXPECT_EQ(kept_index({{1.0}, {1.0}}), 0u);
}

TEST(TimedChoice, TheTimingSwitchTakesOnOffOrNothingAndRefusesTheRest) {
  EXPECT_EQ(timing_setting(nullptr), std::optional<bool>(true));
  EXPECT_EQ(timing_setting("on"), std::optional<bool>(true));
  EXPECT_EQ(timing_setting("off"), std::optional<bool>(false));
  for (const char* wrong : {"", "OFF", "0", "false", "of"}) EXPECT_EQ(timing_setting(wrong), std::nullopt) << wrong;
}

TEST(TimedChoice, ACandidateWithoutSamplesIsNeverKept) {
  EXPECT_EQ(kept_index({{}, {2.0}}), 1u);
  EXPECT_EQ(kept_index({{}, {}}), 2u);
  EXPECT_EQ(kept_index({}), 0u);
}

}  // namespace
}  // namespace gemm::dispatch
