// Helpers and shared cases of lab 14's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (tests/14_transformer_block/gen_goldens.py writes
// both sets, PyTorch in float64), and name each classic mistake in the same
// words. The grading tests add cases of their own on top.
//
//   testing::ExpectLayerNormMatchesTorch("labs/14_transformer_block/golden/", "ln");
//   testing::ExpectBlockBackwardMatchesTorch({"labs/14_transformer_block/golden/", "block", 16, 2,
//                                             32, 1407, 10000.0});
#ifndef MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_
#define MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/14_transformer_block/transformer_block.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/14_transformer_block.md, by the names the
// golden generator gives what each one computes (<case>_mistake_<name>.npy).
inline const MistakeTable kBlockMistakes(
    "docs/14_transformer_block.md",
    {
        {"one_pass_variance",
         "LayerNorm's variance computed as E[x^2] - E[x]^2, which loses most of its digits in "
         "float on rows offset by 1e3 (take the mean first, then the mean of (x - mu)^2)"},
        {"unbiased_variance",
         "LayerNorm's variance divided by d - 1 (unbiased) instead of d, as torch.nn.LayerNorm "
         "does"},
        {"dgamma_not_summed",
         "dgamma and dbeta of the last row only: gamma and beta act on every row, so their "
         "gradients are sums over the rows"},
        {"tanh_gelu", "GELU's tanh approximation instead of the exact 0.5 x (1 + erf(x / sqrt 2))"},
        {"rope_backward_forward",
         "RoPE's backward turning by +p * theta_i, the forward's way: the transpose of a "
         "rotation turns by -p * theta_i"},
        {"rope_backward_missing",
         "dq and dk passed back without undoing the rotation (rope_backward left out)"},
        {"residual1_fork_dropped",
         "the gradient around attention dropped: dx = dh + (what comes back through attention "
         "and ln1), not the second term alone"},
        {"residual2_fork_dropped",
         "the gradient around the FFN dropped: dh = dy + (what comes back through the FFN and "
         "ln2), not the second term alone"},
        {"post_ln",
         "post-LN order (LayerNorm after each residual sum, as the 2017 Transformer) instead of "
         "pre-LN (LayerNorm on the way into each sub-layer, the stream itself left alone)"},
    });

// LayerNorm's default eps, an argument of the functions under test.
inline constexpr float kLayerNormEps = 1e-5f;  // tolerance: an argument, not a comparison bound

inline const std::vector<std::string> kRowColumn = {"row", "column"};
inline const std::vector<std::string> kTokenFeature = {"token", "feature"};
inline const std::vector<std::string> kFeature = {"feature"};

// <dir><c>_<what>.npy as a tensor of rank N.
template <std::size_t N>
xt::xtensor<float, N> Golden(const std::string& dir, const std::string& c,
                             const std::string& what) {
  return LoadGolden<N>(GoldenFile(dir, c + "_" + what));
}

// MatchesGolden of `actual` with <dir><c>_<what>.npy, naming any of `mistakes`
// whose golden <dir><c>_<what>_mistake_<m>.npy it matches instead.
template <class A>
::testing::AssertionResult MatchesCase(const A& actual, const std::string& dir,
                                       const std::string& c, const std::string& what, Tolerance tol,
                                       const std::vector<std::string>& axes,
                                       const std::vector<std::string>& mistakes = {}) {
  return MatchesGolden(actual, GoldenFile(dir, c + "_" + what), tol, axes,
                       kBlockMistakes.Of(dir + c + "_" + what, mistakes));
}

// ------------------------------------------------------------------ LayerNorm

// layer_norm and layer_norm_backward on the case's x, gamma, beta and dy
// (eps 1e-5 unless given) against torch.nn.LayerNorm and autograd.
inline void ExpectLayerNormMatchesTorch(const std::string& dir, const std::string& c,
                                        float eps = kLayerNormEps) {
  SCOPED_TRACE(dir + c);
  const Tensor2 x = Golden<2>(dir, c, "x"), dy = Golden<2>(dir, c, "dy");
  const Tensor1 gamma = Golden<1>(dir, c, "gamma"), beta = Golden<1>(dir, c, "beta");
  EXPECT_TRUE(MatchesCase(layer_norm(x, gamma, beta, eps), dir, c, "y", kRowOp, kRowColumn,
                          {"unbiased_variance"}));
  const LayerNormGrads g = layer_norm_backward(x, gamma, eps, dy);
  EXPECT_TRUE(MatchesCase(g.dx, dir, c, "dx", kLayer, kRowColumn, {"unbiased_variance"}));
  EXPECT_TRUE(MatchesCase(g.dgamma, dir, c, "dgamma", kLayer, kFeature, {"dgamma_not_summed"}));
  EXPECT_TRUE(MatchesCase(g.dbeta, dir, c, "dbeta", kLayer, kFeature, {"dgamma_not_summed"}));
}

// Rows offset by `offset` (1e3): y, dx and dgamma still match torch (to
// kOffsetRows: x itself carries only ~6e-5 of absolute precision there). One
// that does not, while the same quantity on the same rows moved back to 0
// (x - offset, exact in float, and LayerNorm does not see a shift) does, lost
// its digits to the variance: one_pass_variance. One that is wrong at 0 too
// has another mistake, which the test at 0 names.
inline void ExpectLayerNormHoldsItsDigitsOnOffsetRows(const std::string& dir, const std::string& c,
                                                      float offset) {
  SCOPED_TRACE(dir + c);
  const Tensor2 x = Golden<2>(dir, c, "x"), dy = Golden<2>(dir, c, "dy");
  const Tensor1 gamma = Golden<1>(dir, c, "gamma"), beta = Golden<1>(dir, c, "beta");
  const Tensor2 centred = x - offset;
  auto expect_holds = [&](const auto& on_offset_rows, const auto& on_centred_rows,
                          const std::string& what, const std::vector<std::string>& axes) {
    const bool right_when_centred = MatchesCase(on_centred_rows, dir, c, what, kOffsetRows, axes);
    EXPECT_TRUE(MatchesCase(on_offset_rows, dir, c, what, kOffsetRows, axes))
        << (right_when_centred ? kBlockMistakes.LooksLike("one_pass_variance") : NoNote(""));
  };
  expect_holds(layer_norm(x, gamma, beta), layer_norm(centred, gamma, beta), "y", kRowColumn);
  const LayerNormGrads g = layer_norm_backward(x, gamma, kLayerNormEps, dy);
  const LayerNormGrads g0 = layer_norm_backward(centred, gamma, kLayerNormEps, dy);
  expect_holds(g.dx, g0.dx, "dx", kRowColumn);
  expect_holds(g.dgamma, g0.dgamma, "dgamma", kFeature);
}

// ----------------------------------------------------------------------- GELU

inline void ExpectGeluMatchesTorch(const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Tensor2 x = Golden<2>(dir, c, "x"), dy = Golden<2>(dir, c, "dy");
  EXPECT_TRUE(MatchesCase(gelu(x), dir, c, "y", kRowOp, kRowColumn, {"tanh_gelu"}));
  EXPECT_TRUE(MatchesCase(gelu_backward(x, dy), dir, c, "dx", kRowOp, kRowColumn, {"tanh_gelu"}));
}

// ---------------------------------------------------------------- FeedForward

// FeedForward(d_model, d_ff, seed) draws the case's W_1 and W_2, bit for bit,
// and zero biases; with the case's biases installed, forward and
// feed_forward_backward match torch.
inline void ExpectFeedForwardMatchesTorch(const std::string& dir, const std::string& c, int d_model,
                                          int d_ff, std::uint64_t seed) {
  SCOPED_TRACE(dir + c);
  FeedForward ffn(d_model, d_ff, seed);
  EXPECT_TRUE(MatchesCase(ffn.W_1, dir, c, "W_1", kExact, kRowColumn)) << "W_1: the first draw";
  EXPECT_TRUE(MatchesCase(ffn.W_2, dir, c, "W_2", kExact, kRowColumn)) << "W_2: the second";
  EXPECT_TRUE(AllClose(ffn.b_1, Tensor1(xt::zeros<float>({std::size_t(d_ff)})), kExact))
      << "b_1 starts at zero";
  EXPECT_TRUE(AllClose(ffn.b_2, Tensor1(xt::zeros<float>({std::size_t(d_model)})), kExact))
      << "b_2 starts at zero";
  ffn.W_1 = Golden<2>(dir, c, "W_1");
  ffn.W_2 = Golden<2>(dir, c, "W_2");
  ffn.b_1 = Golden<1>(dir, c, "b_1");
  ffn.b_2 = Golden<1>(dir, c, "b_2");
  const Tensor2 x = Golden<2>(dir, c, "x"), dy = Golden<2>(dir, c, "dy");
  EXPECT_TRUE(MatchesCase(ffn.forward(x), dir, c, "y", kLayer, kTokenFeature));
  const FeedForwardGrads g = feed_forward_backward(ffn, x, dy);
  const std::vector<std::string> tanh = {"tanh_gelu"};
  EXPECT_TRUE(MatchesCase(g.dx, dir, c, "dx", kLayer, kTokenFeature, tanh));
  EXPECT_TRUE(MatchesCase(g.dW_1, dir, c, "dW_1", kLayer, kRowColumn, tanh));
  EXPECT_TRUE(MatchesCase(g.db_1, dir, c, "db_1", kLayer, kFeature, tanh));
  EXPECT_TRUE(MatchesCase(g.dW_2, dir, c, "dW_2", kLayer, kRowColumn, tanh));
  EXPECT_TRUE(MatchesCase(g.db_2, dir, c, "db_2", kLayer, kFeature));
}

// ------------------------------------------------------------- RoPE, backward

inline const std::vector<std::string> kRopeBackwardMistakes = {"rope_backward_forward",
                                                               "rope_backward_missing"};

inline void ExpectRopeBackwardMatchesTorch(const std::string& dir, const std::string& c, int start,
                                           double base) {
  SCOPED_TRACE(dir + c);
  const Tensor3 d = Golden<3>(dir, c, "d");
  EXPECT_TRUE(MatchesCase(rope_backward(d, start, base), dir, c, "dx", kRowOp,
                          {"head", "position", "feature"}, kRopeBackwardMistakes));
}

// ---------------------------------------------------- rotary attention, backward

// The rotary layer of a case: lab 11's constructor, then the case's weights.
inline RotaryAttention CaseAttention(const std::string& dir, const std::string& c, int d_model,
                                     int n_heads, double base) {
  RotaryAttention layer(d_model, n_heads, /*seed=*/0, base);
  layer.W_Q = Golden<2>(dir, c, "W_Q");
  layer.W_K = Golden<2>(dir, c, "W_K");
  layer.W_V = Golden<2>(dir, c, "W_V");
  layer.W_O = Golden<2>(dir, c, "W_O");
  return layer;
}

inline void ExpectRotaryBackwardMatchesTorch(const std::string& dir, const std::string& c,
                                             int d_model, int n_heads, double base) {
  SCOPED_TRACE(dir + c);
  const RotaryAttention layer = CaseAttention(dir, c, d_model, n_heads, base);
  const Tensor2 x = Golden<2>(dir, c, "x"), dy = Golden<2>(dir, c, "dy");
  const MhaGrads g =
      rotary_attention_backward(layer, x, causal_mask(static_cast<int>(x.shape(0))), dy);
  EXPECT_TRUE(MatchesCase(g.dx, dir, c, "dx", kLayer, kTokenFeature, kRopeBackwardMistakes));
  EXPECT_TRUE(MatchesCase(g.dW_Q, dir, c, "dW_Q", kLayer, kRowColumn, kRopeBackwardMistakes));
  EXPECT_TRUE(MatchesCase(g.dW_K, dir, c, "dW_K", kLayer, kRowColumn, kRopeBackwardMistakes));
  EXPECT_TRUE(MatchesCase(g.dW_V, dir, c, "dW_V", kLayer, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.dW_O, dir, c, "dW_O", kLayer, kRowColumn));
}

// ---------------------------------------------------------------------- block

struct BlockCase {
  std::string dir, name;
  int d_model, n_heads, d_ff;
  std::uint64_t seed;
  double base;
};

// TransformerBlock(d_model, n_heads, d_ff, seed, base) draws attention's
// weights from seed and the FFN's from seed + 1, with gammas 1, betas and
// biases 0.
inline void ExpectBlockDrawsItsWeights(const BlockCase& c) {
  SCOPED_TRACE(c.dir + c.name);
  const TransformerBlock block(c.d_model, c.n_heads, c.d_ff, c.seed, c.base);
  const std::string& d = c.dir;
  EXPECT_TRUE(MatchesCase(block.attn.W_Q, d, c.name, "W_Q", kExact, kRowColumn));
  EXPECT_TRUE(MatchesCase(block.attn.W_O, d, c.name, "W_O", kExact, kRowColumn));
  EXPECT_TRUE(MatchesCase(block.ffn.W_1, d, c.name, "W_1", kExact, kRowColumn))
      << "the FFN draws from seed + 1";
  EXPECT_TRUE(MatchesCase(block.ffn.W_2, d, c.name, "W_2", kExact, kRowColumn));
  const Tensor1 ones = xt::ones<float>({std::size_t(c.d_model)});
  const Tensor1 zeros = xt::zeros<float>({std::size_t(c.d_model)});
  EXPECT_TRUE(AllClose(block.ln1_gamma, ones, kExact)) << "ln1_gamma starts at 1";
  EXPECT_TRUE(AllClose(block.ln2_gamma, ones, kExact)) << "ln2_gamma starts at 1";
  EXPECT_TRUE(AllClose(block.ln1_beta, zeros, kExact)) << "ln1_beta starts at 0";
  EXPECT_TRUE(AllClose(block.ln2_beta, zeros, kExact)) << "ln2_beta starts at 0";
}

// The case's block: the constructor's, then every parameter from the case
// (the draws, and gammas, betas and biases away from 1 and 0).
inline TransformerBlock CaseBlock(const BlockCase& c) {
  TransformerBlock block(c.d_model, c.n_heads, c.d_ff, c.seed, c.base);
  const std::string& d = c.dir;
  block.attn = CaseAttention(d, c.name, c.d_model, c.n_heads, c.base);
  block.ffn.W_1 = Golden<2>(d, c.name, "W_1");
  block.ffn.W_2 = Golden<2>(d, c.name, "W_2");
  block.ffn.b_1 = Golden<1>(d, c.name, "b_1");
  block.ffn.b_2 = Golden<1>(d, c.name, "b_2");
  block.ln1_gamma = Golden<1>(d, c.name, "ln1_gamma");
  block.ln1_beta = Golden<1>(d, c.name, "ln1_beta");
  block.ln2_gamma = Golden<1>(d, c.name, "ln2_gamma");
  block.ln2_beta = Golden<1>(d, c.name, "ln2_beta");
  return block;
}

// forward (and attention_weights) against torch; post-LN and the unbiased
// variance are named.
inline void ExpectBlockForwardMatchesTorch(const BlockCase& c) {
  SCOPED_TRACE(c.dir + c.name);
  const TransformerBlock block = CaseBlock(c);
  const Tensor2 x = Golden<2>(c.dir, c.name, "x");
  EXPECT_TRUE(MatchesCase(block.forward(x), c.dir, c.name, "y", kBlock, kTokenFeature,
                          {"post_ln", "unbiased_variance"}));
  EXPECT_TRUE(MatchesCase(block.attention_weights(x), c.dir, c.name, "weights", kBlock,
                          {"head", "query", "key"}));
}

// Every field of block_backward against autograd; a dropped residual fork is named.
inline void ExpectBlockBackwardMatchesTorch(const BlockCase& c) {
  SCOPED_TRACE(c.dir + c.name);
  const TransformerBlock block = CaseBlock(c);
  const Tensor2 x = Golden<2>(c.dir, c.name, "x"), dy = Golden<2>(c.dir, c.name, "dy");
  const BlockGrads g = block_backward(block, x, dy);
  const std::string& d = c.dir;
  const std::string& n = c.name;
  const std::vector<std::string> forks = {"residual1_fork_dropped", "residual2_fork_dropped"};
  EXPECT_TRUE(MatchesCase(g.dx, d, n, "dx", kBlock, kTokenFeature, forks));
  EXPECT_TRUE(MatchesCase(g.dW_V, d, n, "dW_V", kBlock, kRowColumn, {"residual2_fork_dropped"}));
  EXPECT_TRUE(
      MatchesCase(g.dln1_beta, d, n, "dln1_beta", kBlock, kFeature, {"residual2_fork_dropped"}));
  EXPECT_TRUE(MatchesCase(g.dln1_gamma, d, n, "dln1_gamma", kBlock, kFeature));
  EXPECT_TRUE(MatchesCase(g.dW_Q, d, n, "dW_Q", kBlock, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.dW_K, d, n, "dW_K", kBlock, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.dW_O, d, n, "dW_O", kBlock, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.dln2_gamma, d, n, "dln2_gamma", kBlock, kFeature));
  EXPECT_TRUE(MatchesCase(g.dln2_beta, d, n, "dln2_beta", kBlock, kFeature));
  EXPECT_TRUE(MatchesCase(g.dW_1, d, n, "dW_1", kBlock, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.db_1, d, n, "db_1", kBlock, kFeature));
  EXPECT_TRUE(MatchesCase(g.dW_2, d, n, "dW_2", kBlock, kRowColumn));
  EXPECT_TRUE(MatchesCase(g.db_2, d, n, "db_2", kBlock, kFeature));
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_
