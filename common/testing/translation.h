// A test's failures in the learner's language.
//
//   std::optional<Translator> tr = LearnerTranslator();   // LANG=es_ES.UTF-8: po/cli/es.po
//   if (tr) std::cout << tr->Translate(failure.message());
//
// The language is the first of LANGUAGE (its first entry), LC_ALL,
// LC_MESSAGES and LANG that is set, looked up as ./lab looks it up
// (tools/lab/languages.py): in the registry of the course's languages,
// po/languages.json, the language with the longest "env" prefix of the value
// ("es_AR.UTF-8" is Spanish; C, POSIX and English are none). Its catalogue is
// po/cli/<po>.po and its lessons docs/<pages>/. No locale needs to be
// generated and no .mo compiled: adding a language is its line in the
// registry and its catalogues, no code.
//
// Translate() finds, in the English text a test printed, every sentence of
// common/testing/sentences.h (the catalogue's context "test") and writes the
// catalogue's sentence with the same values instead. A value is read back by
// the kind its name gives it:
//
//   lab, total, *count  digits
//   *_shape             a shape, "(2, 3, 4)"
//   *_index             an index, "[head 1, query 2, key 0]": written with its
//                       axes' names translated (the catalogue's context "axis")
//   doc                 a lesson, "docs/01_split_heads.md": written as the
//                       translated lesson ("docs/es/01_split_heads.md") when
//                       the workspace has it
//   mistake             the words of a classic mistake that the catalogue
//                       translates (its context "mistake": the MistakeTables'
//                       words): written translated
//   anything else       the text up to the words that follow it (to the end
//                       of the line when none do), itself translated
//
// A sentence the catalogue does not translate, or a mistake whose words it
// does not, stays English as a whole, lesson included: the English lesson is
// where the English words are explained.
#ifndef MHA_COMMON_TESTING_TRANSLATION_H_
#define MHA_COMMON_TESTING_TRANSLATION_H_

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "common/testing/catalogue.h"

namespace mha {
namespace testing {

// The language the environment asks for ("es_ES.UTF-8"), or "" when none is set.
std::string RequestedLanguage(const std::function<const char*(const char*)>& getenv);

// A language of the registry po/languages.json.
struct Language {
  std::string po;                // its catalogues' code: po/cli/<po>.po ("pt_BR")
  std::string pages;             // the folder of its lessons: docs/<pages>/ ("pt-BR")
  std::vector<std::string> env;  // the lower-case prefixes of a LANG value that select it
};

// The languages of a registry's text; throws std::invalid_argument naming
// what is wrong when it is not the registry's JSON.
std::vector<Language> ParseLanguages(const std::string& registry_text);

// The language `requested` ("es_ES.UTF-8", "pt-BR") selects: the one with the
// longest prefix of it (ASCII letters lower-cased, "-" read as "_"), or none.
const Language* LanguageFor(const std::string& requested, const std::vector<Language>& languages);

class Translator {
 public:
  // `pages` is the folder of the language's lessons under docs/ ("es",
  // "pt-BR"); `page_exists` says whether the workspace has a page
  // ("docs/es/01_split_heads.md").
  Translator(const Catalogue& catalogue, std::string pages,
             std::function<bool(const std::string&)> page_exists);

  // `text` with every sentence the catalogue translates written in its language.
  std::string Translate(const std::string& text) const;

 private:
  struct Sentence {
    std::regex english;              // the English sentence, its values captured
    std::vector<std::string> names;  // the name of each captured value, in order
    std::string translation;         // the catalogue's sentence
    std::size_t words = 0;           // how many characters are not values
  };

  std::string Translate(const std::string& text, int depth) const;
  std::string Value(const std::string& name, const std::string& value, int depth) const;
  std::string Index(const std::string& index) const;

  std::vector<Sentence> sentences_;  // the longest English words first
  std::map<std::string, std::string> mistakes_;
  std::map<std::string, std::string> axes_;
  std::string pages_;
  std::function<bool(const std::string&)> page_exists_;
};

// The translator of the learner's language (RequestedLanguage of the
// process's environment) from the registry and catalogues under `root` (a
// test runs in its runfiles, which hold po/languages.json and po/cli/), or
// none when that language is English, or has no registry entry or
// catalogue there. The lessons are looked up in the workspace the registry
// belongs to (the runfiles link to it).
std::optional<Translator> LearnerTranslator(const std::string& root = ".");

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TESTING_TRANSLATION_H_
