// Public tests for lab 13. Run: bazel test //labs/13_induction_heads/...
// The grading tests check more than these (other sizes, three layers, one
// layer, finite differences in double, fresh random models); passing here is
// a good start.
//
// Expected numbers come from PyTorch in float64
// (tests/13_induction_heads/gen_goldens.py, in the instructors' repository):
// AttentionOnlyTransformer(vocab=7, max_len=8, d_model=8, n_heads=2,
// n_layers=2, seed=5) on the tokens and targets of PublicCase() below. The
// *_mistake_* files hold what a classic mistake computes, so a failure can
// name it.
#include "labs/13_induction_heads/induction_heads.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_only_model.h"
#include "labs/13_induction_heads/induction_heads_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::GoldenFile;
using testing::kExact;
using testing::kInductionHeadsMistakes;
using testing::kLayer;
using testing::KnownMistake;
using testing::kRowColumn;
using testing::MatchesGolden;

const std::string kGolden = "labs/13_induction_heads/golden/";

std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kInductionHeadsMistakes.Of(kGolden + golden, names);
}

AttentionOnlyTransformer PublicModel() {
  return AttentionOnlyTransformer(/*vocab=*/7, /*max_len=*/8, /*d_model=*/8, /*n_heads=*/2,
                                  /*n_layers=*/2, /*seed=*/5);
}
const std::vector<int> kInputs = {3, 1, 4, 1, 5, 2};
const std::vector<int> kTargets = {1, 4, -1, 5, 2, 6};  // position 2 is not scored

LossAndGrads PublicLossAndGrads() { return loss_and_grads(PublicModel(), kInputs, kTargets); }

// ---------------------------------------------------------------- the model

TEST(AttentionOnlyTransformerPublic, LayerLIsTheLayerSeededWithSeedPlus1000TimesL) {
  const AttentionOnlyTransformer model = PublicModel();
  ASSERT_EQ(model.layers.size(), 2u);
  const MultiHeadAttention second(8, 2, /*seed=*/5 + 1000);
  EXPECT_TRUE(AllClose(model.layers[1].W_Q, second.W_Q, kExact, kRowColumn))
      << "layers[1] must be MultiHeadAttention(d_model, n_heads, seed + 1000 * 1)";
  EXPECT_TRUE(AllClose(model.layers[1].W_O, second.W_O, kExact, kRowColumn));
}

TEST(AttentionOnlyTransformerPublic, LogitsMatchTorch) {
  EXPECT_TRUE(MatchesGolden(PublicModel().logits(kInputs), GoldenFile(kGolden, "pub_logits"),
                            kLayer, {"token", "logit"},
                            Mistakes("pub_logits", {"no_residual", "no_mask_layer2"})));
}

TEST(AttentionOnlyTransformerPublic, EachLayersAttentionWeightsMatchTorch) {
  const std::vector<Tensor3> w = PublicModel().attention_weights(kInputs);
  ASSERT_EQ(w.size(), 2u) << "one (n_heads, T, T) tensor per layer";
  EXPECT_TRUE(
      MatchesGolden(w[0], GoldenFile(kGolden, "pub_weights_0"), kLayer, {"head", "query", "key"}));
  EXPECT_TRUE(MatchesGolden(w[1], GoldenFile(kGolden, "pub_weights_1"), kLayer,
                            {"head", "query", "key"},
                            Mistakes("pub_weights_1", {"no_residual", "no_mask_layer2"})));
}

// ---------------------------------------------------------------- loss_and_grads

TEST(LossAndGradsPublic, LossIsTheMeanCrossEntropyOfTheScoredPositions) {
  const Tensor1 loss = {static_cast<float>(PublicLossAndGrads().loss)};
  EXPECT_TRUE(
      MatchesGolden(loss, GoldenFile(kGolden, "pub_loss"), kLayer, {"loss"},
                    Mistakes("pub_loss", {"mean_over_all", "no_residual", "no_mask_layer2"})));
}

TEST(LossAndGradsPublic, DUnembedMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(
      PublicLossAndGrads().grads.d_unembed, GoldenFile(kGolden, "pub_d_unembed"), kLayer,
      kRowColumn, Mistakes("pub_d_unembed", {"mean_over_all", "no_residual", "no_mask_layer2"})));
}

TEST(LossAndGradsPublic, DPosMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(
      PublicLossAndGrads().grads.d_pos, GoldenFile(kGolden, "pub_d_pos"), kLayer,
      {"position", "column"},
      Mistakes("pub_d_pos", {"no_pos_grad", "no_residual_grad", "mean_over_all", "no_residual"})));
}

TEST(LossAndGradsPublic, DEmbedMatchesTorchAutograd) {
  EXPECT_TRUE(
      MatchesGolden(PublicLossAndGrads().grads.d_embed, GoldenFile(kGolden, "pub_d_embed"), kLayer,
                    {"token", "column"},
                    Mistakes("pub_d_embed", {"embed_grad_overwritten", "no_residual_grad",
                                             "mean_over_all", "no_residual"})));
}

TEST(LossAndGradsPublic, FirstLayersGradientsMatchTorchAutograd) {
  const LossAndGrads r = PublicLossAndGrads();
  ASSERT_EQ(r.grads.layers.size(), 2u) << "one LayerGrads per layer";
  testing::ExpectLayerGradsMatchTorch(kGolden + "pub", r.grads.layers[0], 0,
                                      {"no_residual_grad", "mean_over_all", "no_residual"});
}

TEST(LossAndGradsPublic, SecondLayersGradientsMatchTorchAutograd) {
  const LossAndGrads r = PublicLossAndGrads();
  ASSERT_EQ(r.grads.layers.size(), 2u) << "one LayerGrads per layer";
  testing::ExpectLayerGradsMatchTorch(kGolden + "pub", r.grads.layers[1], 1,
                                      {"mean_over_all", "no_residual"});
}

// With one layer the model is lab 10's AttentionOnlyModel: same draws (embed,
// pos, unembed from seed + 1, the layer from seed), same forward, and lab 10's
// summed gradient divided by the number of scored positions.
TEST(LossAndGradsPublic, OneLayerIsLab10sAttentionOnlyModel) {
  const AttentionOnlyTransformer model(/*vocab=*/9, /*max_len=*/7, /*d_model=*/6, /*n_heads=*/3,
                                       /*n_layers=*/1, /*seed=*/4);
  const training::AttentionOnlyModel lab10(9, 7, 6, 3, 4);
  const std::vector<int> in = {2, 8, 0, 8, 5}, tgt = {8, 0, 8, -1, 1};
  EXPECT_TRUE(AllClose(model.logits(in), lab10.logits(in), kLayer, {"token", "logit"}));
  training::ModelGrads expected(lab10);
  const double sum = training::accumulate_gradients(lab10, {in, tgt}, 1.0f / 4, expected,
                                                    nullptr, nullptr);
  const LossAndGrads r = loss_and_grads(model, in, tgt);
  EXPECT_TRUE(AllClose(Tensor1{static_cast<float>(r.loss)}, Tensor1{static_cast<float>(sum / 4)},
                       kLayer, {"loss"}))
      << "the loss is the mean over the 4 scored positions";
  EXPECT_TRUE(AllClose(r.grads.d_embed, expected.embed, kLayer, kRowColumn)) << "d_embed";
  EXPECT_TRUE(AllClose(r.grads.d_pos, expected.pos, kLayer, kRowColumn)) << "d_pos";
  EXPECT_TRUE(AllClose(r.grads.d_unembed, expected.unembed, kLayer, kRowColumn)) << "d_unembed";
  ASSERT_EQ(r.grads.layers.size(), 1u);
  EXPECT_TRUE(AllClose(r.grads.layers[0].dW_Q, expected.W_Q, kLayer, kRowColumn)) << "dW_Q";
  EXPECT_TRUE(AllClose(r.grads.layers[0].dW_O, expected.W_O, kLayer, kRowColumn)) << "dW_O";
}

TEST(LossAndGradsPublic, RejectsTargetsThatAreAllUnscored) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { loss_and_grads(PublicModel(), {1, 2, 3}, {-1, -1, -1}); }, {"-1"}))
      << "a mean over no position is undefined";
}

TEST(LossAndGradsPublic, RejectsATargetOutOfRangeNamingIt) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { loss_and_grads(PublicModel(), {1, 2, 3}, {2, 7, 0}); }, {"7"}));
}

// ---------------------------------------------------------------- composition_scores

TEST(CompositionScoresPublic, MatchTheFormulasInNumpy) {
  const AttentionOnlyTransformer model = PublicModel();
  testing::ExpectCompositionMatches(composition_scores(model.layers[0], model.layers[1]),
                                    kGolden + "pub_comp");
}

// Hand-built heads: the earlier head writes only into dimensions 0 and 1 of
// the residual stream; the later head reads only dimensions 2 and 3. Nothing
// one writes reaches the other, so every score is 0.
TEST(CompositionScoresPublic, HeadsOnOrthogonalSubspacesDoNotCompose) {
  MultiHeadAttention earlier(4, 1, 1), later(4, 1, 2);
  xt::view(earlier.W_O, xt::all(), xt::range(2, 4)) = 0.0f;  // writes columns 0, 1
  for (Tensor2* w : {&later.W_Q, &later.W_K, &later.W_V}) {
    xt::view(*w, xt::range(0, 2), xt::all()) = 0.0f;  // reads rows 2, 3
  }
  const Composition c = composition_scores(earlier, later);
  const Tensor2 zero = xt::zeros<float>({1, 1});
  EXPECT_TRUE(AllClose(c.q, zero, kLayer)) << "Q-composition of orthogonal heads";
  EXPECT_TRUE(AllClose(c.k, zero, kLayer)) << "K-composition of orthogonal heads";
  EXPECT_TRUE(AllClose(c.v, zero, kLayer)) << "V-composition of orthogonal heads";
  // The same heads before they were made orthogonal do compose: scores of 0
  // everywhere would pass the three lines above.
  const Composition drawn = composition_scores(MultiHeadAttention(4, 1, 1), MultiHeadAttention(4, 1, 2));
  EXPECT_GT(drawn.q(0, 0), 0.0f) << "Q-composition of the heads as drawn";
  EXPECT_GT(drawn.k(0, 0), 0.0f) << "K-composition of the heads as drawn";
  EXPECT_GT(drawn.v(0, 0), 0.0f) << "V-composition of the heads as drawn";
}

TEST(CompositionScoresPublic, AnAllZeroHeadScoresZeroNotNaN) {
  MultiHeadAttention earlier(4, 2, 1);
  const MultiHeadAttention later(4, 2, 2);
  xt::view(earlier.W_O, xt::range(0, 2), xt::all()) = 0.0f;  // head 0 of earlier writes nothing
  const Composition c = composition_scores(earlier, later);
  for (const Tensor2* s : {&c.q, &c.k, &c.v}) {
    ASSERT_EQ(s->shape(0), 2u);
    ASSERT_EQ(s->shape(1), 2u);
    for (std::size_t b = 0; b < 2; ++b) {
      EXPECT_EQ((*s)(b, 0), 0.0f) << "head 0 has W_OV = 0: its scores must be 0 (not NaN)";
      EXPECT_GT((*s)(b, 1), 0.0f) << "head 1 still writes";
    }
  }
}

TEST(CompositionScoresPublic, RejectsLayersOfDifferentWidths) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { composition_scores(MultiHeadAttention(4, 2, 1), MultiHeadAttention(6, 2, 1)); },
      {"4", "6"}));
}

// ---------------------------------------------------------------- bad arguments

TEST(AttentionOnlyTransformerPublic, RejectsZeroLayersNamingTheValue) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { AttentionOnlyTransformer(7, 8, 8, 2, /*n_layers=*/0); }, {"n_layers=0"}));
}

TEST(AttentionOnlyTransformerPublic, RejectsADModelThatTheHeadsDoNotDivide) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { AttentionOnlyTransformer(7, 8, /*d_model=*/10, /*n_heads=*/4, 2); },
      {"d_model=10", "n_heads=4"}));
}

TEST(AttentionOnlyTransformerPublic, RejectsATokenOutsideTheVocabularyNamingIt) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument([] { PublicModel().logits({1, 9, 2}); }, {"9"}));
}

TEST(AttentionOnlyTransformerPublic, RejectsASequenceLongerThanMaxLen) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { PublicModel().logits(std::vector<int>(9, 0)); }, {"9", "max_len=8"}));
}

}  // namespace
}  // namespace mha
