// Hidden tests for lab 12: gqa_backward and mla_backward.
//
// Layers under test unless said otherwise: GroupedQueryAttention(d_model=12,
// n_heads=4, n_kv_heads=2, seed=7) and MultiHeadLatentAttention(d_model=12,
// n_heads=3, kv_rank=5, seed=7), on T=5 tokens. Expected gradients come from
// PyTorch's autograd in float64 (tests/12_variant_backward/gen_goldens.py);
// the *_mistake_* goldens hold what a classic mistake computes, so a failure
// can name it.
//
// The finite-difference tests need no golden: they differentiate a plain
// double-precision forward (reference.h; central differences, step 1e-5) and
// compare the learner's float gradients with it, on fixed inputs and on fresh
// random ones.
#include "labs/12_variant_backward/variant_backward.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/12_variant_backward/variant_backward_test_util.h"
#include "tests/12_variant_backward/reference.h"
#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace {

using reference::D2;
using testing::AllClose;
using testing::GoldenFile;
using testing::kLayer;
using testing::KnownMistake;
using testing::kTokenAxes;
using testing::kVariantBackwardMistakes;
using testing::kWeightAxes;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;
using testing::VariantCase;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::uint64_t kSeed = 7;

const std::string kGolden = "tests/12_variant_backward/golden/";
const char kSeeDoc[] = "; see docs/12_variant_backward.md, \"Classic mistakes\"";

std::optional<Tensor2> Mask(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return LoadGolden<2>(GoldenFile(kGolden, "mask_" + name));
}

// ---------------------------------------------------------------- GQA goldens

// The golden cases of the grading tests: every layer on x.npy and d_y.npy
// with the mask mask_<mask>.npy (none when empty). The public tests' cases
// (labs/12_variant_backward/variant_backward_test_util.h) run on them, and
// the tests below add cases of their own.
VariantCase Case(const std::string& c, const std::string& mask) {
  return {kGolden, "x", "d_y", mask.empty() ? "" : "mask_" + mask, c};
}

// After a first call, `weight` (W_K, named "W_K") := <c>_new_w_k.npy must change
// dx and `grad` to <c>_overwrite_w_k_dx.npy, ..._<grad>.npy; gradients still
// equal to <c>_causal_* mean the old weight was kept.
template <class Layer, class Grads>
void ExpectUsesWeightOverwrittenAfterAFirstCall(
    Grads (*backward)(const Layer&, const Tensor2&, const std::optional<Tensor2>&,
                      const Tensor2&),
    Layer layer, Tensor2 Layer::*weight, const std::string& weight_name, const std::string& c,
    Tensor2 Grads::*grad, const std::string& grad_name) {
  std::string w = weight_name;  // "W_K" -> "w_k"
  // ASCII letters only, not the C library's tolower: the same under every locale (a
  // Turkish one lower-cases "I" to a dotless "ı").
  for (char& ch : w) ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "x")),
                d_y = LoadGolden<2>(GoldenFile(kGolden, "d_y"));
  backward(layer, x, Mask("causal"), d_y);  // a first call: caching on first use is caught
  layer.*weight = LoadGolden<2>(GoldenFile(kGolden, c + "_new_" + w));
  const Grads g = backward(layer, x, Mask("causal"), d_y);
  const std::string stale = "overwriting " + weight_name +
                            " had no effect: something derived from the weights was cached" +
                            kSeeDoc;
  const std::string overwrite = c + "_overwrite_" + w + "_";
  EXPECT_TRUE(MatchesGolden(g.dx, GoldenFile(kGolden, overwrite + "dx"), kLayer, kTokenAxes,
                            {{GoldenFile(kGolden, c + "_causal_dx"), stale}}));
  EXPECT_TRUE(MatchesGolden(g.*grad, GoldenFile(kGolden, overwrite + grad_name), kLayer,
                            kWeightAxes,
                            {{GoldenFile(kGolden, c + "_causal_" + grad_name), stale}}));
}

// shared: the layer has 1 < n_kv_heads < n_heads (both summation mistakes
// apply); mqa: n_kv_heads == 1 (only the one-query-head mistake applies).
void ExpectGqaCaseMatchesTorch(const GroupedQueryAttention& layer, const std::string& c,
                               const std::string& mask) {
  testing::ExpectGqaCaseMatchesTorch(Case(c, mask), layer);
}

TEST(GqaBackward, MatchesTorchAutogradWithoutAMask) {
  ExpectGqaCaseMatchesTorch(GroupedQueryAttention(12, 4, 2, kSeed), "gqa_plain", "");
}

TEST(GqaBackward, MatchesTorchAutogradWithACausalMask) {
  ExpectGqaCaseMatchesTorch(GroupedQueryAttention(12, 4, 2, kSeed), "gqa_causal", "causal");
}

TEST(GqaBackward, MatchesTorchWhenAQuerySeesNoKey) {
  ExpectGqaCaseMatchesTorch(GroupedQueryAttention(12, 4, 2, kSeed), "gqa_empty_row",
                            "empty_row");
}

TEST(GqaBackward, MultiQueryAttentionSumsEveryQueryHeadIntoTheOneKvHead) {
  ExpectGqaCaseMatchesTorch(GroupedQueryAttention(12, 4, 1, kSeed), "mqa_causal", "causal");
}

TEST(GqaBackward, WithAsManyKvHeadsAsQueryHeadsItMatchesMultiHeadAttentionsGradients) {
  // The goldens equal torch.nn.MultiheadAttention's gradients (lab 10's mha_backward).
  ExpectGqaCaseMatchesTorch(GroupedQueryAttention(12, 4, 4, kSeed), "mha_causal", "causal");
}

TEST(GqaBackward, UsesWeightsOverwrittenAfterAFirstCall) {
  ExpectUsesWeightOverwrittenAfterAFirstCall(
      &gqa_backward, GroupedQueryAttention(12, 4, 2, kSeed), &GroupedQueryAttention::W_K, "W_K",
      "gqa", &GqaGrads::dW_V, "dW_V");
}

// ---------------------------------------------------------------- MLA goldens

void ExpectMlaCaseMatchesTorch(const MultiHeadLatentAttention& layer, const std::string& c,
                               const std::string& mask) {
  testing::ExpectMlaCaseMatchesTorch(Case(c, mask), layer);
}

TEST(MlaBackward, MatchesTorchAutogradWithoutAMask) {
  ExpectMlaCaseMatchesTorch(MultiHeadLatentAttention(12, 3, 5, kSeed), "mla_plain", "");
}

TEST(MlaBackward, MatchesTorchAutogradWithACausalMask) {
  ExpectMlaCaseMatchesTorch(MultiHeadLatentAttention(12, 3, 5, kSeed), "mla_causal", "causal");
}

TEST(MlaBackward, MatchesTorchWhenAQuerySeesNoKey) {
  ExpectMlaCaseMatchesTorch(MultiHeadLatentAttention(12, 3, 5, kSeed), "mla_empty_row",
                            "empty_row");
}

TEST(MlaBackward, ALatentOfRankOneMatchesTorchAutograd) {
  ExpectMlaCaseMatchesTorch(MultiHeadLatentAttention(12, 3, 1, kSeed), "mla_rank1", "causal");
}

TEST(MlaBackward, UsesWeightsOverwrittenAfterAFirstCall) {
  ExpectUsesWeightOverwrittenAfterAFirstCall(
      &mla_backward, MultiHeadLatentAttention(12, 3, 5, kSeed), &MultiHeadLatentAttention::W_UK,
      "W_UK", "mla", &MlaGrads::dW_DKV, "dW_DKV");
}

// A layer whose every field the test sets to the API's draw
// (tests/common/seeded_weights.h), for the tests that compare a backward with
// a reference run on the same layer: no expected number may come from weights
// a constructor chose. The golden tests use the constructor's layer.
GroupedQueryAttention SeededGqa(int d_model, int n_heads, int n_kv_heads, std::uint64_t seed) {
  GroupedQueryAttention layer(d_model, n_heads, n_kv_heads, seed);
  seeded::InstallGqa(layer, d_model, n_heads, n_kv_heads, seed);
  return layer;
}

MultiHeadLatentAttention SeededMla(int d_model, int n_heads, int kv_rank, std::uint64_t seed) {
  MultiHeadLatentAttention layer(d_model, n_heads, kv_rank, seed);
  seeded::InstallMla(layer, d_model, n_heads, kv_rank, seed);
  return layer;
}

// ---------------------------------------------------------------- masked rows

// A query that sees no key has output 0 whatever the weights: its row of d_y
// must reach nothing.
TEST(GqaBackward, TheUpstreamGradientOfAQueryThatSeesNoKeyReachesNoWeight) {
  const GroupedQueryAttention layer = SeededGqa(12, 4, 2, kSeed);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "x")),
                d_y = LoadGolden<2>(GoldenFile(kGolden, "d_y"));
  Tensor2 d_y0 = d_y;
  xt::view(d_y0, 0, xt::all()) = 0.0f;  // query 0 sees nothing in mask_empty_row
  const GqaGrads a = gqa_backward(layer, x, Mask("empty_row"), d_y);
  // Two answers that compute nothing agree too: the full d_y's gradients are torch's.
  ASSERT_TRUE(MatchesGolden(a.dx, GoldenFile(kGolden, "gqa_empty_row_dx"), kLayer, kTokenAxes))
      << "precondition: dx with the full d_y must be torch's";
  ASSERT_TRUE(MatchesGolden(a.dW_K, GoldenFile(kGolden, "gqa_empty_row_dW_K"), kLayer,
                            kWeightAxes))
      << "precondition: dW_K with the full d_y must be torch's";
  const GqaGrads b = gqa_backward(layer, x, Mask("empty_row"), d_y0);
  EXPECT_TRUE(AllClose(a.dW_K, b.dW_K, kLayer, kWeightAxes))
      << "d_y of a query that sees no key leaked into dW_K" << kSeeDoc;
  EXPECT_TRUE(AllClose(a.dW_V, b.dW_V, kLayer, kWeightAxes))
      << "d_y of a query that sees no key leaked into dW_V" << kSeeDoc;
  EXPECT_TRUE(AllClose(a.dx, b.dx, kLayer, kTokenAxes))
      << "d_y of a query that sees no key leaked into dx" << kSeeDoc;
}

TEST(MlaBackward, TheUpstreamGradientOfAQueryThatSeesNoKeyReachesNoWeight) {
  const MultiHeadLatentAttention layer = SeededMla(12, 3, 5, kSeed);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "x")),
                d_y = LoadGolden<2>(GoldenFile(kGolden, "d_y"));
  Tensor2 d_y0 = d_y;
  xt::view(d_y0, 0, xt::all()) = 0.0f;
  const MlaGrads a = mla_backward(layer, x, Mask("empty_row"), d_y);
  // Two answers that compute nothing agree too: the full d_y's gradients are torch's.
  ASSERT_TRUE(MatchesGolden(a.dx, GoldenFile(kGolden, "mla_empty_row_dx"), kLayer, kTokenAxes))
      << "precondition: dx with the full d_y must be torch's";
  ASSERT_TRUE(MatchesGolden(a.dW_DKV, GoldenFile(kGolden, "mla_empty_row_dW_DKV"), kLayer,
                            kWeightAxes))
      << "precondition: dW_DKV with the full d_y must be torch's";
  const MlaGrads b = mla_backward(layer, x, Mask("empty_row"), d_y0);
  EXPECT_TRUE(AllClose(a.dW_DKV, b.dW_DKV, kLayer, kWeightAxes))
      << "d_y of a query that sees no key leaked into dW_DKV" << kSeeDoc;
  EXPECT_TRUE(AllClose(a.dx, b.dx, kLayer, kTokenAxes))
      << "d_y of a query that sees no key leaked into dx" << kSeeDoc;
}

// ---------------------------------------------------------------- finite differences

D2 ToD(const Tensor2& t) { return xt::cast<double>(t); }
std::optional<D2> ToD(const std::optional<Tensor2>& m) {
  if (!m) return std::nullopt;
  return D2(xt::cast<double>(*m));
}
Tensor2 ToF(const D2& t) { return xt::cast<float>(t); }

void ExpectGqaMatchesFiniteDifferences(const GroupedQueryAttention& layer, const Tensor2& x,
                                       const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const GqaGrads g = gqa_backward(layer, x, mask, d_y);
  D2 xd = ToD(x), wq = ToD(layer.W_Q), wk = ToD(layer.W_K), wv = ToD(layer.W_V),
     wo = ToD(layer.W_O);
  const D2 dyd = ToD(d_y);
  const std::optional<D2> md = ToD(mask);
  auto objective = [&] {
    return naive::SumOfProducts(
        reference::GqaForward(xd, wq, wk, wv, wo, layer.n_heads, layer.n_kv_heads, md), dyd);
  };
  using naive::CentralDifferences;
  EXPECT_TRUE(AllClose(g.dx, ToF(CentralDifferences(xd, objective)), kLayer, kTokenAxes))
      << "dx" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_Q, ToF(CentralDifferences(wq, objective)), kLayer, kWeightAxes))
      << "dW_Q" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_K, ToF(CentralDifferences(wk, objective)), kLayer, kWeightAxes))
      << "dW_K" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_V, ToF(CentralDifferences(wv, objective)), kLayer, kWeightAxes))
      << "dW_V" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_O, ToF(CentralDifferences(wo, objective)), kLayer, kWeightAxes))
      << "dW_O" << kSeeDoc;
}

void ExpectMlaMatchesFiniteDifferences(const MultiHeadLatentAttention& layer, const Tensor2& x,
                                       const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const MlaGrads g = mla_backward(layer, x, mask, d_y);
  D2 xd = ToD(x), wq = ToD(layer.W_Q), wdkv = ToD(layer.W_DKV), wuk = ToD(layer.W_UK),
     wuv = ToD(layer.W_UV), wo = ToD(layer.W_O);
  const D2 dyd = ToD(d_y);
  const std::optional<D2> md = ToD(mask);
  auto objective = [&] {
    return naive::SumOfProducts(
        reference::MlaForward(xd, wq, wdkv, wuk, wuv, wo, layer.n_heads, md), dyd);
  };
  using naive::CentralDifferences;
  EXPECT_TRUE(AllClose(g.dx, ToF(CentralDifferences(xd, objective)), kLayer, kTokenAxes))
      << "dx" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_Q, ToF(CentralDifferences(wq, objective)), kLayer, kWeightAxes))
      << "dW_Q" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_DKV, ToF(CentralDifferences(wdkv, objective)), kLayer, kWeightAxes))
      << "dW_DKV" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_UK, ToF(CentralDifferences(wuk, objective)), kLayer, kWeightAxes))
      << "dW_UK" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_UV, ToF(CentralDifferences(wuv, objective)), kLayer, kWeightAxes))
      << "dW_UV" << kSeeDoc;
  EXPECT_TRUE(AllClose(g.dW_O, ToF(CentralDifferences(wo, objective)), kLayer, kWeightAxes))
      << "dW_O" << kSeeDoc;
}

Tensor2 Causal(int T) {
  Tensor2 m = xt::zeros<float>({std::size_t(T), std::size_t(T)});
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) m(i, j) = -kInf;
  return m;
}

TEST(GqaBackward, MatchesFiniteDifferencesInDouble) {
  const GroupedQueryAttention layer =
      SeededGqa(/*d_model=*/12, /*n_heads=*/6, /*n_kv_heads=*/3, /*seed=*/11);
  ExpectGqaMatchesFiniteDifferences(layer, testing::RandomTensor2(6, 12, 51), Causal(6),
                                    testing::RandomTensor2(6, 12, 52));
}

TEST(MlaBackward, MatchesFiniteDifferencesInDouble) {
  const MultiHeadLatentAttention layer =
      SeededMla(/*d_model=*/8, /*n_heads=*/4, /*kv_rank=*/3, /*seed=*/11);
  ExpectMlaMatchesFiniteDifferences(layer, testing::RandomTensor2(6, 8, 53), Causal(6),
                                    testing::RandomTensor2(6, 8, 54));
}

// Fresh random sizes and inputs that no file can predict (replay a failure
// with MHA_TEST_SEED=<seed>).
TEST(GqaBackward, MatchesFiniteDifferencesOnFreshRandomInputs) {
  testing::FreshDraws gen;
  const int n_kv = gen.Pick(1, 3), group = gen.Pick(1, 3), d_head = gen.Pick(1, 3),
            T = gen.Pick(1, 7);
  const int H = n_kv * group, d_model = H * d_head;
  const GroupedQueryAttention layer = SeededGqa(d_model, H, n_kv, gen());
  const auto s = static_cast<std::uint32_t>(gen());
  std::optional<Tensor2> mask;
  if (gen.Pick(0, 1)) mask = Causal(T);
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(H) +
               " n_kv_heads=" + std::to_string(n_kv) + " T=" + std::to_string(T) +
               (mask ? " causal" : " no mask"));
  ExpectGqaMatchesFiniteDifferences(layer, testing::RandomTensor2(T, d_model, s), mask,
                                    testing::RandomTensor2(T, d_model, s + 1));
}

TEST(MlaBackward, MatchesFiniteDifferencesOnFreshRandomInputs) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 4), d_head = gen.Pick(1, 3), rank = gen.Pick(1, 6), T = gen.Pick(1, 7);
  const int d_model = H * d_head;
  const MultiHeadLatentAttention layer = SeededMla(d_model, H, rank, gen());
  const auto s = static_cast<std::uint32_t>(gen());
  std::optional<Tensor2> mask;
  if (gen.Pick(0, 1)) mask = Causal(T);
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(H) +
               " kv_rank=" + std::to_string(rank) + " T=" + std::to_string(T) +
               (mask ? " causal" : " no mask"));
  ExpectMlaMatchesFiniteDifferences(layer, testing::RandomTensor2(T, d_model, s), mask,
                                    testing::RandomTensor2(T, d_model, s + 1));
}

// ---------------------------------------------------------------- bad arguments

// backward(layer, x, mask, d_y) with x (x_rows, x_cols) and d_y (dy_rows,
// dy_cols) random must throw std::invalid_argument naming `mentions`.
template <class Layer, class Grads>
void ExpectRejects(Grads (*backward)(const Layer&, const Tensor2&, const std::optional<Tensor2>&,
                                     const Tensor2&),
                   const Layer& layer, std::size_t x_rows, std::size_t x_cols,
                   const std::optional<Tensor2>& mask, std::size_t dy_rows, std::size_t dy_cols,
                   const std::vector<std::string>& mentions) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        backward(layer, testing::RandomTensor2(x_rows, x_cols, 1), mask,
                 testing::RandomTensor2(dy_rows, dy_cols, 2));
      },
      mentions));
}

GroupedQueryAttention GqaLayer() { return GroupedQueryAttention(12, 4, 2, kSeed); }
MultiHeadLatentAttention MlaLayer() { return MultiHeadLatentAttention(12, 3, 5, kSeed); }

TEST(GqaBackwardArguments, RejectsAnXWhoseWidthIsNotDModel) {
  ExpectRejects(&gqa_backward, GqaLayer(), 5, 10, std::nullopt, 5, 10, {"(5, 10)", "12"});
}

TEST(GqaBackwardArguments, RejectsADYNotShapedLikeX) {
  ExpectRejects(&gqa_backward, GqaLayer(), 5, 12, std::nullopt, 5, 6, {"(5, 6)", "(5, 12)"});
}

TEST(GqaBackwardArguments, RejectsAMaskThatIsNotTByT) {
  ExpectRejects(&gqa_backward, GqaLayer(), 5, 12, Causal(4), 5, 12, {"(4, 4)", "(5, 5)"});
}

TEST(MlaBackwardArguments, RejectsAnXWhoseWidthIsNotDModel) {
  ExpectRejects(&mla_backward, MlaLayer(), 5, 9, std::nullopt, 5, 9, {"(5, 9)", "12"});
}

TEST(MlaBackwardArguments, RejectsADYNotShapedLikeX) {
  ExpectRejects(&mla_backward, MlaLayer(), 5, 12, std::nullopt, 4, 12, {"(4, 12)", "(5, 12)"});
}

TEST(MlaBackwardArguments, RejectsAMaskThatIsNotTByT) {
  ExpectRejects(&mla_backward, MlaLayer(), 5, 12, Causal(6), 5, 12, {"(6, 6)", "(5, 5)"});
}

}  // namespace
}  // namespace mha
