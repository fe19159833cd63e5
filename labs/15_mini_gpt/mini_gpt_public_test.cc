// Public tests for lab 15. Run: bazel test //labs/15_mini_gpt/...
// The grading tests check more than these (three blocks, the seed course's
// sizes on a corpus sentence, finite differences in double, fresh random
// models, a short training run on the verb grammar); passing here is a good
// start.
//
// Expected numbers come from PyTorch in float64 and from a NumPy sampler
// (tests/15_mini_gpt/gen_goldens.py, in the instructors' repository): the
// model "pub" is MiniGpt(vocab=10, max_len=9, d_model=8, n_heads=2, d_ff=12,
// n_layers=2, seed=15) with its gammas, betas and biases moved away from 1
// and 0 (golden/pub_p_*.npy), on the tokens of golden/pub_inputs.npy. The
// *_mistake_* files hold what a classic mistake computes, so that a failure
// can name it.
#include "labs/15_mini_gpt/mini_gpt.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/mini_gpt_test_util.h"

namespace mha {
namespace {

using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/15_mini_gpt/golden/";

MiniGpt PublicModel() { return testing::CaseModel(kGolden, "pub"); }

// ---------------------------------------------------------------- the model

TEST(MiniGptPublic, HasTheSeedCoursesParameterCount) {
  EXPECT_EQ(MiniGpt(64, 32, 64, 4, 256, 2).parameter_count(), 103680u)
      << "4,096 (embed, once: it is tied) + 2 * 49,728 (the blocks) + 128 (the final LayerNorm)";
}

TEST(MiniGptPublic, DrawsEmbedFromSeedAndBlockLFromSeedPlus1000TimesLPlusOne) {
  testing::ExpectDrawsItsWeights(kGolden, "pub");
}

TEST(MiniGptPublic, LogitsAndAttentionWeightsMatchTorch) {
  testing::ExpectLogitsMatchTorch(PublicModel(), kGolden, "pub");
}

TEST(MiniGptPublic, RejectsTokensOutsideTheVocabularyOrLongerThanMaxLen) {
  const MiniGpt model = PublicModel();  // vocab 10, max_len 9
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.logits({1, 10, 2}); }, {"10"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.logits(std::vector<int>(10, 1)); },
                                    {"10", "max_len=9"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { MiniGpt(10, 9, 10, 4, 12, 2); },
                                    {"d_model=10", "n_heads=4"}));
}

// ---------------------------------------------------------------- the loss

TEST(CrossEntropyPublic, IsTheMeanOverTheScoredRowsAndMatchesTorch) {
  testing::ExpectCrossEntropyMatchesTorch(kGolden, "ce_pub");
}

TEST(CrossEntropyPublic, StaysFiniteAndRightOnLogitsOf1e4) {
  testing::ExpectCrossEntropyMatchesTorch(kGolden, "ce_big");
}

TEST(CrossEntropyPublic, RejectsTargetsThatAreAllUnscored) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] { cross_entropy(xt::zeros<float>({2, 3}), {-1, -1}); }, {"-1"}))
      << "a mean over no row is undefined";
}

// ---------------------------------------------------------------- gradients

TEST(GptLossAndGradsPublic, LossIsCrossEntropyOfTheLogitsAsTorch) {
  testing::ExpectLossMatchesTorch(PublicModel(), kGolden, "pub");
}

TEST(GptLossAndGradsPublic, DEmbedHasBothPartsOfTheTiedGradient) {
  testing::ExpectTiedGradientMatchesTorch(PublicModel(), kGolden, "pub");
}

TEST(GptLossAndGradsPublic, EveryOtherGradientMatchesTorchAutograd) {
  testing::ExpectOtherGradsMatchTorch(PublicModel(), kGolden, "pub");
}

// ---------------------------------------------------------------- the optimiser

TEST(ClipGradNormPublic, ScalesEveryGradientByOneGlobalFactorAsTorch) {
  testing::ExpectClipMatchesTorch(kGolden, "pub", 2);
}

TEST(ClipGradNormPublic, LeavesGradientsUnderTheLimitAsTheyWere) {
  testing::ExpectClipLeavesSmallGradients(kGolden, "pub", 2);
}

TEST(LearningRateAtPublic, WarmsUpLinearlyThenFollowsTheCosineDownToMinLr) {
  testing::ExpectScheduleMatches(kGolden, "sched_pub");
}

TEST(AdamWPublic, ThreeStepsMatchTorchOptimAdamW) {
  testing::ExpectAdamWMatchesTorch(PublicModel(), kGolden, "pub");
}

// ---------------------------------------------------------------- sampling

TEST(SampleTokenPublic, MatchesNumpyForEachTemperatureTopKAndU) {
  testing::ExpectSamplingMatchesNumpy(kGolden, "sample_pub");
}

TEST(SampleTokenPublic, RejectsAUOutsideZeroToOneEvenWhenGreedy) {
  const Tensor1 logits = {0.5f, 1.5f, -1.0f};
  EXPECT_TRUE(ThrowsInvalidArgument([&] { sample_token(logits, Sampling{}, 1.0); }, {"u=1"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { sample_token(logits, Sampling{0.8f, 2}, -0.5); },
                                    {"u=-0.5"}));
}

// ---------------------------------------------------------------- generation

TEST(GptDecoderPublic, StepsOfAnySizeGiveTheRowsOfTheFullLogits) {
  const MiniGpt model = PublicModel();
  for (const std::vector<int>& chunks :
       {std::vector<int>{7}, std::vector<int>{1, 1, 1, 1, 1, 1, 1}, std::vector<int>{3, 1, 2, 1}}) {
    testing::ExpectDecoderMatchesTorch(model, kGolden, "pub", chunks);
  }
}

TEST(GptDecoderPublic, RejectsTokensBeyondItsCapacityAndKeepsWhatItHeld) {
  const MiniGpt model = PublicModel();
  GptDecoder decoder(model, 4);
  (void)decoder.step({3, 7, 3});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step({1, 9}); }, {"capacity=4"}));
  EXPECT_EQ(decoder.length(), 3) << "a step that throws changes nothing";
  EXPECT_EQ(decoder.cache(0).length(), 3) << "a step that throws changes nothing";
}

TEST(GeneratePublic, GreedyDecodingMatchesNumpyUpToMaxLen) {
  testing::ExpectGenerateMatchesNumpy(PublicModel(), kGolden, "pub", 0);
}

TEST(GeneratePublic, SamplingMatchesNumpyWithTheSameDrawsAndStopsAfterEos) {
  testing::ExpectGenerateMatchesNumpy(PublicModel(), kGolden, "pub", 1);
}

}  // namespace
}  // namespace mha
