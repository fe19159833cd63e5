#include "common/testing/translation.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/testing/sentences.h"

namespace mha {
namespace testing {
namespace {

// A Spanish catalogue of a few of sentences.h's sentences and one mistake.
const char kEs[] = R"po(
msgctxt "mistake"
msgid "x reshaped straight to (n_heads, T, d_head) without the transpose"
msgstr "x con reshape directo a (n_heads, T, d_head) sin la transposición"

msgctxt "mistake"
msgid "x reshaped"
msgstr "x con reshape"

msgctxt "test"
msgid "lab %(lab)s: %(function)s is not implemented yet, see %(doc)s"
msgstr "laboratorio %(lab)s: %(function)s aún no está implementada, consulta %(doc)s"

msgctxt "test"
msgid "looks like %(mistake)s; see %(doc)s, \"Classic mistakes\""
msgstr "parece %(mistake)s; consulta %(doc)s, «Errores clásicos»"

msgctxt "test"
msgid "%(mistake)s; see %(doc)s, \"Classic mistakes\""
msgstr "%(mistake)s; consulta %(doc)s, «Errores clásicos»"

msgctxt "test"
msgid "(checked against %(golden)s: "
msgstr "(comparado con %(golden)s: "

msgctxt "test"
msgid "shape mismatch: actual %(actual_shape)s, expected %(expected_shape)s"
msgstr "formas distintas: obtenida %(actual_shape)s, esperada %(expected_shape)s"

msgctxt "test"
msgid "expected std::invalid_argument, got another exception: %(what)s"
msgstr "se esperaba std::invalid_argument y llegó otra excepción: %(what)s"

msgctxt "test"
msgid "%(what)s cannot be read back"
msgstr "%(what)s no se puede leer"

msgctxt "test"
msgid "first at %(first_index)s: actual %(actual)s"
msgstr "el primero en %(first_index)s: obtenido %(actual)s"

msgctxt "axis"
msgid "head"
msgstr "cabeza"

msgctxt "axis"
msgid "kv head"
msgstr "cabeza kv"
)po";

Translator Spanish(std::map<std::string, bool> pages = {}) {
  return Translator(Catalogue::Parse(kEs), "es", [pages](const std::string& page) {
    const auto p = pages.find(page);
    return p == pages.end() || p->second;
  });
}

TEST(RequestedLanguage, TakesTheFirstOfTheUsualVariablesThatIsSet) {
  std::map<std::string, std::string> env = {{"LANG", "en_US.UTF-8"},
                                            {"LC_MESSAGES", "pt_BR.UTF-8"}};
  auto get = [&env](const char* name) {
    const auto v = env.find(name);
    return v == env.end() ? nullptr : v->second.c_str();
  };
  EXPECT_EQ(RequestedLanguage(get), "pt_BR.UTF-8");
  env["LANGUAGE"] = "es:en";
  EXPECT_EQ(RequestedLanguage(get), "es");
  env = {{"LANGUAGE", ""}, {"LANG", "es_AR.UTF-8"}};
  EXPECT_EQ(RequestedLanguage(get), "es_AR.UTF-8");
  env.clear();
  EXPECT_EQ(RequestedLanguage(get), "");
}

const char kRegistry[] = R"json({"about": "...", "languages": [
  {"po": "es", "pages": "es", "name": "Español", "english": "Spanish", "env": ["es"],
   "locale": "es_ES.UTF-8"},
  {"po": "pt_BR", "pages": "pt-BR", "name": "Português", "english": "Brazilian Portuguese",
   "env": ["pt"], "locale": "pt_BR.UTF-8"},
  {"po": "pt_PT", "pages": "pt-PT", "name": "Português europeu", "english": "Portuguese",
   "env": ["pt_pt"], "locale": "pt_PT.UTF-8"},
  {"po": "tr", "pages": "tr", "name": "Türkçe", "english": "Turkish", "env": ["tr"],
   "locale": "tr_TR.UTF-8"}]})json";

std::string PoFor(const std::string& requested) {
  const std::vector<Language> languages = ParseLanguages(kRegistry);
  const Language* lang = LanguageFor(requested, languages);
  return lang ? lang->po : "";
}

TEST(LanguageFor, TakesTheLanguageWithTheLongestPrefixOfTheValue) {
  EXPECT_EQ(PoFor("es_ES.UTF-8"), "es");
  EXPECT_EQ(PoFor("es_AR"), "es");
  EXPECT_EQ(PoFor("pt_BR.UTF-8"), "pt_BR");
  EXPECT_EQ(PoFor("pt-PT"), "pt_PT");
  EXPECT_EQ(PoFor("PT"), "pt_BR");
  EXPECT_EQ(PoFor("TR_TR.UTF-8"), "tr");
}

TEST(LanguageFor, LeavesEnglishWhereNoLanguageServes) {
  for (const char* value : {"C.UTF-8", "POSIX", "en_US.UTF-8", "fr_FR.UTF-8", ""}) {
    EXPECT_EQ(PoFor(value), "") << value;
  }
}

TEST(ParseLanguages, ReadsEachLanguagesCataloguePagesAndPrefixes) {
  const std::vector<Language> languages = ParseLanguages(kRegistry);
  ASSERT_EQ(languages.size(), 4u);
  EXPECT_EQ(languages[1].pages, "pt-BR");
  EXPECT_EQ(languages[1].env, std::vector<std::string>{"pt"});
}

TEST(ParseLanguages, RejectsWhatIsNotTheRegistryNamingWhatItExpected) {
  for (const char* text : {"", "[]", "{\"languages\": [{\"po\": \"es\"}]}"}) {
    try {
      ParseLanguages(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("po/languages.json"), std::string::npos) << e.what();
    }
  }
}

TEST(Translator, NamesTheMistakeAndTheTranslatedLessonWithTheSameNumbers) {
  const std::string english =
      Fill(kLooksLike, {{"mistake",
                         "x reshaped straight to (n_heads, T, d_head) without the "
                         "transpose"},
                        {"doc", "docs/01_split_heads.md"}}) +
      " " + Fill(kCheckedAgainst, {{"golden", "labs/01_split_heads/golden/split_heads.npy"}}) +
      "20 of 30 elements differ)";
  EXPECT_EQ(Spanish().Translate(english),
            "parece x con reshape directo a (n_heads, T, d_head) sin la transposición; "
            "consulta docs/es/01_split_heads.md, «Errores clásicos» (comparado con "
            "labs/01_split_heads/golden/split_heads.npy: 20 of 30 elements differ)");
}

TEST(Translator, TranslatesAStubsExceptionInsideGoogleTestsWords) {
  const std::string english =
      "C++ exception with description \"" +
      Fill(kNotImplemented,
           {{"lab", "1"}, {"function", "split_heads"}, {"doc", "docs/01_split_heads.md"}}) +
      "\" thrown in the test body.";
  EXPECT_EQ(Spanish().Translate(english),
            "C++ exception with description \"laboratorio 1: split_heads aún no está "
            "implementada, consulta docs/es/01_split_heads.md\" thrown in the test body.");
}

TEST(Translator, KeepsTheEnglishLessonWhereTheWorkspaceHasNoTranslation) {
  const Translator tr = Spanish({{"docs/es/02_batched_attention.md", false}});
  EXPECT_EQ(tr.Translate(Fill(kNotImplemented, {{"lab", "2"},
                                                {"function", "softmax_rows"},
                                                {"doc", "docs/02_batched_attention.md"}})),
            "laboratorio 2: softmax_rows aún no está implementada, consulta "
            "docs/02_batched_attention.md");
}

TEST(Translator, LeavesASentenceEnglishWhenItsMistakeIsNotTranslated) {
  const std::string english = Fill(
      kSeeClassicMistakes, {{"mistake", "W_O forgotten"}, {"doc", "docs/03_output_projection.md"}});
  EXPECT_EQ(Spanish().Translate(english), english);
}

TEST(Translator, PrefersTheLongestMistakeWhoseWordsBeginAnother) {
  EXPECT_EQ(
      Spanish().Translate("\n" + Fill(kSeeClassicMistakes, {{"mistake", "x reshaped"},
                                                            {"doc", "docs/01_split_heads.md"}})),
      "\nx con reshape; consulta docs/es/01_split_heads.md, «Errores clásicos»");
}

TEST(Translator, TranslatesASentenceInsideAnotherOnesValue) {
  const std::string english =
      Fill(kOtherException, {{"what", Fill(kNotImplemented, {{"lab", "1"},
                                                             {"function", "combine_heads"},
                                                             {"doc", "docs/01_split_heads.md"}})}});
  EXPECT_EQ(Spanish().Translate(english),
            "se esperaba std::invalid_argument y llegó otra excepción: laboratorio 1: "
            "combine_heads aún no está implementada, consulta docs/es/01_split_heads.md");
}

TEST(Translator, ReadsShapesAndKeepsEverythingAroundTheSentence) {
  EXPECT_EQ(Spanish().Translate("vs g.npy: shape mismatch: actual (2, 3), expected (3, 2)!"),
            "vs g.npy: formas distintas: obtenida (2, 3), esperada (3, 2)!");
}

TEST(Translator, NamesTheAxesOfAnIndexInTheLanguage) {
  EXPECT_EQ(Spanish().Translate("first at [head 1, kv head 0, token 2, 3]: actual 0.5"),
            "el primero en [cabeza 1, cabeza kv 0, token 2, 3]: obtenido 0.5");
}

TEST(Translator, IgnoresASentenceThatCannotBeReadBackIntoItsValues) {
  EXPECT_EQ(Spanish().Translate("this cannot be read back"), "this cannot be read back");
}

TEST(Translator, ChangesNothingInTextWithoutItsSentences) {
  const std::string english = "Value of: x\n  Actual: false\nExpected: true";
  EXPECT_EQ(Spanish().Translate(english), english);
}

// A workspace with the registry, a Spanish catalogue and lesson, in the
// test's own folder.
std::string SpanishWorkspace() {
  namespace fs = std::filesystem;
  const fs::path ws = fs::path(std::getenv("TEST_TMPDIR")) / "workspace";
  fs::create_directories(ws / "po" / "cli");
  fs::create_directories(ws / "docs" / "es");
  std::ofstream(ws / "po" / "languages.json") << kRegistry;
  std::ofstream(ws / "po" / "cli" / "es.po") << kEs;
  std::ofstream(ws / "docs" / "es" / "01_split_heads.md") << "# Laboratorio 1\n";
  return ws.string();
}

void SetLang(const char* value) {
  for (const char* v : {"LANGUAGE", "LC_ALL", "LC_MESSAGES"}) unsetenv(v);
  if (value) {
    setenv("LANG", value, 1);
  } else {
    unsetenv("LANG");
  }
}

TEST(LearnerTranslator, SpeaksTheLanguageOfLangAndFindsItsLessons) {
  const std::string root = SpanishWorkspace();
  SetLang("es_ES.UTF-8");
  const std::optional<Translator> tr = LearnerTranslator(root);
  ASSERT_TRUE(tr.has_value());
  EXPECT_EQ(tr->Translate(Fill(
                kNotImplemented,
                {{"lab", "1"}, {"function", "split_heads"}, {"doc", "docs/01_split_heads.md"}})),
            "laboratorio 1: split_heads aún no está implementada, consulta "
            "docs/es/01_split_heads.md");
}

TEST(LearnerTranslator, IsAbsentForEnglishOrALanguageWithoutACatalogue) {
  const std::string root = SpanishWorkspace();
  // Turkish is in the registry, but this workspace has no po/cli/tr.po.
  for (const char* lang : {"C.UTF-8", "en_US.UTF-8", "fr_FR.UTF-8", "tr_TR.UTF-8"}) {
    SetLang(lang);
    EXPECT_FALSE(LearnerTranslator(root).has_value()) << lang;
  }
  SetLang(nullptr);
  EXPECT_FALSE(LearnerTranslator(root).has_value());
}

}  // namespace
}  // namespace testing
}  // namespace mha
