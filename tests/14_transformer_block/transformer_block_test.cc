// Hidden tests for lab 14: LayerNorm, GELU, the FFN, RoPE's backward, the
// rotary layer's backward and the pre-LN block, forward and backward.
//
// Golden cases (tests/14_transformer_block/gen_goldens.py, PyTorch in float64;
// other shapes, seeds, an eps and a base than the public ones):
//   ln      T 7, d 12            ln_eps  T 3, d 6, eps 1e-2      ln_offset  T 3, d 32, +1000
//   gelu    45 values in [-10, 10]
//   ffn     d 12, d_ff 20, T 7, seed 1416
//   rope    3 heads, T 5, d_head 6, start 17, base 500000
//   attn    d 24, 3 heads, T 7, base 500000
//   block   d 24, 3 heads, d_ff 40, T 9, seed 1419
//   mini    d 64, 4 heads, d_ff 256, T 25, seed 1420 (the seed course's block, lab 15's)
// The tests are in the order in which a classic mistake shows first, so that
// the first failure names it.
//
// The finite-difference and fresh-input tests need no golden: they
// differentiate reference.h's double-precision forwards by central
// differences (tests/common/naive.h), on objects whose every parameter the
// test installs itself (tests/common/seeded_weights.h): no expected number
// comes from state the learner's constructor chose.
#include "labs/14_transformer_block/transformer_block.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/14_transformer_block/transformer_block_test_util.h"
#include "tests/14_transformer_block/reference.h"
#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace {

using reference::D1;
using reference::D2;
using reference::D3;
using testing::AllClose;
using testing::kBlock;
using testing::kLayer;
using testing::kRowColumn;
using testing::kRowOp;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "tests/14_transformer_block/golden/";
const std::string kSeeDoc = "; see docs/14_transformer_block.md";
const testing::BlockCase kBlockCase{kGolden, "block", 24, 3, 40, 1419, 10000.0};
const testing::BlockCase kMini{kGolden, "mini", 64, 4, 256, 1420, 10000.0};

// ---------------------------------------------------------------- helpers

template <class T, std::size_t N>
xt::xtensor<double, N> Double(const xt::xtensor<T, N>& t) {
  return xt::cast<double>(t);
}
template <std::size_t N>
xt::xtensor<float, N> Float(const xt::xtensor<double, N>& t) {
  return xt::cast<float>(t);
}

// Standard-normal draws from a fresh or fixed generator, as float.
template <class Gen>
Tensor2 Normal2(Gen& gen, std::size_t rows, std::size_t cols, float scale = 1.0f) {
  return testing::RandomTensor2(rows, cols, static_cast<std::uint32_t>(gen()), scale);
}
template <class Gen>
Tensor1 Normal1(Gen& gen, std::size_t n, float scale = 1.0f) {
  const Tensor2 m = Normal2(gen, 1, n, scale);
  return xt::view(m, 0, xt::all());
}

// A block whose every field the test installs: the API's draws, then gammas,
// betas and biases moved away from 1 and 0 so that a gradient that ignores
// one of them shows.
template <class Gen>
TransformerBlock SeededBlock(int d_model, int n_heads, int d_ff, std::uint64_t seed, double base,
                             Gen& gen) {
  TransformerBlock block(d_model, n_heads, d_ff, seed, base);
  seeded::InstallBlock(block, d_model, n_heads, d_ff, seed, base);
  const std::size_t d = d_model, f = d_ff;
  block.ln1_gamma = 1.0f + Normal1(gen, d, 0.3f);
  block.ln2_gamma = 1.0f + Normal1(gen, d, 0.3f);
  block.ln1_beta = Normal1(gen, d, 0.3f);
  block.ln2_beta = Normal1(gen, d, 0.3f);
  block.ffn.b_1 = Normal1(gen, f, 0.3f);
  block.ffn.b_2 = Normal1(gen, d, 0.3f);
  return block;
}

// `actual`, the gradient called `name`, against d loss / d param by central
// differences of the double reference (the axes named by rank).
template <class A, class P, class F>
void ExpectDifferences(const std::string& name, const A& actual, P& param, F loss,
                       testing::Tolerance tol) {
  const auto expected = Float(naive::CentralDifferences(param, loss));
  const std::vector<std::string> axes =
      actual.dimension() == 1   ? testing::kFeature
      : actual.dimension() == 2 ? kRowColumn
                                : std::vector<std::string>{"head", "position", "feature"};
  EXPECT_TRUE(AllClose(actual, expected, tol, axes)) << name << kSeeDoc;
}

// Every field of block_backward against central differences of the double
// reference block (the loss sum(y * dy)).
void ExpectBlockGradsMatchFiniteDifferences(const TransformerBlock& block, const Tensor2& x,
                                            const Tensor2& dy) {
  const BlockGrads g = block_backward(block, x, dy);
  reference::Block b = reference::FromBlock(block);
  D2 xd = Double(x);
  auto loss = [&] { return naive::SumOfProducts(reference::BlockForward(b, xd), dy); };
  ExpectDifferences("dx", g.dx, xd, loss, kBlock);
  ExpectDifferences("dln1_gamma", g.dln1_gamma, b.ln1_gamma, loss, kBlock);
  ExpectDifferences("dln1_beta", g.dln1_beta, b.ln1_beta, loss, kBlock);
  ExpectDifferences("dW_Q", g.dW_Q, b.W_Q, loss, kBlock);
  ExpectDifferences("dW_K", g.dW_K, b.W_K, loss, kBlock);
  ExpectDifferences("dW_V", g.dW_V, b.W_V, loss, kBlock);
  ExpectDifferences("dW_O", g.dW_O, b.W_O, loss, kBlock);
  ExpectDifferences("dln2_gamma", g.dln2_gamma, b.ln2_gamma, loss, kBlock);
  ExpectDifferences("dln2_beta", g.dln2_beta, b.ln2_beta, loss, kBlock);
  ExpectDifferences("dW_1", g.dW_1, b.W_1, loss, kBlock);
  ExpectDifferences("db_1", g.db_1, b.b_1, loss, kBlock);
  ExpectDifferences("dW_2", g.dW_2, b.W_2, loss, kBlock);
  ExpectDifferences("db_2", g.db_2, b.b_2, loss, kBlock);
}

// ---------------------------------------------------------------- goldens

TEST(LayerNorm, MatchesTorchForwardAndBackward) {
  testing::ExpectLayerNormMatchesTorch(kGolden, "ln");
}

TEST(LayerNorm, MatchesTorchWithALargerEps) {
  testing::ExpectLayerNormMatchesTorch(kGolden, "ln_eps", 0.01f);  // the generator's eps
}

TEST(LayerNorm, HoldsItsDigitsOnRowsOffsetByAThousand) {
  testing::ExpectLayerNormHoldsItsDigitsOnOffsetRows(kGolden, "ln_offset", 1000.0f);
}

TEST(Gelu, MatchesTorchExactGeluAndItsGradientFromMinusTenToTen) {
  testing::ExpectGeluMatchesTorch(kGolden, "gelu");
}

TEST(FeedForward, DrawsItsWeightsAndMatchesTorchForwardAndBackward) {
  testing::ExpectFeedForwardMatchesTorch(kGolden, "ffn", 12, 20, 1416);
}

TEST(RopeBackward, MatchesTorchAutogradAtStart17WithBase500000) {
  testing::ExpectRopeBackwardMatchesTorch(kGolden, "rope", 17, 500000.0);
}

TEST(RotaryAttentionBackward, MatchesTorchAutogradWithBase500000) {
  testing::ExpectRotaryBackwardMatchesTorch(kGolden, "attn", 24, 3, 500000.0);
}

TEST(TransformerBlock, DrawsAttentionFromSeedAndTheFfnFromSeedPlusOne) {
  testing::ExpectBlockDrawsItsWeights(kBlockCase);
  testing::ExpectBlockDrawsItsWeights(kMini);
}

TEST(TransformerBlock, ForwardMatchesTorch) { testing::ExpectBlockForwardMatchesTorch(kBlockCase); }

TEST(TransformerBlock, ForwardMatchesTorchAtTheSeedCoursesSizes) {
  testing::ExpectBlockForwardMatchesTorch(kMini);
}

TEST(BlockBackward, MatchesTorchAutograd) { testing::ExpectBlockBackwardMatchesTorch(kBlockCase); }

TEST(BlockBackward, MatchesTorchAutogradAtTheSeedCoursesSizes) {
  testing::ExpectBlockBackwardMatchesTorch(kMini);
}

// ---------------------------------------------------------------- properties

TEST(TransformerBlock, CountsItsParameters) {
  // 4 d^2 + 2 d d_ff + d_ff + d + 4 d, for two sizes that share no factor.
  EXPECT_EQ(TransformerBlock(64, 4, 256).parameter_count(), 49728u);
  EXPECT_EQ(TransformerBlock(6, 3, 7).parameter_count(), 4u * 36 + 2 * 6 * 7 + 7 + 6 + 4 * 6);
  EXPECT_EQ(FeedForward(6, 7).parameter_count(), 2u * 6 * 7 + 7 + 6);
}

// A constant row has no spread to normalise: xhat is 0 (not 0/0), so y = beta;
// the rows around it, which do spread, are normalised as the reference does.
TEST(LayerNorm, OfAConstantRowIsBetaNotNaN) {
  Tensor2 x = testing::RandomTensor2(4, 5, 1404);
  xt::view(x, 1, xt::all()) = -7.5f;
  xt::view(x, 2, xt::all()) = 123.0f;
  const Tensor1 gamma = {2.0f, -1.0f, 0.5f, 3.0f, 1.0f}, beta = {0.3f, -0.2f, 1.5f, 0.0f, -4.0f};
  Tensor2 expected = Float(reference::LayerNorm(Double(x), Double(gamma), Double(beta)));
  xt::view(expected, 1, xt::all()) = beta;  // exactly beta, where the reference also gives it
  xt::view(expected, 2, xt::all()) = beta;
  EXPECT_TRUE(AllClose(layer_norm(x, gamma, beta), expected, kRowOp, kRowColumn))
      << "mu = x on a constant row, so x - mu = 0 and y = beta" << kSeeDoc;
}

// Shifting a row changes nothing (mean(g) term), and with eps -> 0 neither
// does scaling it (the mean(g * xhat) term): with gamma = 1, per row,
//   sum_i dx = 0    and    sum_i dx * xhat = rstd * sum_i(g * xhat) * eps / (var + eps).
// A large eps makes the second sum clearly non-zero, so zero gradients fail.
TEST(LayerNorm, BackwardRowsSumToZeroAndLeaveOnlyEpsAlongXhat) {
  const float eps = 0.5f;
  std::mt19937_64 gen(14);
  const Tensor2 x = Normal2(gen, 4, 6), dy = Normal2(gen, 4, 6);
  const Tensor1 ones = xt::ones<float>({6});
  const LayerNormGrads g = layer_norm_backward(x, ones, eps, dy);
  Tensor1 row_sums = xt::zeros<float>({4}), along_xhat = xt::zeros<float>({4});
  Tensor1 expected_along = xt::zeros<float>({4});
  for (std::size_t t = 0; t < 4; ++t) {
    double mu = 0, var = 0;
    for (std::size_t i = 0; i < 6; ++i) mu += x(t, i) / 6.0;
    for (std::size_t i = 0; i < 6; ++i) var += (x(t, i) - mu) * (x(t, i) - mu) / 6.0;
    const double rstd = 1.0 / std::sqrt(var + eps);
    double sum = 0, along = 0, g_xhat = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      const double xhat = (x(t, i) - mu) * rstd;
      sum += g.dx(t, i);
      along += g.dx(t, i) * xhat;
      g_xhat += dy(t, i) * xhat;
    }
    row_sums(t) = static_cast<float>(sum);
    along_xhat(t) = static_cast<float>(along);
    expected_along(t) = static_cast<float>(rstd * g_xhat * eps / (var + eps));
  }
  EXPECT_TRUE(AllClose(row_sums, Tensor1(xt::zeros<float>({4})), kLayer, {"row"}))
      << "sum_i dx: moving a whole row changes no output" << kSeeDoc;
  EXPECT_TRUE(AllClose(along_xhat, expected_along, kLayer, {"row"}))
      << "sum_i dx * xhat = rstd * sum_i(g * xhat) * eps / (var + eps)" << kSeeDoc;
}

// gelu(0) = 0 and gelu'(0) = Phi(0) = 1/2; gelu(+-1) = +-Phi(+-1), which a
// function that returns 0 or its input does not give.
TEST(Gelu, IsZeroWithSlopeOneHalfAtZeroAndXPhiXAtPlusMinusOne) {
  const Tensor2 x = {{0.0f, 1.0f, -1.0f}};
  const double phi1 = 0.5 * (1.0 + std::erf(1.0 / std::sqrt(2.0)));  // Phi(1)
  const Tensor2 y = {{0.0f, static_cast<float>(phi1), static_cast<float>(-(1.0 - phi1))}};
  EXPECT_TRUE(AllClose(gelu(x), y, kRowOp, kRowColumn)) << "gelu(x) = x Phi(x)" << kSeeDoc;
  const Tensor2 slope = gelu_backward(Tensor2{{0.0f}}, Tensor2{{1.0f}});
  EXPECT_TRUE(AllClose(slope, Tensor2{{0.5f}}, kRowOp)) << "gelu'(0) = 1/2" << kSeeDoc;
}

// <apply_rope(x), d> = <x, rope_backward(d)>: the backward is the rotation's
// transpose. (apply_rope here is the reference's, in double.)
TEST(RopeBackward, IsTheAdjointOfTheRotation) {
  const Tensor3 d = testing::RandomTensor3(2, 5, 6, 7), x = testing::RandomTensor3(2, 5, 6, 8);
  const double lhs = naive::SumOfProducts(reference::Rotate(Double(x), 11, 100.0), d);
  const double rhs = naive::SumOfProducts(x, rope_backward(d, 11, 100.0));
  EXPECT_TRUE(AllClose(Tensor1{static_cast<float>(rhs)}, Tensor1{static_cast<float>(lhs)}, kLayer,
                       {"inner product"}))
      << "<apply_rope(x), d> must equal <x, rope_backward(d)>" << kSeeDoc;
}

// With W_O = 0, W_2 = 0 and b_2 = 0 neither sub-layer adds anything: y = x
// and dx = dy. But dW_O and dW_2 are not zero: they say how the block would
// change if those weights moved, and they match the reference.
TEST(BlockBackward, WithNothingAddedIsTheIdentityButStillGivesTheOutputWeightsGradients) {
  std::mt19937_64 gen(1401);
  TransformerBlock block = SeededBlock(8, 2, 12, 61, 10000.0, gen);
  block.attn.W_O.fill(0.0f);
  block.ffn.W_2.fill(0.0f);
  block.ffn.b_2.fill(0.0f);
  const Tensor2 x = Normal2(gen, 5, 8), dy = Normal2(gen, 5, 8);
  EXPECT_TRUE(AllClose(block.forward(x), x, kBlock, testing::kTokenFeature))
      << "y = x when both sub-layers add 0" << kSeeDoc;
  const BlockGrads g = block_backward(block, x, dy);
  EXPECT_TRUE(AllClose(g.dx, dy, kBlock, testing::kTokenFeature)) << "dx = dy" << kSeeDoc;
  reference::Block b = reference::FromBlock(block);
  D2 xd = Double(x);
  auto loss = [&] { return naive::SumOfProducts(reference::BlockForward(b, xd), dy); };
  ExpectDifferences("dW_O = concat^T dh is not zero", g.dW_O, b.W_O, loss, kBlock);
  ExpectDifferences("dW_2 = gelu(u)^T dy is not zero", g.dW_2, b.W_2, loss, kBlock);
}

TEST(BlockBackward, EveryGradientMatchesFiniteDifferencesInDouble) {
  std::mt19937_64 gen(1402);
  const TransformerBlock block = SeededBlock(8, 2, 12, 71, 10000.0, gen);
  ExpectBlockGradsMatchFiniteDifferences(block, Normal2(gen, 4, 8), Normal2(gen, 4, 8));
}

TEST(TransformerBlock, UsesWeightsOverwrittenAfterConstruction) {
  std::mt19937_64 gen(1403);
  TransformerBlock block = SeededBlock(8, 2, 12, 81, 10000.0, gen);
  const Tensor2 x = Normal2(gen, 4, 8);
  (void)block.forward(x);
  block.attn.W_V = block.attn.W_V * 2.0f;
  block.ffn.W_1 = block.ffn.W_1 * 0.5f;
  block.ln2_beta = block.ln2_beta + 1.0f;
  const D2 expected = reference::BlockForward(reference::FromBlock(block), Double(x));
  EXPECT_TRUE(AllClose(block.forward(x), Float(expected), kBlock, testing::kTokenFeature))
      << "forward must read the weights on every call" << kSeeDoc;
}

// ---------------------------------------------------------------- fresh random inputs

// Sizes drawn so that nothing is trivial: two tokens or more, pairs to rotate.
TEST(FreshRandomInputs, LayerNormGeluAndTheirGradientsMatchTheDoubleReference) {
  testing::FreshDraws gen;
  const std::size_t T = gen.Pick(2, 6), d = gen.Pick(2, 10);
  const float eps = gen.Pick(0, 1) == 0 ? testing::kLayerNormEps : 0.1f;
  SCOPED_TRACE("T=" + std::to_string(T) + " d=" + std::to_string(d));
  const Tensor2 x = Normal2(gen, T, d, 2.0f), dy = Normal2(gen, T, d);
  const Tensor1 gamma = 1.0f + Normal1(gen, d, 0.5f), beta = Normal1(gen, d, 0.5f);
  D2 xd = Double(x);
  D1 gd = Double(gamma), bd = Double(beta);
  EXPECT_TRUE(AllClose(layer_norm(x, gamma, beta, eps),
                       Float(reference::LayerNorm(xd, gd, bd, eps)), kRowOp, kRowColumn))
      << "layer_norm" << kSeeDoc;
  auto ln_loss = [&] { return naive::SumOfProducts(reference::LayerNorm(xd, gd, bd, eps), dy); };
  const LayerNormGrads g = layer_norm_backward(x, gamma, eps, dy);
  ExpectDifferences("layer_norm_backward dx", g.dx, xd, ln_loss, kLayer);
  ExpectDifferences("dgamma", g.dgamma, gd, ln_loss, kLayer);
  ExpectDifferences("dbeta", g.dbeta, bd, ln_loss, kLayer);
  EXPECT_TRUE(AllClose(gelu(x), Float(reference::Gelu(xd)), kRowOp, kRowColumn))
      << "gelu" << kSeeDoc;
  auto gelu_loss = [&] { return naive::SumOfProducts(reference::Gelu(xd), dy); };
  ExpectDifferences("gelu_backward", gelu_backward(x, dy), xd, gelu_loss, kLayer);
}

TEST(FreshRandomInputs, FeedForwardAndRopeBackwardMatchTheDoubleReference) {
  testing::FreshDraws gen;
  const int d = gen.Pick(2, 8), f = gen.Pick(2, 12), T = gen.Pick(2, 5);
  SCOPED_TRACE("d_model=" + std::to_string(d) + " d_ff=" + std::to_string(f) +
               " T=" + std::to_string(T));
  FeedForward ffn(d, f, gen());
  seeded::InstallFeedForward(ffn, d, f, gen());
  ffn.b_1 = Normal1(gen, f, 0.5f);
  ffn.b_2 = Normal1(gen, d, 0.5f);
  const Tensor2 x = Normal2(gen, T, d), dy = Normal2(gen, T, d);
  D2 xd = Double(x), W_1 = Double(ffn.W_1), W_2 = Double(ffn.W_2);
  D1 b_1 = Double(ffn.b_1), b_2 = Double(ffn.b_2);
  auto loss = [&] {
    return naive::SumOfProducts(reference::FeedForward(xd, W_1, b_1, W_2, b_2), dy);
  };
  EXPECT_TRUE(AllClose(ffn.forward(x), Float(reference::FeedForward(xd, W_1, b_1, W_2, b_2)),
                       kLayer, testing::kTokenFeature))
      << "FeedForward::forward" << kSeeDoc;
  const FeedForwardGrads g = feed_forward_backward(ffn, x, dy);
  ExpectDifferences("dx", g.dx, xd, loss, kLayer);
  ExpectDifferences("dW_1", g.dW_1, W_1, loss, kLayer);
  ExpectDifferences("db_1", g.db_1, b_1, loss, kLayer);
  ExpectDifferences("dW_2", g.dW_2, W_2, loss, kLayer);
  ExpectDifferences("db_2", g.db_2, b_2, loss, kLayer);

  const std::size_t H = gen.Pick(1, 3), dh = 2 * gen.Pick(1, 4);
  const int start = gen.Pick(1, 5000);
  const double base = gen.Pick(0, 1) == 0 ? 10000.0 : 500000.0;
  SCOPED_TRACE("rope: H=" + std::to_string(H) + " d_head=" + std::to_string(dh) +
               " start=" + std::to_string(start));
  const Tensor3 dr = testing::RandomTensor3(H, T, dh, static_cast<std::uint32_t>(gen()));
  D3 rx = xt::zeros<double>({H, std::size_t(T), dh});
  auto rope_loss = [&] { return naive::SumOfProducts(reference::Rotate(rx, start, base), dr); };
  ExpectDifferences("rope_backward", rope_backward(dr, start, base), rx, rope_loss, kRowOp);
}

TEST(FreshRandomInputs, RotaryAttentionBackwardMatchesFiniteDifferences) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 3), dh = 2 * gen.Pick(1, 2), d = H * dh, T = gen.Pick(2, 6);
  const bool causal = gen.Pick(0, 1) == 1;
  SCOPED_TRACE("d_model=" + std::to_string(d) + " n_heads=" + std::to_string(H) +
               " T=" + std::to_string(T) + (causal ? " causal" : " no mask"));
  RotaryAttention layer(d, H, gen(), 100.0);
  seeded::InstallMha(layer, d, H, gen());
  layer.base = 100.0;
  const Tensor2 x = Normal2(gen, T, d), dy = Normal2(gen, T, d);
  const MhaGrads g = rotary_attention_backward(
      layer, x, causal ? std::optional<Tensor2>(causal_mask(T)) : std::nullopt, dy);
  D2 xd = Double(x), W_Q = Double(layer.W_Q), W_K = Double(layer.W_K), W_V = Double(layer.W_V),
     W_O = Double(layer.W_O);
  auto loss = [&] {
    return naive::SumOfProducts(
        reference::RotaryAttention(xd, W_Q, W_K, W_V, W_O, H, 100.0, causal), dy);
  };
  ExpectDifferences("dx", g.dx, xd, loss, kLayer);
  ExpectDifferences("dW_Q", g.dW_Q, W_Q, loss, kLayer);
  ExpectDifferences("dW_K", g.dW_K, W_K, loss, kLayer);
  ExpectDifferences("dW_V", g.dW_V, W_V, loss, kLayer);
  ExpectDifferences("dW_O", g.dW_O, W_O, loss, kLayer);
}

TEST(FreshRandomInputs, BlockForwardWeightsAndGradientsMatchTheDoubleReference) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 3), dh = 2 * gen.Pick(1, 2), d = H * dh, f = gen.Pick(2, 12);
  const int T = gen.Pick(2, 6);
  const double base = gen.Pick(0, 1) == 0 ? 10000.0 : 100.0;
  SCOPED_TRACE("d_model=" + std::to_string(d) + " n_heads=" + std::to_string(H) +
               " d_ff=" + std::to_string(f) + " T=" + std::to_string(T));
  const TransformerBlock block = SeededBlock(d, H, f, gen(), base, gen);
  const Tensor2 x = Normal2(gen, T, d), dy = Normal2(gen, T, d);
  D3 weights;
  const D2 y = reference::BlockForward(reference::FromBlock(block), Double(x), &weights);
  EXPECT_TRUE(AllClose(block.forward(x), Float(y), kBlock, testing::kTokenFeature))
      << "forward" << kSeeDoc;
  EXPECT_TRUE(
      AllClose(block.attention_weights(x), Float(weights), kBlock, {"head", "query", "key"}))
      << "attention_weights" << kSeeDoc;
  ExpectBlockGradsMatchFiniteDifferences(block, x, dy);
}

// ---------------------------------------------------------------- bad arguments

TEST(LayerNormArguments, RejectsGammaOrBetaOfTheWrongSizeAndANonPositiveEps) {
  const Tensor2 x = xt::ones<float>({2, 5});
  const Tensor1 five = xt::ones<float>({5}), four = xt::ones<float>({4});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { layer_norm(x, four, five); }, {"4", "5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { layer_norm(x, five, four); }, {"4", "5"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([&] { layer_norm(x, five, five, -testing::kLayerNormEps); }, {"eps"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { layer_norm_backward(x, four, testing::kLayerNormEps, x); }, {"4", "5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { layer_norm_backward(x, five, 0.0f, x); }, {"eps"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        layer_norm_backward(x, five, testing::kLayerNormEps, Tensor2(xt::ones<float>({3, 5})));
      },
      {"(3, 5)", "(2, 5)"}));
}

TEST(GeluArguments, RejectsAGradientShapedUnlikeX) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        gelu_backward(xt::ones<float>({3, 5}), xt::ones<float>({3, 4}));
      },
      {"(3, 4)", "(3, 5)"}));
}

TEST(FeedForwardArguments, RejectsSizesBelowOneAndInputsOfTheWrongWidth) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { FeedForward(0, 4); }, {"d_model=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { FeedForward(4, -2); }, {"d_ff=-2"}));
  const FeedForward ffn(4, 6, 1);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        ffn.forward(xt::ones<float>({2, 5}));
      },
      {"(2, 5)", "4"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        feed_forward_backward(ffn, xt::ones<float>({2, 4}), xt::ones<float>({3, 4}));
      },
      {"(3, 4)", "(2, 4)"}));
}

TEST(RopeBackwardArguments, RejectsAnOddDHeadANegativeStartAndABaseOfOneOrLess) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        rope_backward(xt::ones<float>({1, 2, 5}));
      },
      {"d_head=5"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        rope_backward(xt::ones<float>({1, 2, 4}), -3);
      },
      {"start=-3"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        rope_backward(xt::ones<float>({1, 2, 4}), 0, 1.0);
      },
      {"base=1"}));
}

TEST(RotaryAttentionBackwardArguments, RejectsMismatchedInputsGradientsAndMasks) {
  const RotaryAttention layer(8, 2, 1);
  const Tensor2 x = xt::ones<float>({3, 8});
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        rotary_attention_backward(layer, xt::ones<float>({3, 6}), std::nullopt, x);
      },
      {"(3, 6)", "8"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        rotary_attention_backward(layer, x, std::nullopt, xt::ones<float>({2, 8}));
      },
      {"(2, 8)", "(3, 8)"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { rotary_attention_backward(layer, x, causal_mask(4), x); },
                                    {"(4, 4)", "3"}));
}

TEST(TransformerBlockArguments, RejectsBadSizesNamingThem) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { TransformerBlock(8, 2, 0); }, {"d_ff=0"}));
  EXPECT_TRUE(
      ThrowsInvalidArgument([] { TransformerBlock(10, 4, 16); }, {"d_model=10", "n_heads=4"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { TransformerBlock(6, 2, 16); }, {"d_head=3"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { TransformerBlock(8, 2, 16, 0, 0.5); }, {"base="}));
}

TEST(TransformerBlockArguments, RejectsInputsOfTheWrongWidthAndMismatchedGradients) {
  const TransformerBlock block(8, 2, 12, 3);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        block.forward(xt::ones<float>({3, 7}));
      },
      {"(3, 7)", "8"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        block.attention_weights(xt::ones<float>({3, 9}));
      },
      {"(3, 9)", "8"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        block_backward(block, xt::ones<float>({3, 8}), xt::ones<float>({4, 8}));
      },
      {"(4, 8)", "(3, 8)"}));
}

}  // namespace
}  // namespace mha
