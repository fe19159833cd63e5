#include "common/core/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/core/vector_math_kernels.h"

namespace mha {
namespace {

using vector_math_detail::Kernels;
using vector_math_detail::usable_kernels;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Lengths around every SIMD width (4, 8, 16 lanes) so both the vector loop
// and the tail run.
const std::size_t kLengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 512, 1000};

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 10.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = normal(gen);
  return x;
}

// Every test below runs on every instruction set this CPU supports (the
// dispatcher uses only the first; the others must be right too, for CPUs
// where they come first).
class VectorMath : public ::testing::TestWithParam<const Kernels*> {};

std::string IsaName(const ::testing::TestParamInfo<const Kernels*>& info) {
  std::string name = info.param->isa;
  std::replace(name.begin(), name.end(), '+', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryUsableIsa, VectorMath, ::testing::ValuesIn(usable_kernels()),
                         IsaName);

TEST_P(VectorMath, MaxOfMatchesALoopAtEveryLength) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 1);
    float expected = -kInf;
    for (float v : x) expected = std::max(expected, v);
    EXPECT_EQ(GetParam()->max_of(x.data(), n), expected) << "n=" << n;
  }
}

TEST_P(VectorMath, MaxOfAnAllMinusInfinityRowIsMinusInfinity) {
  std::vector<float> x(37, -kInf);
  EXPECT_EQ(GetParam()->max_of(x.data(), x.size()), -kInf);
  EXPECT_EQ(GetParam()->max_of(x.data(), 0), -kInf);
  EXPECT_EQ(GetParam()->max_of(x.data(), 3), -kInf);
}

TEST_P(VectorMath, SumOfMatchesADoubleSumAtEveryLength) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 2);
    double expected = 0;
    for (float v : x) expected += v;
    EXPECT_NEAR(GetParam()->sum_of(x.data(), n), expected, 1e-4 * (1 + std::abs(expected)) + 1e-3)
        << "n=" << n;
  }
}

TEST_P(VectorMath, ExpShiftedMatchesStdExpWithinAFewUlp) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 3);
    std::vector<float> out(n);
    GetParam()->exp_shifted(x.data(), 2.5f, out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const float expected = std::exp(x[i] - 2.5f);
      EXPECT_NEAR(out[i], expected, 4e-7f * expected + 1e-37f) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(VectorMath, ExpShiftedTurnsMinusInfinityIntoExactZero) {
  std::vector<float> x(21, -kInf);
  x[3] = 0.0f;
  x[17] = -1.0f;
  GetParam()->exp_shifted(x.data(), 0.0f, x.data(), x.size());  // in place
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

TEST_P(VectorMath, ExpShiftedSumWritesTheExponentialsAndReturnsTheirSum) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 5, 3.0f);
    if (n > 2) x[n / 2] = -kInf;  // a masked score adds nothing
    std::vector<float> out(n), expected(n);
    GetParam()->exp_shifted(x.data(), 1.0f, expected.data(), n);
    const float sum = GetParam()->exp_shifted_sum(x.data(), 1.0f, out.data(), n);
    EXPECT_EQ(out, expected) << "n=" << n;
    double expected_sum = 0;
    for (float v : expected) expected_sum += v;
    EXPECT_NEAR(sum, expected_sum, 1e-5 * expected_sum + 1e-30) << "n=" << n;
  }
}

TEST_P(VectorMath, ScaleInplaceMultipliesEveryElement) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 4);
    std::vector<float> expected = x;
    for (float& v : expected) v *= 0.125f;
    GetParam()->scale_inplace(x.data(), 0.125f, n);
    EXPECT_EQ(x, expected) << "n=" << n;
  }
}

TEST_P(VectorMath, AddInplaceAddsElementwiseAndKeepsMinusInfinity) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 6);
    std::vector<float> y = random_floats(n, 7);
    if (n > 1) y[n - 1] = -kInf;
    std::vector<float> expected = x;
    for (std::size_t i = 0; i < n; ++i) expected[i] += y[i];
    GetParam()->add_inplace(x.data(), y.data(), n);
    EXPECT_EQ(x, expected) << "n=" << n;
  }
}

// The public functions go through the fastest usable table.
TEST(VectorMathDispatch, UsesTheFastestUsableInstructionSet) {
  EXPECT_STREQ(vector_math_isa(), usable_kernels().front()->isa);
  const float x[5] = {1.0f, -2.0f, 7.0f, 3.0f, 0.5f};
  EXPECT_EQ(max_of(x, 5), 7.0f);
}

TEST(VectorMathDispatch, ThisX86CpuGetsMoreThanTheBaselineWhenItHasAvx2) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      std::getenv("MHA_VECTOR_ISA") == nullptr) {
    EXPECT_STRNE(vector_math_isa(), "baseline");
  }
#endif
}

}  // namespace
}  // namespace mha
