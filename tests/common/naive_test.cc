#include "tests/common/naive.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace mha {
namespace {

TEST(NaiveMatMul, MultipliesRowsByColumns) {
  const Tensor2 a = {{1, 2}, {3, 4}};
  const Tensor2 b = {{5, 6}, {7, 8}};
  const Tensor2 c = naive::MatMul(a, b);
  EXPECT_EQ(c(0, 0), 19);
  EXPECT_EQ(c(0, 1), 22);
  EXPECT_EQ(c(1, 0), 43);
  EXPECT_EQ(c(1, 1), 50);
}

TEST(NaiveCausalMask, AlignsTheQueriesBottomRight) {
  const Tensor2 m = naive::CausalMask(2, 3);
  EXPECT_EQ(m(0, 1), 0.0f);
  EXPECT_TRUE(std::isinf(m(0, 2)));
  EXPECT_EQ(m(1, 2), 0.0f);
}

TEST(NaiveScaledDotProduct, WeighsTwoKeysBySoftmaxOfScaledScores) {
  // d_head 4: scores 2/2 = 1 and 0, weights e/(e+1) and 1/(e+1).
  const Tensor3 q = {{{1, 1, 1, 1}}};
  const Tensor3 k = {{{0.5, 0.5, 0.5, 0.5}, {0, 0, 0, 0}}};
  const Tensor3 v = {{{1, 0, 0, 0}, {0, 1, 0, 0}}};
  const naive::Attention a = naive::ScaledDotProduct(q, k, v);
  const double e = std::exp(1.0);
  EXPECT_NEAR(a.weights(0, 0, 0), e / (e + 1), 1e-7);
  EXPECT_NEAR(a.output(0, 0, 1), 1 / (e + 1), 1e-7);
}

TEST(NaiveScaledDotProduct, GivesZerosToAQueryThatSeesNoKey) {
  const Tensor3 q = {{{1, 2}}};
  const Tensor3 k = {{{3, 4}}};
  const Tensor3 v = {{{5, 6}}};
  const Tensor2 mask = {{-std::numeric_limits<float>::infinity()}};
  const naive::Attention a = naive::ScaledDotProduct(q, k, v, mask);
  EXPECT_EQ(a.weights(0, 0, 0), 0.0f);
  EXPECT_EQ(a.output(0, 0, 0), 0.0f);
}

TEST(NaiveSplitHeads, HeadHOwnsColumnsHTimesDOnwardAndCombineUndoesIt) {
  const Tensor2 x = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  const Tensor3 h = naive::SplitHeads(x, 2);
  EXPECT_EQ(h(1, 0, 0), 2);
  EXPECT_EQ(h(1, 1, 1), 7);
  EXPECT_EQ(naive::CombineHeads(h), x);
}

}  // namespace
}  // namespace mha
