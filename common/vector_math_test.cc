#include "common/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace mha {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Lengths around every SIMD width (4, 8, 16 lanes) so both the vector loop
// and the scalar tail run.
const std::size_t kLengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 512, 1000};

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 10.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = normal(gen);
  return x;
}

TEST(VectorMath, MaxOfMatchesALoopAtEveryLength) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 1);
    float expected = -kInf;
    for (float v : x) expected = std::max(expected, v);
    EXPECT_EQ(max_of(x.data(), n), expected) << "n=" << n;
  }
}

TEST(VectorMath, MaxOfAnAllMinusInfinityRowIsMinusInfinity) {
  std::vector<float> x(37, -kInf);
  EXPECT_EQ(max_of(x.data(), x.size()), -kInf);
  EXPECT_EQ(max_of(x.data(), 0), -kInf);
}

TEST(VectorMath, SumOfMatchesADoubleSumAtEveryLength) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 2);
    double expected = 0;
    for (float v : x) expected += v;
    EXPECT_NEAR(sum_of(x.data(), n), expected, 1e-4 * (1 + std::abs(expected)) + 1e-3)
        << "n=" << n;
  }
}

TEST(VectorMath, ExpShiftedMatchesStdExpWithinAFewUlp) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 3);
    std::vector<float> out(n);
    exp_shifted(x.data(), 2.5f, out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const float expected = std::exp(x[i] - 2.5f);
      EXPECT_NEAR(out[i], expected, 4e-7f * expected + 1e-37f) << "n=" << n << " i=" << i;
    }
  }
}

TEST(VectorMath, ExpShiftedTurnsMinusInfinityIntoExactZero) {
  std::vector<float> x(21, -kInf);
  x[3] = 0.0f;
  x[17] = -1.0f;
  exp_shifted(x.data(), 0.0f, x.data(), x.size());  // in place
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(x[i], 1.0f);
    } else if (i == 17) {
      EXPECT_NEAR(x[i], std::exp(-1.0f), 1e-7f);
    } else {
      EXPECT_EQ(x[i], 0.0f) << "i=" << i;
    }
  }
}

TEST(VectorMath, ScaleInplaceMultipliesEveryElement) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 4);
    std::vector<float> expected = x;
    for (float& v : expected) v *= 0.125f;
    scale_inplace(x.data(), 0.125f, n);
    EXPECT_EQ(x, expected) << "n=" << n;
  }
}

}  // namespace
}  // namespace mha
