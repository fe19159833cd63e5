#include "common/testing/sentences.h"

#include <string>

#include <gtest/gtest.h>

namespace mha {
namespace testing {
namespace {

TEST(Fill, PutsEachValueInPlaceOfItsName) {
  EXPECT_EQ(Fill(kShapeMismatch, {{"actual_shape", "(2, 3)"}, {"expected_shape", "(3, 2)"}}),
            "shape mismatch: actual (2, 3), expected (3, 2)");
}

TEST(Fill, LeavesANameWithoutAValueAndWritesPercentSignsOnce) {
  EXPECT_EQ(Fill("%(a)s is 100%% of %(b)s", {{"a", "x"}}), "x is 100% of %(b)s");
}

TEST(Fill, DoesNotReadAValueAgainAsATemplate) {
  EXPECT_EQ(Fill("[%(a)s]", {{"a", "%(a)s"}}), "[%(a)s]");
}

TEST(Sentences, ADiagnosisIsTheMistakesSentenceAfterLooksLike) {
  const SentenceValues v = {{"mistake", "W_O forgotten"}, {"doc", "docs/03_output_projection.md"}};
  EXPECT_EQ(Fill(kLooksLike, v), "looks like " + Fill(kSeeClassicMistakes, v));
}

}  // namespace
}  // namespace testing
}  // namespace mha
