#include "common/testing/testing.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mha {
namespace testing {
namespace {

TEST(AllClose, AcceptsValuesWithinTolerance) {
  Tensor2 a = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  Tensor2 b = a + 1e-7f;
  EXPECT_TRUE(AllClose(a, b, kAttention));
}

TEST(AllClose, NamesTheFirstDivergenceByAxis) {
  Tensor3 a = xt::zeros<float>({2, 3, 4});
  Tensor3 b = a;
  b(1, 2, 0) = 0.5f;
  auto r = AllClose(a, b, kAttention, {"head", "query", "key"});
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("[head 1, query 2, key 0]"), std::string::npos)
      << r.message();
  EXPECT_NE(std::string(r.message()).find("1 of 24"), std::string::npos) << r.message();
}

TEST(AllClose, RejectsShapeMismatch) {
  Tensor2 a = xt::zeros<float>({2, 3});
  Tensor2 b = xt::zeros<float>({3, 2});
  auto r = AllClose(a, b, kExact);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("(2, 3)"), std::string::npos) << r.message();
}

TEST(AllClose, TreatsNanAsAFailure) {
  Tensor2 a = {{NAN, 0.0f}};
  Tensor2 b = {{0.0f, 0.0f}};
  EXPECT_FALSE(AllClose(a, b, kAttention));
}

TEST(AllClose, RequiresMatchingInfinities) {
  Tensor2 a = {{-INFINITY, 0.0f}};
  EXPECT_TRUE(AllClose(a, a, kExact));
  Tensor2 b = {{0.0f, 0.0f}};
  EXPECT_FALSE(AllClose(a, b, kExact));
}

TEST(ThrowsInvalidArgument, RequiresTheOffendingValuesInTheMessage) {
  auto bad = [] { throw std::invalid_argument("d_model=10 is not divisible by n_heads=4"); };
  EXPECT_TRUE(ThrowsInvalidArgument(bad, {"d_model=10", "n_heads=4"}));
  EXPECT_FALSE(ThrowsInvalidArgument(bad, {"n_heads=3"}));
}

TEST(ThrowsInvalidArgument, RejectsOtherExceptionsAndNormalReturns) {
  EXPECT_FALSE(ThrowsInvalidArgument([] { throw std::logic_error("not implemented"); }, {}));
  EXPECT_FALSE(ThrowsInvalidArgument([] {}, {}));
}

TEST(GoldenFile, IsTheFolderThenTheNameThenNpy) {
  EXPECT_EQ(GoldenFile("labs/08_kv_cache/golden/", "gqa_x"), "labs/08_kv_cache/golden/gqa_x.npy");
}

TEST(FreshDraws, ReplaysTheSeedInMhaTestSeed) {
  ASSERT_EQ(setenv("MHA_TEST_SEED", "1234", 1), 0);
  FreshDraws draws;
  unsetenv("MHA_TEST_SEED");
  EXPECT_EQ(draws.seed(), 1234u);
  std::mt19937_64 expected(1234);
  EXPECT_EQ(draws(), expected());
  EXPECT_EQ(draws.Pick(1, 7), std::uniform_int_distribution<int>(1, 7)(expected));
}

TEST(LoadNpy, NamesTheMissingFile) {
  try {
    LoadNpy("no/such/file.npy");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/file.npy"), std::string::npos);
  }
}

TEST(MistakeTable, NamesEachMistakeWithItsWordsAndTheLessonsSection) {
  const MistakeTable table("lesson.md",
                           {{"no_scale", "scores not scaled"}, {"swap", "q, k swapped"}});
  EXPECT_EQ(table.Message("swap"), "q, k swapped; see lesson.md, \"Classic mistakes\"");
  EXPECT_EQ(table.Message("other"), "other; see lesson.md, \"Classic mistakes\"");
}

TEST(MistakeTable, GivesTheGeneratorsFilesInTheOrderAsked) {
  const MistakeTable table("lesson.md", {{"a", "A"}, {"b", "B"}});
  const std::vector<KnownMistake> m = table.Of("dir/case_output", {"b", "a"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].golden, "dir/case_output_mistake_b.npy");
  EXPECT_EQ(m[0].message, "B; see lesson.md, \"Classic mistakes\"");
  EXPECT_EQ(m[1].golden, "dir/case_output_mistake_a.npy");
}

}  // namespace
}  // namespace testing
}  // namespace mha
