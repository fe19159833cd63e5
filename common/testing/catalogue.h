// A gettext catalogue read from its text form, a .po file:
//
//   std::optional<Catalogue> es = Catalogue::Load("po/cli/es.po");
//   const std::string* words = es->Find("mistake", "scores not scaled by 1/sqrt(d_head)");
//
// The tests read po/cli/<lang>.po itself, not a compiled .mo: a learner's
// machine needs no msgfmt, and no generated file can fall behind the
// catalogue. What the reader understands is what ./lab translate and msgmerge
// write: `#` comments (a `#, fuzzy` flag makes the entry untranslated, `#~`
// marks an obsolete one, which is skipped), `msgctxt`, `msgid`,
// `msgid_plural`, `msgstr` and `msgstr[0]`, each a string that may continue
// on the following lines, with the C escapes \n, \t, \" and \\.
#ifndef MHA_COMMON_TESTING_CATALOGUE_H_
#define MHA_COMMON_TESTING_CATALOGUE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mha {
namespace testing {

class Catalogue {
 public:
  // The entries of a .po file's text; a line it does not understand is skipped.
  static Catalogue Parse(const std::string& po_text);
  // The catalogue at `path`, or none when it cannot be read.
  static std::optional<Catalogue> Load(const std::string& path);

  // The translation of `msgid` under `context` ("" for none), or nullptr
  // when the catalogue lacks it or has it untranslated or fuzzy.
  const std::string* Find(const std::string& context, const std::string& msgid) const;

  // Every translated entry under `context`: (English, translation).
  std::vector<std::pair<std::string, std::string>> Translated(const std::string& context) const;

 private:
  // context -> English -> translation (only translated, current entries).
  std::map<std::string, std::map<std::string, std::string>> entries_;
};

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TESTING_CATALOGUE_H_
