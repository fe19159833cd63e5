#include "common/grading/test_results.h"

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <xtensor/xnpy.hpp>

#include "common/testing/misconception.h"
#include "common/testing/testing.h"

namespace mha {
namespace {

using testing::Misconception;
using testing::MistakeTable;
using testing::TakeMisconception;

const MistakeTable kTable("docs/02_batched_attention.md", {{"no_scale", "scores not scaled"}});

// The name of the misconception TakeMisconception finds in `failure`, or
// "(none)" when it finds none.
std::string TakenName(const std::string& failure) {
  const std::optional<Misconception> m = TakeMisconception(failure);
  return m ? m->name : "(none)";
}

TEST(VerdictLine, WritesTheMistakeAsItsOwnField) {
  const std::string line =
      VerdictLine("S.T", false, 3, "looks like \"x\"",
                  Misconception{"no_scale", "scores not scaled", "docs/01_split_heads.md", true});
  EXPECT_EQ(line,
            "{\"name\":\"S.T\",\"passed\":false,\"ms\":3,\"message\":\"looks like \\\"x\\\"\","
            "\"mistake\":{\"name\":\"no_scale\",\"words\":\"scores not scaled\","
            "\"doc\":\"docs/01_split_heads.md\",\"looks_like\":true}}\n");
}

TEST(VerdictLine, HasNoMistakeFieldWhenNoneWasNamed) {
  EXPECT_EQ(VerdictLine("S.T", true, 0, "", std::nullopt),
            "{\"name\":\"S.T\",\"passed\":true,\"ms\":0,\"message\":\"\"}\n");
}

TEST(TakeMisconception, FindsTheRecordWhoseSentenceIsInTheFailure) {
  testing::RecordMisconception({"a", "first", ""}, "looks like first");
  testing::RecordMisconception({"b", "second", ""}, "looks like second");
  EXPECT_EQ(TakenName("file.cc:3: Failure\nlooks like second; see docs"), "b");
}

TEST(TakeMisconception, PrefersADiagnosisToARuleInTheSameFailure) {
  testing::RecordMisconception({"rule", "a rule", ""}, "a rule; see docs");
  testing::RecordMisconception({"diag", "a diagnosis", "", true}, "looks like a diagnosis");
  EXPECT_EQ(TakenName("looks like a diagnosis (...)\na rule; see docs"), "diag");
}

TEST(TakeMisconception, ForgetsEveryRecordOnceAFailureIsReported) {
  testing::RecordMisconception({"a", "first", ""}, "looks like first");
  EXPECT_FALSE(TakeMisconception("an unrelated failure").has_value());
  EXPECT_FALSE(TakeMisconception("looks like first").has_value());
}

TEST(MistakeNote, PrintsTheTableSentenceAndRecordsTheMistake) {
  testing::ForgetMisconceptions();
  std::ostringstream out;
  out << kTable.LooksLike("no_scale");
  EXPECT_EQ(out.str(),
            "looks like scores not scaled; see docs/02_batched_attention.md, \"Classic mistakes\"");
  const std::optional<Misconception> m = TakeMisconception("x: " + out.str());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->name, "no_scale");
  EXPECT_EQ(m->words, "scores not scaled");
  EXPECT_EQ(m->doc, "docs/02_batched_attention.md");
  EXPECT_TRUE(m->looks_like);
}

TEST(MistakeNote, NamedStatesTheRuleWithoutLooksLike) {
  testing::ForgetMisconceptions();
  std::ostringstream out;
  out << kTable.Named("no_scale");
  EXPECT_EQ(out.str(), kTable.Message("no_scale"));
  const std::optional<Misconception> m = TakeMisconception(out.str());
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->looks_like);
}

TEST(MistakeNote, IsStreamedOnlyWhenTheAssertionFails) {
  testing::ForgetMisconceptions();
  EXPECT_EQ(1, 1) << kTable.Named("no_scale");
  EXPECT_FALSE(TakeMisconception(kTable.Message("no_scale")).has_value());
}

TEST(MatchesGolden, RecordsTheKnownMistakeItRecognises) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/";
  xt::dump_npy(dir + "g.npy", xt::xarray<float>({1.0f, 2.0f}));
  xt::dump_npy(dir + "g_mistake_no_scale.npy", xt::xarray<float>({2.0f, 4.0f}));
  testing::ForgetMisconceptions();
  const ::testing::AssertionResult r =
      testing::MatchesGolden(xt::xarray<float>({2.0f, 4.0f}), dir + "g.npy", testing::kExact, {},
                             kTable.Of(dir + "g", {"no_scale"}));
  ASSERT_FALSE(r);
  const std::string message = r.message();
  EXPECT_EQ(message.rfind("looks like scores not scaled; see docs/02_batched_attention.md", 0), 0u)
      << message;
  const std::optional<Misconception> m = TakeMisconception(message);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->name, "no_scale");
  EXPECT_EQ(m->words, "scores not scaled");
  EXPECT_TRUE(m->looks_like);
}

}  // namespace
}  // namespace mha
