#include "common/programs/optimizer.h"

#include <gtest/gtest.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

namespace mha {
namespace {

TEST(Sgd, StepsAgainstTheGradient) {
  xt::xtensor<float, 1> w = {1.0f, -2.0f};
  const xt::xtensor<float, 1> g = {0.5f, -1.0f};
  Sgd sgd(0.1f);
  sgd.step({param(w, g)});
  EXPECT_FLOAT_EQ(w(0), 0.95f);
  EXPECT_FLOAT_EQ(w(1), -1.9f);
}

// The numbers torch.optim.Adam(lr=0.1) gives on the same gradients
// (torch 1.13, float32).
TEST(Adam, MatchesTorchOptimAdamOverThreeSteps) {
  xt::xtensor<float, 1> w = {1.0f, -2.0f, 0.5f};
  const xt::xtensor<float, 2> grads = {{0.1f, -0.3f, 2.0f}, {0.2f, 0.1f, -1.0f}, {-0.5f, 0.0f, 0.3f}};
  const xt::xtensor<float, 2> expected = {{0.899999976f, -1.89999998f, 0.400000006f},
                                          {0.803481758f, -1.85997808f, 0.373366296f},
                                          {0.831359327f, -1.82904112f, 0.344459534f}};
  Adam adam(0.1f);
  for (std::size_t s = 0; s < 3; ++s) {
    const xt::xtensor<float, 1> g = xt::view(grads, s, xt::all());
    adam.step({param(w, g)});
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(w(i), expected(s, i), 1e-6) << s << " " << i;
  }
  EXPECT_EQ(adam.steps(), 3);
}

TEST(Adam, RejectsAParameterListThatChanges) {
  xt::xtensor<float, 1> a = {1.0f}, b = {2.0f, 3.0f};
  const xt::xtensor<float, 1> ga = {0.1f}, gb = {0.1f, 0.2f};
  Adam adam(0.1f);
  adam.step({param(a, ga)});
  EXPECT_THROW(adam.step({param(a, ga), param(b, gb)}), std::invalid_argument);
  EXPECT_THROW(adam.step({param(b, gb)}), std::invalid_argument);
}

TEST(Param, RejectsAGradientOfAnotherShape) {
  xt::xtensor<float, 1> w = {1.0f, 2.0f};
  const xt::xtensor<float, 1> g = {0.1f};
  EXPECT_THROW(param(w, g), std::invalid_argument);
}

}  // namespace
}  // namespace mha
