// What lab 14's hidden tests share beyond the lab's test util: blocks whose
// every parameter the test installs (no expected number comes from state the
// learner's constructor chose), and gradients against central differences of
// reference.h's double-precision forwards.
#ifndef MHA_TESTS_14_TRANSFORMER_BLOCK_BLOCK_CHECKS_H_
#define MHA_TESTS_14_TRANSFORMER_BLOCK_BLOCK_CHECKS_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/14_transformer_block/transformer_block.h"
#include "labs/14_transformer_block/transformer_block_test_util.h"
#include "tests/14_transformer_block/reference.h"
#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace block_checks {

inline const std::string kSeeDoc = "; see docs/14_transformer_block.md";

template <class T, std::size_t N>
inline xt::xtensor<double, N> Double(const xt::xtensor<T, N>& t) {
  return xt::cast<double>(t);
}
template <std::size_t N>
inline xt::xtensor<float, N> Float(const xt::xtensor<double, N>& t) {
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
      : actual.dimension() == 2 ? testing::kRowColumn
                                : std::vector<std::string>{"head", "position", "feature"};
  EXPECT_TRUE(testing::AllClose(actual, expected, tol, axes)) << name << kSeeDoc;
}

// Every field of block_backward against central differences of the double
// reference block (the loss sum(y * dy)).
inline void ExpectBlockGradsMatchFiniteDifferences(const TransformerBlock& block, const Tensor2& x,
                                                   const Tensor2& dy) {
  const BlockGrads g = block_backward(block, x, dy);
  reference::Block b = reference::FromBlock(block);
  reference::D2 xd = Double(x);
  auto loss = [&] { return naive::SumOfProducts(reference::BlockForward(b, xd), dy); };
  ExpectDifferences("dx", g.dx, xd, loss, testing::kBlock);
  ExpectDifferences("dln1_gamma", g.dln1_gamma, b.ln1_gamma, loss, testing::kBlock);
  ExpectDifferences("dln1_beta", g.dln1_beta, b.ln1_beta, loss, testing::kBlock);
  ExpectDifferences("dW_Q", g.dW_Q, b.W_Q, loss, testing::kBlock);
  ExpectDifferences("dW_K", g.dW_K, b.W_K, loss, testing::kBlock);
  ExpectDifferences("dW_V", g.dW_V, b.W_V, loss, testing::kBlock);
  ExpectDifferences("dW_O", g.dW_O, b.W_O, loss, testing::kBlock);
  ExpectDifferences("dln2_gamma", g.dln2_gamma, b.ln2_gamma, loss, testing::kBlock);
  ExpectDifferences("dln2_beta", g.dln2_beta, b.ln2_beta, loss, testing::kBlock);
  ExpectDifferences("dW_1", g.dW_1, b.W_1, loss, testing::kBlock);
  ExpectDifferences("db_1", g.db_1, b.b_1, loss, testing::kBlock);
  ExpectDifferences("dW_2", g.dW_2, b.W_2, loss, testing::kBlock);
  ExpectDifferences("db_2", g.db_2, b.b_2, loss, testing::kBlock);
}

}  // namespace block_checks
}  // namespace mha

#endif  // MHA_TESTS_14_TRANSFORMER_BLOCK_BLOCK_CHECKS_H_
