#include "common/testing/catalogue.h"

#include <string>

#include <gtest/gtest.h>

namespace mha {
namespace testing {
namespace {

const char kPo[] = R"po(# A catalogue as msgmerge writes it.
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"

#: tools/lab/learner/status.py
msgid "first failure: %s"
msgstr "primer fallo: %s"

#. A public test's mistake.
msgctxt "mistake"
msgid "scores not scaled by "
"1/sqrt(d_head)"
msgstr "puntuaciones sin "
"escalar por 1/sqrt(d_head)"

msgctxt "test"
msgid "say \"hi\"\tthen\\stop\n"
msgstr "di \"hola\"\tluego\\para\n"

#, fuzzy
msgid "a changed sentence"
msgstr "una frase vieja"

msgid "not translated yet"
msgstr ""

msgid "%d file"
msgid_plural "%d files"
msgstr[0] "%d archivo"
msgstr[1] "%d archivos"

#~ msgid "an obsolete sentence"
#~ msgstr "una frase obsoleta"
)po";

TEST(Catalogue, FindsATranslationWithoutAContext) {
  const Catalogue c = Catalogue::Parse(kPo);
  ASSERT_NE(c.Find("", "first failure: %s"), nullptr);
  EXPECT_EQ(*c.Find("", "first failure: %s"), "primer fallo: %s");
}

TEST(Catalogue, JoinsContinuedStringsAndKeepsContextsApart) {
  const Catalogue c = Catalogue::Parse(kPo);
  ASSERT_NE(c.Find("mistake", "scores not scaled by 1/sqrt(d_head)"), nullptr);
  EXPECT_EQ(*c.Find("mistake", "scores not scaled by 1/sqrt(d_head)"),
            "puntuaciones sin escalar por 1/sqrt(d_head)");
  EXPECT_EQ(c.Find("", "scores not scaled by 1/sqrt(d_head)"), nullptr);
}

TEST(Catalogue, UndoesTheEscapesOfItsStrings) {
  const Catalogue c = Catalogue::Parse(kPo);
  ASSERT_NE(c.Find("test", "say \"hi\"\tthen\\stop\n"), nullptr);
  EXPECT_EQ(*c.Find("test", "say \"hi\"\tthen\\stop\n"), "di \"hola\"\tluego\\para\n");
}

TEST(Catalogue, TreatsFuzzyUntranslatedAndObsoleteEntriesAsMissing) {
  const Catalogue c = Catalogue::Parse(kPo);
  EXPECT_EQ(c.Find("", "a changed sentence"), nullptr);
  EXPECT_EQ(c.Find("", "not translated yet"), nullptr);
  EXPECT_EQ(c.Find("", "an obsolete sentence"), nullptr);
  EXPECT_EQ(c.Find("", ""), nullptr);
}

TEST(Catalogue, ReadsThePluralsFirstForm) {
  const Catalogue c = Catalogue::Parse(kPo);
  ASSERT_NE(c.Find("", "%d file"), nullptr);
  EXPECT_EQ(*c.Find("", "%d file"), "%d archivo");
}

TEST(Catalogue, ListsTheTranslatedEntriesOfAContext) {
  const Catalogue c = Catalogue::Parse(kPo);
  const auto mistakes = c.Translated("mistake");
  ASSERT_EQ(mistakes.size(), 1u);
  EXPECT_EQ(mistakes[0].first, "scores not scaled by 1/sqrt(d_head)");
  EXPECT_TRUE(c.Translated("nothing").empty());
}

TEST(Catalogue, LoadsNothingFromAMissingFile) {
  EXPECT_FALSE(Catalogue::Load("po/cli/no_such_language.po").has_value());
}

}  // namespace
}  // namespace testing
}  // namespace mha
