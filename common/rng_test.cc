// Pins mha::NumpyRng to NumPy bit for bit.
//
// The goldens in common/testdata/rng_*.npy come from NumPy 1.x, through
// tools/goldens/gen_rng.py in the instructors' repository. Paths are relative to the workspace
// root, which is the working directory under `bazel test`.
#include "common/rng.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <xtensor/xnpy.hpp>

namespace mha {
namespace {

std::string TestData(const std::string& name) {
  return "common/testdata/" + name;
}

// The IEEE-754 bit pattern, so that EXPECT_EQ tells -0.0 from 0.0 and shows
// differences in the last bit that a printed value might hide.
std::uint64_t Bits(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::uint32_t Bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Draws as many values as the golden holds and stops at the first mismatch,
// so a failure names the first index where the streams part ways.
void ExpectStreamMatchesGolden(std::uint64_t seed) {
  const auto golden = xt::load_npy<double>(
      TestData("rng_normal_seed" + std::to_string(seed) + ".npy"));
  ASSERT_EQ(golden.dimension(), 1u);
  ASSERT_EQ(golden.size(), 10000u);

  NumpyRng rng(seed);
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const double got = rng.standard_normal();
    ASSERT_EQ(Bits(got), Bits(golden(i)))
        << "seed " << seed << ": first mismatch at draw " << i << ": got "
        << got << ", NumPy gave " << golden(i);
  }
}

// Compares a float32 weight matrix with a golden, bit for bit.
void ExpectMatrixMatchesGolden(const Tensor2& got, const std::string& name) {
  // The goldens are float32; load_npy checks the stored dtype matches.
  const auto golden = xt::load_npy<float>(TestData(name));
  ASSERT_EQ(golden.dimension(), 2u);
  ASSERT_EQ(got.shape(0), golden.shape()[0]) << name;
  ASSERT_EQ(got.shape(1), golden.shape()[1]) << name;
  for (std::size_t i = 0; i < got.shape(0); ++i) {
    for (std::size_t j = 0; j < got.shape(1); ++j) {
      ASSERT_EQ(Bits(got(i, j)), Bits(golden(i, j)))
          << name << ": first mismatch at (" << i << ", " << j << "): got "
          << got(i, j) << ", NumPy gave " << golden(i, j);
    }
  }
}

TEST(NumpyRng, StandardNormalMatchesNumpyBitForBitForSeed0) {
  ExpectStreamMatchesGolden(0);
}

TEST(NumpyRng, StandardNormalMatchesNumpyBitForBitForSeed1) {
  ExpectStreamMatchesGolden(1);
}

TEST(NumpyRng, StandardNormalMatchesNumpyBitForBitForSeed42) {
  ExpectStreamMatchesGolden(42);
}

TEST(NumpyRng, StandardNormalMatchesNumpyBitForBitForSeed12345) {
  ExpectStreamMatchesGolden(12345);
}

// 2^64 - 1 needs two 32-bit words of entropy in SeedSequence.
TEST(NumpyRng, StandardNormalMatchesNumpyBitForBitForLargestSeed) {
  ExpectStreamMatchesGolden(18446744073709551615ULL);
}

// Draw 241877 of seed 0 takes the tail branch (|z| > 3.654...), where NumPy
// computes log1p(-u); log(1 - u) would be off by one ulp. The 10000-draw
// goldens above never hit a case where the two differ.
TEST(NumpyRng, TailDrawsMatchNumpyWhichUsesLog1p) {
  constexpr std::size_t kWindowStart = 241872;
  const auto golden =
      xt::load_npy<double>(TestData("rng_normal_seed0_from241872.npy"));
  ASSERT_EQ(golden.size(), 8u);

  NumpyRng rng(0);
  for (std::size_t i = 0; i < kWindowStart; ++i) rng.standard_normal();
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const double got = rng.standard_normal();
    ASSERT_EQ(Bits(got), Bits(golden(i)))
        << "first mismatch at draw " << kWindowStart + i << ": got " << got
        << ", NumPy gave " << golden(i);
  }
}

TEST(NumpyRng, SameSeedGivesSameStream) {
  NumpyRng a(2024);
  NumpyRng b(2024);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(Bits(a.standard_normal()), Bits(b.standard_normal())) << i;
  }
}

TEST(NumpyRng, NormalMatrixMatchesNumpyFloat32Weights) {
  NumpyRng rng(7);
  ExpectMatrixMatchesGolden(rng.normal_matrix(5, 3, 5),
                            "rng_matrix_seed7_5x3_fanin5.npy");
}

TEST(NumpyRng, NormalMatrixMatchesNumpyForALargerMatrix) {
  NumpyRng rng(11);
  ExpectMatrixMatchesGolden(rng.normal_matrix(16, 8, 16),
                            "rng_matrix_seed11_16x8_fanin16.npy");
}

TEST(NumpyRng, ConsecutiveMatricesContinueTheSameStream) {
  NumpyRng rng(3);
  const Tensor2 a = rng.normal_matrix(4, 6, 4);
  const Tensor2 b = rng.normal_matrix(6, 4, 6);
  ExpectMatrixMatchesGolden(a, "rng_two_matrices_seed3_a.npy");
  ExpectMatrixMatchesGolden(b, "rng_two_matrices_seed3_b.npy");
}

TEST(NumpyRng, NormalMatrixConsumesOneDrawPerElementInRowMajorOrder) {
  NumpyRng by_matrix(5);
  NumpyRng by_draw(5);
  const Tensor2 w = by_matrix.normal_matrix(2, 3, 1);  // fan_in 1: scale 1.
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(Bits(w(i, j)),
                Bits(static_cast<float>(by_draw.standard_normal())))
          << "(" << i << ", " << j << ")";
    }
  }
  // Both generators must now be at the same point of the stream.
  EXPECT_EQ(Bits(by_matrix.standard_normal()), Bits(by_draw.standard_normal()));
}

// Checks that `call` throws std::invalid_argument whose message contains
// `expected`.
template <typename Call>
void ExpectInvalidArgumentMentioning(Call call, const std::string& expected) {
  try {
    call();
    ADD_FAILURE() << "expected std::invalid_argument mentioning " << expected;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message was: " << e.what();
  }
}

TEST(NumpyRng, RandomMatchesNumpyBitForBit) {
  for (std::uint64_t seed : {0u, 7u}) {
    const auto golden = xt::load_npy<double>(
        TestData("rng_random_seed" + std::to_string(seed) + ".npy"));
    ASSERT_EQ(golden.size(), 1000u);
    NumpyRng rng(seed);
    for (std::size_t i = 0; i < golden.size(); ++i) {
      const double got = rng.random();
      ASSERT_EQ(Bits(got), Bits(golden(i)))
          << "seed " << seed << ": first mismatch at draw " << i << ": got " << got
          << ", NumPy gave " << golden(i);
    }
  }
}

TEST(NumpyRng, RandomAndStandardNormalContinueOneStream) {
  // NumPy: every third draw standard_normal(), the others random(), from one generator.
  const auto golden = xt::load_npy<double>(TestData("rng_mixed_seed5.npy"));
  ASSERT_EQ(golden.size(), 300u);
  NumpyRng rng(5);
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const double got = i % 3 ? rng.random() : rng.standard_normal();
    ASSERT_EQ(Bits(got), Bits(golden(i))) << "first mismatch at draw " << i << ": got " << got
                                          << ", NumPy gave " << golden(i);
  }
}

TEST(NumpyRng, RandomStaysInTheHalfOpenUnitInterval) {
  NumpyRng rng(123);
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.random();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(NumpyRng, NormalMatrixRejectsZeroFanIn) {
  NumpyRng rng(0);
  ExpectInvalidArgumentMentioning([&] { rng.normal_matrix(2, 2, 0); },
                                  "fan_in=0");
}

TEST(NumpyRng, NormalMatrixRejectsZeroRows) {
  NumpyRng rng(0);
  ExpectInvalidArgumentMentioning([&] { rng.normal_matrix(0, 2, 2); },
                                  "rows=0");
}

TEST(NumpyRng, NormalMatrixRejectsZeroCols) {
  NumpyRng rng(0);
  ExpectInvalidArgumentMentioning([&] { rng.normal_matrix(2, 0, 2); },
                                  "cols=0");
}

}  // namespace
}  // namespace mha
