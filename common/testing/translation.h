// A test's failures in the learner's language.
//
//   std::optional<Translator> tr = LearnerTranslator();   // LANG=es_ES.UTF-8: po/cli/es.po
//   if (tr) std::cout << tr->Translate(failure.message());
//
// The language is the first of LANGUAGE (its first entry), LC_ALL,
// LC_MESSAGES and LANG that is set, as ./lab reads it
// (tools/lab/learner/i18n.py), and the catalogue is po/cli/<code>.po of the
// same code ("es_AR.UTF-8" reads es.po; "pt_PT" reads pt_BR.po when that is
// the only Portuguese one); C, POSIX, English or a language without a
// catalogue leave the English. No locale needs to be generated and no .mo
// compiled: adding a language is adding its po/cli/<code>.po (and its
// lessons in docs/<code with - for _>/), no code.
//
// Translate() finds, in the English text a test printed, every sentence of
// common/testing/sentences.h (the catalogue's context "test") and writes the
// catalogue's sentence with the same values instead. A value is read back by
// the kind its name gives it:
//
//   lab, total, *count  digits
//   *_shape             a shape, "(2, 3, 4)"
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

// Among the catalogue codes `available` ("es", "pt_BR"), the one that serves
// `requested`: the same code (case and "-" or "_" aside, without ".UTF-8" or
// "@euro"), else the first of the same language; "" when none does.
std::string CatalogueFor(const std::string& requested, const std::vector<std::string>& available);

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

  std::vector<Sentence> sentences_;  // the longest English words first
  std::map<std::string, std::string> mistakes_;
  std::string pages_;
  std::function<bool(const std::string&)> page_exists_;
};

// The translator of the learner's language (RequestedLanguage of the
// process's environment) from the catalogues in `folder`, or none when that
// language is English or has no catalogue there. The lessons are looked up in
// the workspace the catalogue belongs to (the tests' runfiles link to it).
std::optional<Translator> LearnerTranslator(const std::string& folder = "po/cli");

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TESTING_TRANSLATION_H_
