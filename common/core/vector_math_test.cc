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

TEST_P(VectorMath, DotOfMatchesADoubleSumOfProductsAtEveryLength) {
  for (std::size_t n : kLengths) {
    std::vector<float> x = random_floats(n, 8), y = random_floats(n, 9);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += double(x[i]) * y[i];
    EXPECT_NEAR(GetParam()->dot_of(x.data(), y.data(), n), expected,
                1e-5 * (1 + std::abs(expected)) + 1e-2)
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

// Distance in units in the last place between two finite doubles of one sign.
double ulps(double a, double b) {
  if (a == b) return 0.0;
  return std::abs(a - b) / std::abs(std::nextafter(b, a) - b);
}

// Points from -lo to hi: a dense grid (every 1/64) and the tails, where erf is
// near +-1 and exp near 0 or huge.
std::vector<double> sweep(double lo, double hi) {
  std::vector<double> x;
  for (double v = -lo; v <= hi; v += 1.0 / 64) x.push_back(v);
  for (double v : {0.0, -0.0, 1e-300, -1e-300, 1e-8, -1e-8, 0.6499999, 0.65, 2.2, -2.2}) {
    x.push_back(v);
  }
  return x;
}

// xsimd's erf (boost.simd's rational approximations) is off by up to ~70
// units in the last place near |x| = 2.2, where two of its pieces meet: 1e-14
// relative, far below the float the result is rounded to.
TEST_P(VectorMath, ErfOfMatchesStdErfToFourteenDigits) {
  for (std::size_t n : kLengths) {  // every tail length
    std::vector<double> x(n), out(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.37 * static_cast<double>(i) - 3.0;
    GetParam()->erf_of(x.data(), out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_LE(ulps(out[i], std::erf(x[i])), 100.0) << "n=" << n << " x=" << x[i];
    }
  }
  std::vector<double> x = sweep(7.0, 7.0), out(x.size());
  GetParam()->erf_of(x.data(), out.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(ulps(out[i], std::erf(x[i])), 100.0) << "x=" << x[i];
  }
}

TEST_P(VectorMath, ErfOfIsPlusOrMinusOneAtInfinityAndExactlyOneFarOut) {
  const double x[] = {-kInf, kInf, -30.0, 30.0, 0.0};
  double out[5];
  GetParam()->erf_of(x, out, 5);  // in a tail of 5
  EXPECT_EQ(out[0], -1.0);
  EXPECT_EQ(out[1], 1.0);
  EXPECT_EQ(out[2], -1.0);
  EXPECT_EQ(out[3], 1.0);
  EXPECT_EQ(out[4], 0.0);
}

TEST_P(VectorMath, ExpOfMatchesStdExpWithinAFewUlp) {
  std::vector<double> x = sweep(700.0, 700.0), out(x.size());
  GetParam()->exp_of(x.data(), out.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(ulps(out[i], std::exp(x[i])), 2.0) << "x=" << x[i];
  }
}

TEST_P(VectorMath, ExpOfMinusInfinityIsZeroInPlace) {
  std::vector<double> x = {-kInf, 0.0, -1.0};
  GetParam()->exp_of(x.data(), x.data(), x.size());
  EXPECT_EQ(x[0], 0.0);
  EXPECT_EQ(x[1], 1.0);
  EXPECT_NEAR(x[2], std::exp(-1.0), 1e-16);
}

// The public functions go through the fastest usable table.
TEST(VectorMathDispatch, UsesTheFastestUsableInstructionSet) {
  EXPECT_STREQ(vector_math_isa(), usable_kernels().front()->isa);
  const float x[5] = {1.0f, -2.0f, 7.0f, 3.0f, 0.5f};
  EXPECT_EQ(max_of(x, 5), 7.0f);
  const double d[2] = {0.0, 30.0};
  double e[2];
  erf_of(d, e, 2);
  EXPECT_EQ(e[1], 1.0);
  exp_of(d, e, 2);
  EXPECT_EQ(e[0], 1.0);
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
