// Hidden tests for lab 13: the two-layer model, a three-layer and a
// one-layer one, their loss and gradients, and the composition scores.
//
// Cases (tests/13_induction_heads/gen_goldens.py, PyTorch in float64):
//   two:   vocab 11, max_len 10, d_model 12, 3 heads, 2 layers, seed 9,  T = 9
//   three: vocab 6,  max_len 7,  d_model 8,  4 heads, 3 layers, seed 13, T = 7
//   one:   vocab 9,  max_len 6,  d_model 6,  2 heads, 1 layer,  seed 17, T = 5
// The *_mistake_* goldens hold what a classic mistake computes, so a failure
// can name it.
//
// The finite-difference tests need no golden: they differentiate the plain
// double-precision model of reference.h (central differences, step 1e-5) and
// compare every gradient with it, on a fixed small model and on fresh random
// ones.
#include "labs/13_induction_heads/induction_heads.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"
#include "common/testing/testing.h"
#include "labs/13_induction_heads/induction_heads_test_util.h"
#include "tests/13_induction_heads/reference.h"
#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::GoldenFile;
using testing::kInductionHeadsMistakes;
using testing::kLayer;
using testing::KnownMistake;
using testing::kRowColumn;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "tests/13_induction_heads/golden/";
const std::string kSeeDoc = "; see docs/13_induction_heads.md";

// The learner's model, then every field of it set by the test to the API's
// draws (NumpyRng(seed + 1) for embed, pos, unembed; MultiHeadAttention's draw
// from seed + 1000 * l for layer l, tests/common/seeded_weights.h). The tests
// that compare the learner's model with the double reference run on that same
// model use it, so that no expected number comes from weights the learner's
// constructor chose (zero weights would make every expected logit 0 and every
// gradient 0). The golden tests use the constructor's own model: their
// expected numbers are fixed files.
AttentionOnlyTransformer SeededModel(int vocab, int max_len, int d_model, int n_heads,
                                     int n_layers, std::uint64_t seed) {
  AttentionOnlyTransformer model(vocab, max_len, d_model, n_heads, n_layers, seed);
  const std::size_t V = vocab, L = max_len, d = d_model;
  NumpyRng rng(seed + 1);
  model.vocab = vocab;
  model.max_len = max_len;
  model.d_model = d_model;
  model.n_heads = n_heads;
  model.n_layers = n_layers;
  model.embed = rng.normal_matrix(V, d, 1);    // (vocab, d_model)
  model.pos = rng.normal_matrix(L, d, 1);      // (max_len, d_model)
  model.unembed = rng.normal_matrix(d, V, d);  // (d_model, vocab)
  model.layers.assign(static_cast<std::size_t>(n_layers), MultiHeadAttention(d_model, n_heads));
  for (int l = 0; l < n_layers; ++l) {
    const std::uint64_t layer_seed = seed + 1000 * static_cast<std::uint64_t>(l);
    seeded::InstallMha(model.layers[l], d_model, n_heads, layer_seed);
  }
  return model;
}

struct Case {
  std::string name;
  int vocab, max_len, d_model, n_heads, n_layers;
  std::uint64_t seed;
  std::vector<int> inputs, targets;
  AttentionOnlyTransformer Model() const {
    return AttentionOnlyTransformer(vocab, max_len, d_model, n_heads, n_layers, seed);
  }
  AttentionOnlyTransformer Seeded() const {
    return SeededModel(vocab, max_len, d_model, n_heads, n_layers, seed);
  }
};

const Case kTwo{"two", 11, 10, 12, 3, 2, 9,
                {0, 7, 3, 10, 3, 7, 1, 2, 9}, {7, 3, 10, -1, 7, 1, 2, 9, -1}};
const Case kThree{"three", 6, 7, 8, 4, 3, 13, {5, 0, 2, 2, 4, 1, 3}, {-1, 2, 2, 4, 1, 3, 0}};
const Case kOne{"one", 9, 6, 6, 2, 1, 17, {8, 2, 0, 6, 4}, {2, 0, 6, 4, 1}};

// Every mistake the generator wrote for this case.
std::vector<std::string> MistakeNames(const Case& c) {
  std::vector<std::string> names = {"no_pos_grad", "no_residual_grad", "mean_over_all",
                                    "no_residual"};
  if (c.n_layers >= 2) names.push_back("no_mask_layer2");
  return names;
}

std::vector<KnownMistake> Mistakes(const Case& c, const std::string& what) {
  std::vector<std::string> names = MistakeNames(c);
  // Only d_embed of a case that repeats a token shows an overwritten accumulation.
  const std::set<int> distinct(c.inputs.begin(), c.inputs.end());
  if (what == "d_embed" && distinct.size() < c.inputs.size()) {
    names.insert(names.begin(), "embed_grad_overwritten");
  }
  return kInductionHeadsMistakes.Of(kGolden + c.name + "_" + what, names);
}

void ExpectForwardMatchesTorch(const Case& c) {
  SCOPED_TRACE(c.name);
  const AttentionOnlyTransformer model = c.Model();
  EXPECT_TRUE(MatchesGolden(model.logits(c.inputs), GoldenFile(kGolden, c.name + "_logits"), kLayer,
                            {"token", "logit"}, Mistakes(c, "logits")));
  const std::vector<Tensor3> w = model.attention_weights(c.inputs);
  ASSERT_EQ(w.size(), static_cast<std::size_t>(c.n_layers)) << "one tensor per layer";
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string name = c.name + "_weights_" + std::to_string(l);
    EXPECT_TRUE(MatchesGolden(w[l], GoldenFile(kGolden, name), kLayer, {"head", "query", "key"},
                              Mistakes(c, "weights_" + std::to_string(l))))
        << "layer " << l;
  }
}

void ExpectLossAndGradsMatchTorch(const Case& c) {
  SCOPED_TRACE(c.name);
  const LossAndGrads r = loss_and_grads(c.Model(), c.inputs, c.targets);
  EXPECT_TRUE(MatchesGolden(Tensor1{static_cast<float>(r.loss)},
                            GoldenFile(kGolden, c.name + "_loss"), kLayer, {"loss"},
                            Mistakes(c, "loss")));
  EXPECT_TRUE(MatchesGolden(r.grads.d_unembed, GoldenFile(kGolden, c.name + "_d_unembed"), kLayer,
                            kRowColumn, Mistakes(c, "d_unembed")));
  EXPECT_TRUE(MatchesGolden(r.grads.d_pos, GoldenFile(kGolden, c.name + "_d_pos"), kLayer,
                            {"position", "column"}, Mistakes(c, "d_pos")));
  EXPECT_TRUE(MatchesGolden(r.grads.d_embed, GoldenFile(kGolden, c.name + "_d_embed"), kLayer,
                            {"token", "column"}, Mistakes(c, "d_embed")));
  ASSERT_EQ(r.grads.layers.size(), static_cast<std::size_t>(c.n_layers)) << "one per layer";
  for (int l = c.n_layers - 1; l >= 0; --l) {
    testing::ExpectLayerGradsMatchTorch(kGolden + c.name, r.grads.layers[l], l, MistakeNames(c));
  }
}

void ExpectCompositionMatches(const Composition& c, const std::string& name) {
  testing::ExpectCompositionMatches(c, kGolden + name);
}

// ---------------------------------------------------------------- goldens

TEST(AttentionOnlyTransformer, TwoLayersMatchTorch) { ExpectForwardMatchesTorch(kTwo); }
TEST(AttentionOnlyTransformer, ThreeLayersMatchTorch) { ExpectForwardMatchesTorch(kThree); }
TEST(AttentionOnlyTransformer, OneLayerMatchesTorch) { ExpectForwardMatchesTorch(kOne); }

TEST(LossAndGrads, TwoLayersMatchTorchAutograd) { ExpectLossAndGradsMatchTorch(kTwo); }
TEST(LossAndGrads, ThreeLayersMatchTorchAutograd) { ExpectLossAndGradsMatchTorch(kThree); }
TEST(LossAndGrads, OneLayerMatchesTorchAutograd) { ExpectLossAndGradsMatchTorch(kOne); }

TEST(CompositionScores, MatchNumpyOnTheTwoLayerModel) {
  const AttentionOnlyTransformer m = kTwo.Model();
  ExpectCompositionMatches(composition_scores(m.layers[0], m.layers[1]), "two_comp");
}

TEST(CompositionScores, MatchNumpyOnLayersOneAndTwoOfThree) {
  const AttentionOnlyTransformer m = kThree.Model();
  ExpectCompositionMatches(composition_scores(m.layers[0], m.layers[1]), "three_comp");
}

TEST(CompositionScores, AreLaterHeadsByEarlierHeadsWhenTheCountsDiffer) {
  const Composition c =
      composition_scores(MultiHeadAttention(8, 2, 21), MultiHeadAttention(8, 4, 22));
  ASSERT_EQ(c.k.shape(0), 4u) << "rows are the later layer's 4 heads";
  ASSERT_EQ(c.k.shape(1), 2u) << "columns are the earlier layer's 2 heads";
  ExpectCompositionMatches(c, "comp_mixed");
}

// ---------------------------------------------------------------- properties

TEST(AttentionOnlyTransformer, UsesWeightsOverwrittenAfterConstruction) {
  AttentionOnlyTransformer model = kTwo.Seeded();
  (void)model.logits(kTwo.inputs);
  model.layers[1].W_V = model.layers[1].W_V * 2.0f;
  model.pos = model.pos * 0.5f;
  const reference::D2 expected = reference::Logits(reference::FromTransformer(model), kTwo.inputs);
  EXPECT_TRUE(AllClose(model.logits(kTwo.inputs), xt::cast<float>(expected), kLayer,
                       {"token", "logit"}))
      << "logits must read the weights on every call" << kSeeDoc;
}

TEST(LossAndGrads, UnscoredPositionsAndAbsentTokensGetNoGradient) {
  const AttentionOnlyTransformer model = kTwo.Seeded();
  // Only the last position is scored; token 4 never appears.
  const LossAndGrads r = loss_and_grads(model, {1, 2, 3}, {-1, -1, 5});
  for (std::size_t c = 0; c < r.grads.d_embed.shape(1); ++c) {
    EXPECT_EQ(r.grads.d_embed(4, c), 0.0f) << "token 4 is not in the inputs";
  }
  for (std::size_t t = 3; t < r.grads.d_pos.shape(0); ++t) {
    for (std::size_t c = 0; c < r.grads.d_pos.shape(1); ++c) {
      EXPECT_EQ(r.grads.d_pos(t, c), 0.0f) << "position " << t << " is beyond T = 3";
    }
  }
  const double expected =
      reference::Loss(reference::FromTransformer(model), {1, 2, 3}, {-1, -1, 5});
  EXPECT_TRUE(AllClose(Tensor1{static_cast<float>(r.loss)}, Tensor1{static_cast<float>(expected)},
                       kLayer, {"loss"}))
      << "one scored position: the loss is its cross-entropy" << kSeeDoc;
}

// d Loss / d param by central differences of the double reference
// (tests/common/naive.h), as float.
template <class F>
Tensor2 CentralDifferences(reference::D2& param, F loss) {
  return xt::cast<float>(naive::CentralDifferences(param, loss));
}

void ExpectGradsMatchFiniteDifferences(const AttentionOnlyTransformer& model,
                                       const std::vector<int>& inputs,
                                       const std::vector<int>& targets) {
  const LossAndGrads r = loss_and_grads(model, inputs, targets);
  reference::Model m = reference::FromTransformer(model);
  auto loss = [&] { return reference::Loss(m, inputs, targets); };
  EXPECT_TRUE(AllClose(Tensor1{static_cast<float>(r.loss)}, Tensor1{static_cast<float>(loss())},
                       kLayer, {"loss"})) << "loss" << kSeeDoc;
  EXPECT_TRUE(AllClose(r.grads.d_embed, CentralDifferences(m.embed, loss), kLayer, kRowColumn))
      << "d_embed" << kSeeDoc;
  EXPECT_TRUE(AllClose(r.grads.d_pos, CentralDifferences(m.pos, loss), kLayer, kRowColumn))
      << "d_pos" << kSeeDoc;
  EXPECT_TRUE(AllClose(r.grads.d_unembed, CentralDifferences(m.unembed, loss), kLayer,
                       kRowColumn)) << "d_unembed" << kSeeDoc;
  ASSERT_EQ(r.grads.layers.size(), m.layers.size());
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const LayerGrads& g = r.grads.layers[l];
    reference::Layer& w = m.layers[l];
    EXPECT_TRUE(AllClose(g.dW_Q, CentralDifferences(w.W_Q, loss), kLayer, kRowColumn))
        << "dW_Q of layer " << l << kSeeDoc;
    EXPECT_TRUE(AllClose(g.dW_K, CentralDifferences(w.W_K, loss), kLayer, kRowColumn))
        << "dW_K of layer " << l << kSeeDoc;
    EXPECT_TRUE(AllClose(g.dW_V, CentralDifferences(w.W_V, loss), kLayer, kRowColumn))
        << "dW_V of layer " << l << kSeeDoc;
    EXPECT_TRUE(AllClose(g.dW_O, CentralDifferences(w.W_O, loss), kLayer, kRowColumn))
        << "dW_O of layer " << l << kSeeDoc;
  }
}

TEST(LossAndGrads, EveryGradientMatchesFiniteDifferencesInDouble) {
  const AttentionOnlyTransformer model = SeededModel(/*vocab=*/5, /*max_len=*/6, /*d_model=*/4,
                                                     /*n_heads=*/2, /*n_layers=*/2, /*seed=*/31);
  ExpectGradsMatchFiniteDifferences(model, {4, 1, 1, 0, 3}, {1, -1, 0, 3, 2});
}

// Heads of width 1 make every circuit rank one, W_OV^a = v_a o_a^T and
// W_QK^b = q_b k_b^T, so each score is the |cosine| between what a writes
// (o_a, its row of W_O) and what b reads: q_b, k_b or v_b.
TEST(CompositionScores, OfWidthOneHeadsAreCosinesBetweenWhatOneWritesAndTheOtherReads) {
  MultiHeadAttention earlier(4, 4, 1), later(4, 4, 2);
  for (Tensor2* w : {&earlier.W_O, &later.W_Q, &later.W_K, &later.W_V}) w->fill(0.0f);
  earlier.W_O(0, 0) = 2.0f;  // head 0 writes along e0
  later.W_Q(2, 0) = 1.0f;    // head 0 of later: queries read e2 (orthogonal),
  later.W_K(0, 0) = 1.0f;    //   keys read e0 + e1 (cosine 1/sqrt(2)),
  later.W_K(1, 0) = 1.0f;
  later.W_V(0, 0) = -3.0f;   //   values read -e0 (|cosine| 1).
  const Composition c = composition_scores(earlier, later);
  EXPECT_TRUE(AllClose(Tensor1{c.q(0, 0)}, Tensor1{0.0f}, kLayer, {"score"}))
      << "Q-composition: e0 vs e2" << kSeeDoc;
  EXPECT_TRUE(AllClose(Tensor1{c.k(0, 0)}, Tensor1{1.0f / std::sqrt(2.0f)}, kLayer, {"score"}))
      << "K-composition: e0 vs (e0 + e1)/sqrt(2)" << kSeeDoc;
  EXPECT_TRUE(AllClose(Tensor1{c.v(0, 0)}, Tensor1{1.0f}, kLayer, {"score"}))
      << "V-composition: e0 vs -e0" << kSeeDoc;
  // Every other pair involves a head whose circuits are all zero: 0, not NaN.
  for (std::size_t b = 0; b < 4; ++b) {
    for (std::size_t a = 0; a < 4; ++a) {
      if (a == 0 && b == 0) continue;
      EXPECT_EQ(c.q(b, a), 0.0f) << "b=" << b << " a=" << a;
      EXPECT_EQ(c.k(b, a), 0.0f) << "b=" << b << " a=" << a;
      EXPECT_EQ(c.v(b, a), 0.0f) << "b=" << b << " a=" << a;
    }
  }
}

TEST(CompositionScores, OfAllZeroLayersAreZeroNotNaN) {
  MultiHeadAttention earlier(6, 3, 1), later(6, 2, 2);
  // Zeros are the right answer here only: the same layers before their weights
  // are zeroed compose (every score of random heads is positive).
  const Composition drawn = composition_scores(earlier, later);
  for (const Tensor2* m : {&drawn.q, &drawn.k, &drawn.v}) {
    ASSERT_TRUE(xt::all(*m > 0.0f))
        << "precondition: random heads must have positive composition scores" << kSeeDoc;
  }
  for (Tensor2* w : {&earlier.W_Q, &earlier.W_K, &earlier.W_V, &earlier.W_O, &later.W_Q,
                     &later.W_K, &later.W_V, &later.W_O}) {
    w->fill(0.0f);
  }
  const Composition c = composition_scores(earlier, later);
  const Tensor2 zero = xt::zeros<float>({2, 3});
  EXPECT_TRUE(AllClose(c.q, zero, testing::kExact)) << "Q" << kSeeDoc;
  EXPECT_TRUE(AllClose(c.k, zero, testing::kExact)) << "K" << kSeeDoc;
  EXPECT_TRUE(AllClose(c.v, zero, testing::kExact)) << "V" << kSeeDoc;
}

// ---------------------------------------------------------------- fresh random inputs

// Fresh random sizes, weights and tokens that no file can predict (replay a
// failure with MHA_TEST_SEED=<seed>).
TEST(FreshRandomInputs, LogitsWeightsAndGradientsMatchTheDoubleReference) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 3), d_head = gen.Pick(1, 3), vocab = gen.Pick(2, 6), L = gen.Pick(1, 3);
  const int T = gen.Pick(1, 6), max_len = T + gen.Pick(0, 2);
  const AttentionOnlyTransformer model = SeededModel(vocab, max_len, H * d_head, H, L, gen());
  std::vector<int> inputs(T), targets(T);
  for (int& t : inputs) t = gen.Pick(0, vocab - 1);
  for (int& t : targets) t = gen.Pick(-1, vocab - 1);
  targets[gen.Pick(0, T - 1)] = gen.Pick(0, vocab - 1);  // at least one scored
  SCOPED_TRACE("vocab=" + std::to_string(vocab) + " d_model=" + std::to_string(H * d_head) +
               " n_heads=" + std::to_string(H) + " n_layers=" + std::to_string(L) +
               " T=" + std::to_string(T));
  const reference::Model m = reference::FromTransformer(model);
  std::vector<reference::D3> w_ref;
  const reference::D2 logits = reference::Logits(m, inputs, &w_ref);
  EXPECT_TRUE(AllClose(model.logits(inputs), xt::cast<float>(logits), kLayer, {"token", "logit"}))
      << "logits" << kSeeDoc;
  const std::vector<Tensor3> w = model.attention_weights(inputs);
  ASSERT_EQ(w.size(), w_ref.size());
  for (std::size_t l = 0; l < w.size(); ++l) {
    EXPECT_TRUE(AllClose(w[l], xt::cast<float>(w_ref[l]), kLayer, {"head", "query", "key"}))
        << "attention weights of layer " << l << kSeeDoc;
  }
  ExpectGradsMatchFiniteDifferences(model, inputs, targets);
}

TEST(FreshRandomInputs, CompositionScoresMatchTheDirectComputation) {
  testing::FreshDraws gen;
  const int d_model = 12, A = std::vector<int>{1, 2, 3, 4, 6}[gen.Pick(0, 4)],
            B = std::vector<int>{1, 2, 3, 4, 6}[gen.Pick(0, 4)];
  SCOPED_TRACE("earlier heads=" + std::to_string(A) + " later heads=" + std::to_string(B));
  const MultiHeadAttention earlier(d_model, A, gen()), later(d_model, B, gen());
  const Composition c = composition_scores(earlier, later);
  const reference::Scores r =
      reference::Composition(reference::FromLayer(earlier), A, reference::FromLayer(later), B);
  const std::vector<std::string> axes = {"later head", "earlier head"};
  EXPECT_TRUE(AllClose(c.q, xt::cast<float>(r.q), kLayer, axes)) << "Q" << kSeeDoc;
  EXPECT_TRUE(AllClose(c.k, xt::cast<float>(r.k), kLayer, axes)) << "K" << kSeeDoc;
  EXPECT_TRUE(AllClose(c.v, xt::cast<float>(r.v), kLayer, axes)) << "V" << kSeeDoc;
}

// ---------------------------------------------------------------- bad arguments

TEST(AttentionOnlyTransformerArguments, RejectsEachSizeBelowOneNamingIt) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { AttentionOnlyTransformer(0, 4, 4, 2, 1); }, {"vocab=0"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([] { AttentionOnlyTransformer(5, 0, 4, 2, 1); }, {"max_len=0"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([] { AttentionOnlyTransformer(5, 4, -4, 2, 1); }, {"d_model=-4"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([] { AttentionOnlyTransformer(5, 4, 4, 0, 1); }, {"n_heads=0"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([] { AttentionOnlyTransformer(5, 4, 4, 2, -1); }, {"n_layers=-1"}));
}

TEST(AttentionOnlyTransformerArguments, RejectsADModelTheHeadsDoNotDivide) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { AttentionOnlyTransformer(5, 4, 9, 2, 2); },
                                    {"d_model=9", "n_heads=2"}));
}

TEST(AttentionOnlyTransformerArguments, RejectsBadTokensInLogitsAndAttentionWeights) {
  const AttentionOnlyTransformer model = kTwo.Model();  // vocab 11, max_len 10
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.logits({}); }, {"0"})) << "an empty sequence";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.logits({1, -2}); }, {"-2"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.attention_weights({11}); }, {"11"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { model.attention_weights(std::vector<int>(11, 1)); },
                                    {"11", "10"}));
}

TEST(LossAndGradsArguments, RejectsInputsAndTargetsOfDifferentLengths) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] { loss_and_grads(kTwo.Model(), {1, 2, 3}, {2, 3}); }, {"3", "2"}));
}

TEST(LossAndGradsArguments, RejectsBadTargetsAndTokens) {
  const AttentionOnlyTransformer model = kTwo.Model();
  EXPECT_TRUE(ThrowsInvalidArgument([&] { loss_and_grads(model, {1, 2}, {-2, 3}); }, {"-2"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { loss_and_grads(model, {1, 2}, {11, 3}); }, {"11"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { loss_and_grads(model, {1, 12}, {1, 3}); }, {"12"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { loss_and_grads(model, {1}, {-1}); }, {"-1"}))
      << "no scored position";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { loss_and_grads(model, {}, {}); }, {"0"}));
}

TEST(CompositionScoresArguments, RejectsLayersOfDifferentWidthsNamingThem) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] { composition_scores(MultiHeadAttention(8, 2, 1), MultiHeadAttention(12, 3, 1)); },
      {"8", "12"}));
}

}  // namespace
}  // namespace mha
