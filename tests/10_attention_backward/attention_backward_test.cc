// Hidden tests for lab 10: attention_backward and mha_backward.
//
// Attention under test unless said otherwise: H=3 heads, T=5 queries, S=7
// keys, d_head=4, so no two sizes are equal. The layer: MultiHeadAttention(
// d_model=12, n_heads=3, seed=7) on T=5 tokens. Expected gradients come from
// PyTorch's autograd in float64 (tests/10_attention_backward/gen_goldens.py);
// the *_mistake_* goldens hold what a classic mistake computes, so a failure
// can name it.
//
// The finite-difference tests need no golden: they differentiate a plain
// double-precision forward written below (central differences, step 1e-5,
// so the reference is exact to about 1e-9) and compare the learner's float
// gradients with it, on fixed inputs and on fresh random ones.
#include "labs/10_attention_backward/attention_backward.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_backward_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::AttentionCase;
using testing::ExpectAttentionCaseMatchesTorch;
using testing::GoldenFile;
using testing::kAttentionBackwardMistakes;
using testing::kExact;
using testing::kLayer;
using testing::KnownMistake;
using testing::LayerCase;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kDModel = 12;
constexpr int kHeads = 3;
constexpr std::uint64_t kSeed = 7;

const std::string kGolden = "tests/10_attention_backward/golden/";

const char kSeeDoc[] = "; see docs/10_attention_backward.md, \"Classic mistakes\"";

// The mistakes these tests name on their own (no table of the lab's golden
// generator behind them), as data for the grader (common/testing/misconception.h).
const testing::MistakeTable kOwnMistakes(
    "docs/10_attention_backward.md",
    {
        {"w_v_cached",
         "overwriting W_V had no effect: something derived from the weights was cached"},
        {"nan_dq_empty_row",
         "query 0 sees no key (its mask row is all -inf): its output is the constant 0, so its "
         "dq row must be exactly 0, never NaN"},
        {"masked_dk_leak",
         "masked positions leak gradient: key 2 is masked for every query, yet dk[:, 2] is not 0"},
        {"masked_dv_leak",
         "masked positions leak gradient: key 2 is masked for every query, yet dv[:, 2] is not 0"},
        {"no_max_backward",
         "inf or NaN in the gradients: recompute P with a softmax that subtracts the row max"},
    });

// ---------------------------------------------------------------- attention goldens

// The golden cases of the grading tests: the public tests' cases
// (labs/10_attention_backward/attention_backward_test_util.h) run on them,
// and the tests below add cases of their own.
AttentionCase Case(const std::string& name, bool masked) { return {kGolden, name, masked}; }

TEST(AttentionBackward, MatchesTorchAutogradWithoutAMaskWhenTDiffersFromS) {
  ExpectAttentionCaseMatchesTorch(Case("cross", /*masked=*/false));
}

TEST(AttentionBackward, MatchesTorchAutogradWithABottomRightCausalMask) {
  ExpectAttentionCaseMatchesTorch(Case("causal", /*masked=*/true));
}

TEST(AttentionBackward, AQueryThatSeesNoKeyGetsZeroGradientAndTheRestMatchesTorch) {
  ExpectAttentionCaseMatchesTorch(Case("empty_row", /*masked=*/true));
}

TEST(AttentionBackward, AQueryThatSeesNoKeyGetsAnExactlyZeroDqRowNotNaN) {
  const testing::AttentionInputs in =
      testing::LoadAttentionInputs(kGolden, "empty_row", "empty_row");
  const AttentionGrads g = attention_backward(
      in.q, in.k, in.v, in.mask, LoadGolden<3>(GoldenFile(kGolden, "empty_row_d_output")));
  const Tensor3 zeros = xt::zeros<float>({in.q.shape(0), std::size_t{1}, in.q.shape(2)});
  EXPECT_TRUE(AllClose(xt::view(g.dq, xt::all(), xt::range(0, 1), xt::all()), zeros, kExact,
                       {"head", "query", "column"}))
      << kOwnMistakes.Named("nan_dq_empty_row");
  // A dq of zeros everywhere has the zero row too: the other rows are torch's.
  EXPECT_TRUE(MatchesGolden(g.dq, GoldenFile(kGolden, "empty_row_dq"), kLayer,
                            {"head", "query", "column"}))
      << "the dq rows of the queries that see a key";
}

TEST(AttentionBackward, AKeyHiddenFromEveryQueryGetsNoGradient) {
  const Tensor3 q = testing::RandomTensor3(2, 4, 3, /*seed=*/31);  // (H=2, T=4, d_head=3)
  const Tensor3 k = testing::RandomTensor3(2, 6, 3, /*seed=*/32);  // (H=2, S=6, d_head=3)
  const Tensor3 v = testing::RandomTensor3(2, 6, 3, /*seed=*/33);
  const Tensor3 d_out = testing::RandomTensor3(2, 4, 3, /*seed=*/34);
  Tensor2 mask = xt::zeros<float>({4, 6});
  xt::view(mask, xt::all(), 2) = -kInf;  // key 2 is hidden from every query
  const AttentionGrads g = attention_backward(q, k, v, mask, d_out);
  const Tensor2 zeros = xt::zeros<float>({2, 3});
  EXPECT_TRUE(AllClose(xt::view(g.dk, xt::all(), 2, xt::all()), zeros, kExact, {"head", "column"}))
      << kOwnMistakes.Named("masked_dk_leak");
  EXPECT_TRUE(AllClose(xt::view(g.dv, xt::all(), 2, xt::all()), zeros, kExact, {"head", "column"}))
      << kOwnMistakes.Named("masked_dv_leak");
  // Zero gradients everywhere pass the checks above: every key's dv is
  // P^T d_out (plain loops, tests/common/naive.h), the visible keys' not zero.
  const naive::Attention a = naive::ScaledDotProduct(q, k, v, mask);
  for (std::size_t h = 0; h < 2; ++h) {
    const Tensor2 p_t = xt::transpose(xt::view(a.weights, h, xt::all(), xt::all()));  // (S, T)
    const Tensor2 d_out_h = xt::view(d_out, h, xt::all(), xt::all());                 // (T, d_head)
    EXPECT_TRUE(AllClose(xt::view(g.dv, h, xt::all(), xt::all()), naive::MatMul(p_t, d_out_h),
                         kLayer, {"key", "column"}))
        << "dv of head " << h << " must be P^T d_output";
  }
}

TEST(AttentionBackward, ScoresInTheHundredsGiveFiniteGradientsThatMatchTorch) {
  // Case "large" has scores up to ~440.
  const AttentionGrads g =
      ExpectAttentionCaseMatchesTorch(Case("large", /*masked=*/true), /*with_mistakes=*/false);
  EXPECT_TRUE(xt::all(xt::isfinite(g.dq)) && xt::all(xt::isfinite(g.dk)) &&
              xt::all(xt::isfinite(g.dv)))
      << kOwnMistakes.Named("no_max_backward");
}

TEST(AttentionBackward, OneHeadMatchesTorchAutograd) {
  ExpectAttentionCaseMatchesTorch(Case("single_head", /*masked=*/false));
}

// ---------------------------------------------------------------- mha goldens

// The layer cases: mha_x.npy and mha_d_y.npy through the case's layer and mask.
void ExpectLayerCaseMatchesTorch(const MultiHeadAttention& layer, const std::string& c,
                                 const std::optional<Tensor2>& mask) {
  testing::ExpectLayerCaseMatchesTorch(LayerCase{kGolden, "mha", c}, layer, mask);
}

TEST(MhaBackward, MatchesTorchAutogradWithoutAMask) {
  const MultiHeadAttention layer(kDModel, kHeads, kSeed);
  ExpectLayerCaseMatchesTorch(layer, "mha_plain", std::nullopt);
}

TEST(MhaBackward, MatchesTorchAutogradWithACausalMask) {
  const MultiHeadAttention layer(kDModel, kHeads, kSeed);
  ExpectLayerCaseMatchesTorch(layer, "mha_causal",
                              LoadGolden<2>(GoldenFile(kGolden, "mha_mask_causal")));
}

TEST(MhaBackward, MatchesTorchWhenAQuerySeesNoKey) {
  const MultiHeadAttention layer(kDModel, kHeads, kSeed);
  ExpectLayerCaseMatchesTorch(layer, "mha_empty_row",
                              LoadGolden<2>(GoldenFile(kGolden, "mha_mask_empty_row")));
}

TEST(MhaBackward, OneHeadMatchesTorchAutograd) {
  const MultiHeadAttention layer(kDModel, 1, kSeed);
  ExpectLayerCaseMatchesTorch(layer, "mha_one_head",
                              LoadGolden<2>(GoldenFile(kGolden, "mha_mask_causal")));
}

TEST(MhaBackward, UsesWeightsOverwrittenAfterAFirstCall) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "mha_x"));
  const Tensor2 d_y = LoadGolden<2>(GoldenFile(kGolden, "mha_d_y"));
  const Tensor2 mask = LoadGolden<2>(GoldenFile(kGolden, "mha_mask_causal"));
  mha_backward(layer, x, mask, d_y);  // a first call, so caching on first use is caught too
  layer.W_V = LoadGolden<2>(GoldenFile(kGolden, "mha_new_w_v"));
  const MhaGrads g = mha_backward(layer, x, mask, d_y);
  const std::string stale = kOwnMistakes.Message("w_v_cached");
  const testing::Misconception cached = kOwnMistakes.Mistake("w_v_cached");
  EXPECT_TRUE(MatchesGolden(g.dx, GoldenFile(kGolden, "mha_overwrite_w_v_dx"), kLayer,
                            {"token", "column"},
                            {{GoldenFile(kGolden, "mha_causal_dx"), stale, cached}}));
  EXPECT_TRUE(MatchesGolden(g.dW_O, GoldenFile(kGolden, "mha_overwrite_w_v_dW_O"), kLayer,
                            {"row", "column"},
                            {{GoldenFile(kGolden, "mha_causal_dW_O"), stale, cached}}));
}

// ---------------------------------------------------------------- finite differences

// A plain double-precision forward, independent of every solution, and
// central differences of L = sum(output * d_output) through it.
using D2 = xt::xtensor<double, 2>;
using D3 = xt::xtensor<double, 3>;

// softmax(q k^T / sqrt(d) + mask) v per head; a query that sees no key
// gets a zero row.
D3 AttentionForward(const D3& q, const D3& k, const D3& v, const std::optional<D2>& mask) {
  const std::size_t H = q.shape(0), T = q.shape(1), d = q.shape(2), S = k.shape(1);
  D3 out = xt::zeros<double>({H, T, d});
  std::vector<double> s(S);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < S; ++j) {
        double dot = 0.0;
        for (std::size_t c = 0; c < d; ++c) dot += q(h, i, c) * k(h, j, c);
        s[j] = dot / std::sqrt(double(d)) + (mask ? (*mask)(i, j) : 0.0);
        max = std::max(max, s[j]);
      }
      if (std::isinf(max)) continue;  // sees no key: a zero row
      double sum = 0.0;
      for (std::size_t j = 0; j < S; ++j) sum += (s[j] = std::exp(s[j] - max));
      for (std::size_t j = 0; j < S; ++j)
        for (std::size_t c = 0; c < d; ++c) out(h, i, c) += s[j] / sum * v(h, j, c);
    }
  }
  return out;
}

// The double-precision helpers of tests/common/naive.h.
D2 MatMulD(const D2& a, const D2& b) { return naive::MatMulOf(a, b); }
D3 SplitD(const D2& a, std::size_t H) { return naive::SplitHeadsOf(a, H); }
D2 CombineD(const D3& a) { return naive::CombineHeadsOf(a); }
using naive::CentralDifferences;
using naive::SumOfProducts;

std::optional<D2> ToDouble(const std::optional<Tensor2>& mask) {
  if (!mask) return std::nullopt;
  return D2(xt::cast<double>(*mask));
}

// Compares attention_backward with central differences on these inputs.
void ExpectAttentionMatchesFiniteDifferences(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                             const std::optional<Tensor2>& mask,
                                             const Tensor3& d_out) {
  const AttentionGrads g = attention_backward(q, k, v, mask, d_out);
  D3 qd = xt::cast<double>(q), kd = xt::cast<double>(k), vd = xt::cast<double>(v);
  const D3 dod = xt::cast<double>(d_out);
  const std::optional<D2> md = ToDouble(mask);
  auto objective = [&] { return SumOfProducts(AttentionForward(qd, kd, vd, md), dod); };
  const Tensor3 dq = xt::cast<float>(CentralDifferences(qd, objective));
  const Tensor3 dk = xt::cast<float>(CentralDifferences(kd, objective));
  const Tensor3 dv = xt::cast<float>(CentralDifferences(vd, objective));
  EXPECT_TRUE(AllClose(g.dq, dq, kLayer, {"head", "query", "column"})) << "dq" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dk, dk, kLayer, {"head", "key", "column"})) << "dk" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dv, dv, kLayer, {"head", "key", "column"})) << "dv" << kSeeDoc;
}

// Compares mha_backward with central differences of the double layer.
void ExpectLayerMatchesFiniteDifferences(const MultiHeadAttention& layer, const Tensor2& x,
                                         const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const MhaGrads g = mha_backward(layer, x, mask, d_y);
  D2 xd = xt::cast<double>(x);
  D2 wq = xt::cast<double>(layer.W_Q), wk = xt::cast<double>(layer.W_K);
  D2 wv = xt::cast<double>(layer.W_V), wo = xt::cast<double>(layer.W_O);
  const D2 dyd = xt::cast<double>(d_y);
  const std::optional<D2> md = ToDouble(mask);
  const std::size_t H = static_cast<std::size_t>(layer.n_heads);
  auto objective = [&] {
    const D3 o = AttentionForward(SplitD(MatMulD(xd, wq), H), SplitD(MatMulD(xd, wk), H),
                                  SplitD(MatMulD(xd, wv), H), md);
    return SumOfProducts(MatMulD(CombineD(o), wo), dyd);
  };
  const std::vector<std::string> rc = {"row", "column"};
  EXPECT_TRUE(AllClose(g.dx, xt::cast<float>(CentralDifferences(xd, objective)), kLayer,
                       {"token", "column"})) << "dx" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_Q, xt::cast<float>(CentralDifferences(wq, objective)), kLayer, rc))
      << "dW_Q" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_K, xt::cast<float>(CentralDifferences(wk, objective)), kLayer, rc))
      << "dW_K" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_V, xt::cast<float>(CentralDifferences(wv, objective)), kLayer, rc))
      << "dW_V" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_O, xt::cast<float>(CentralDifferences(wo, objective)), kLayer, rc))
      << "dW_O" << kSeeDoc;
}

TEST(AttentionBackward, MatchesFiniteDifferencesInDouble) {
  ExpectAttentionMatchesFiniteDifferences(
      testing::RandomTensor3(2, 6, 3, 41), testing::RandomTensor3(2, 8, 3, 42),
      testing::RandomTensor3(2, 8, 3, 43), naive::CausalMask(6, 8),
      testing::RandomTensor3(2, 6, 3, 44));
}

TEST(MhaBackward, MatchesFiniteDifferencesInDouble) {
  const MultiHeadAttention layer(/*d_model=*/10, /*n_heads=*/5, /*seed=*/11);  // d_head = 2
  ExpectLayerMatchesFiniteDifferences(layer, testing::RandomTensor2(6, 10, 51),
                                      naive::CausalMask(6, 6), testing::RandomTensor2(6, 10, 52));
}

// Fresh random sizes and inputs that no file can predict (replay a failure
// with MHA_TEST_SEED=<seed>).
TEST(AttentionBackward, MatchesFiniteDifferencesOnFreshRandomInputs) {
  testing::FreshDraws gen;
  const std::size_t H = gen.Pick(1, 4), T = gen.Pick(1, 7), d = gen.Pick(1, 6);
  const std::size_t S = T + gen.Pick(0, 4);
  const auto s = static_cast<std::uint32_t>(gen());
  std::optional<Tensor2> mask;
  if (gen.Pick(0, 1)) mask = naive::CausalMask(int(T), int(S));
  SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) + " S=" + std::to_string(S) +
               " d_head=" + std::to_string(d) + (mask ? " causal" : " no mask"));
  ExpectAttentionMatchesFiniteDifferences(
      testing::RandomTensor3(H, T, d, s), testing::RandomTensor3(H, S, d, s + 1),
      testing::RandomTensor3(H, S, d, s + 2), mask, testing::RandomTensor3(H, T, d, s + 3));
}

TEST(MhaBackward, MatchesFiniteDifferencesOnFreshRandomInputs) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 4), d_head = gen.Pick(1, 4), T = gen.Pick(1, 7);
  const int d_model = H * d_head;
  MultiHeadAttention layer(d_model, H, gen());
  const auto s = static_cast<std::uint32_t>(gen());
  std::optional<Tensor2> mask;
  if (gen.Pick(0, 1)) mask = naive::CausalMask(int(T), int(T));
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(H) +
               " T=" + std::to_string(T) + (mask ? " causal" : " no mask"));
  ExpectLayerMatchesFiniteDifferences(layer, testing::RandomTensor2(T, d_model, s), mask,
                                      testing::RandomTensor2(T, d_model, s + 1));
}

// ---------------------------------------------------------------- bad arguments

TEST(AttentionBackwardArguments, RejectsADOutputNotShapedLikeQ) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        attention_backward(testing::RandomTensor3(3, 5, 4, 1), testing::RandomTensor3(3, 7, 4, 2),
                           testing::RandomTensor3(3, 7, 4, 3), std::nullopt,
                           testing::RandomTensor3(3, 7, 4, 4));
      },
      {"(3, 7, 4)", "(3, 5, 4)"}))
      << "d_output is the gradient of the output, so it has q's shape (H, T, d_head)";
}

TEST(AttentionBackwardArguments, RejectsKeysWithAnotherHeadCount) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        attention_backward(testing::RandomTensor3(3, 5, 4, 1), testing::RandomTensor3(2, 7, 4, 2),
                           testing::RandomTensor3(2, 7, 4, 3), std::nullopt,
                           testing::RandomTensor3(3, 5, 4, 4));
      },
      {"(3, 5, 4)", "(2, 7, 4)"}));
}

TEST(AttentionBackwardArguments, RejectsAMaskThatIsNotTByS) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        attention_backward(testing::RandomTensor3(3, 5, 4, 1), testing::RandomTensor3(3, 7, 4, 2),
                           testing::RandomTensor3(3, 7, 4, 3), Tensor2(xt::zeros<float>({5, 5})),
                           testing::RandomTensor3(3, 5, 4, 4));
      },
      {"(5, 5)"}));
}

TEST(MhaBackwardArguments, RejectsAnInputWhoseWidthIsNotDModel) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        const MultiHeadAttention layer(kDModel, kHeads, kSeed);
        mha_backward(layer, xt::zeros<float>({5, 10}), std::nullopt, xt::zeros<float>({5, 10}));
      },
      {"10", "12"}));
}

TEST(MhaBackwardArguments, RejectsADYNotShapedLikeX) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        const MultiHeadAttention layer(kDModel, kHeads, kSeed);
        mha_backward(layer, testing::RandomTensor2(5, 12, 1), std::nullopt,
                     testing::RandomTensor2(4, 12, 2));
      },
      {"(4, 12)", "(5, 12)"}));
}

TEST(MhaBackwardArguments, RejectsAMaskThatIsNotTByT) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        const MultiHeadAttention layer(kDModel, kHeads, kSeed);
        mha_backward(layer, testing::RandomTensor2(5, 12, 1), Tensor2(xt::zeros<float>({5, 4})),
                     testing::RandomTensor2(5, 12, 2));
      },
      {"(5, 4)"}));
}

}  // namespace
}  // namespace mha
