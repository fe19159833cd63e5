#include "common/testing/translation.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/testing/sentences.h"

namespace mha {
namespace testing {
namespace {

// A LANG value as the registry's prefixes are written: ASCII letters in
// lower case (the same under every locale, Turkish too), "-" as "_".
std::string Normalised(const std::string& value) {
  std::string out;
  for (char c : value) {
    out += c == '-' ? '_' : (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// One piece of a sentence: its words, or the name of a value.
struct Piece {
  bool value;
  std::string text;
};

std::vector<Piece> Pieces(const std::string& sentence) {
  std::vector<Piece> out;
  std::string words;
  for (std::size_t i = 0; i < sentence.size();) {
    const std::size_t close = sentence.find(")s", i);
    if (sentence.compare(i, 2, "%(") == 0 && close != std::string::npos) {
      if (!words.empty()) out.push_back({false, words});
      words.clear();
      out.push_back({true, sentence.substr(i + 2, close - i - 2)});
      i = close + 2;
    } else if (sentence.compare(i, 2, "%%") == 0) {
      words += '%';
      i += 2;
    } else {
      words += sentence[i++];
    }
  }
  if (!words.empty()) out.push_back({false, words});
  return out;
}

// `text` as a regular expression that matches exactly it.
std::string Escaped(const std::string& text) {
  static const std::string kSpecial = "\\^$.|?*+()[]{}";
  std::string out;
  for (char c : text) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsCount(const std::string& name) {
  return name == "lab" || name == "total" || EndsWith(name, "count");
}

// The kinds of value that cannot swallow their neighbours (translation.h).
bool IsBounded(const std::string& name) {
  return IsCount(name) || EndsWith(name, "_shape") || EndsWith(name, "_index") || name == "doc" ||
         name == "mistake";
}

// How deep a value is translated inside another sentence's value.
constexpr int kMaxDepth = 3;
// Longer texts are printed as they are: std::regex recurses per character.
constexpr std::size_t kMaxText = 20000;

}  // namespace

std::string RequestedLanguage(const std::function<const char*(const char*)>& getenv) {
  for (const char* name : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string v = value;
    if (std::string(name) == "LANGUAGE") v = v.substr(0, v.find(':'));
    if (!v.empty()) return v;
  }
  return "";
}

std::vector<Language> ParseLanguages(const std::string& registry_text) {
  std::vector<Language> out;
  try {
    const nlohmann::json registry = nlohmann::json::parse(registry_text);
    for (const nlohmann::json& entry : registry.at("languages")) {
      Language lang{entry.at("po").get<std::string>(), entry.at("pages").get<std::string>(),
                    entry.at("env").get<std::vector<std::string>>()};
      out.push_back(std::move(lang));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("po/languages.json is not the registry of "
                                            "languages ({\"languages\": [{\"po\", \"pages\", "
                                            "\"env\", ...}]}): ") +
                                e.what());
  }
  return out;
}

const Language* LanguageFor(const std::string& requested, const std::vector<Language>& languages) {
  const std::string want = Normalised(requested);
  const Language* best = nullptr;
  std::size_t longest = 0;
  for (const Language& lang : languages) {
    for (const std::string& prefix : lang.env) {
      if (!prefix.empty() && want.rfind(prefix, 0) == 0 && prefix.size() > longest) {
        best = &lang;
        longest = prefix.size();
      }
    }
  }
  return best;
}

Translator::Translator(const Catalogue& catalogue, std::string pages,
                       std::function<bool(const std::string&)> page_exists)
    : pages_(std::move(pages)), page_exists_(std::move(page_exists)) {
  for (const auto& [english, name] : catalogue.Translated("axis")) axes_[english] = name;
  std::vector<std::string> mistakes;
  for (const auto& [english, words] : catalogue.Translated("mistake")) {
    mistakes_[english] = words;
    mistakes.push_back(english);
  }
  // The longest first: a mistake whose words begin another's must not cut it short.
  std::sort(mistakes.begin(), mistakes.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string any_mistake;
  for (const std::string& m : mistakes)
    any_mistake += (any_mistake.empty() ? "" : "|") + Escaped(m);

  for (const auto& [english, translation] : catalogue.Translated("test")) {
    const std::vector<Piece> pieces = Pieces(english);
    Sentence s;
    s.translation = translation;
    std::string pattern;
    bool readable = !pieces.empty();
    for (std::size_t i = 0; i < pieces.size() && readable; ++i) {
      const Piece& p = pieces[i];
      if (!p.value) {
        pattern += Escaped(p.text);
        s.words += p.text.size();
        continue;
      }
      const bool last = i + 1 == pieces.size();
      // A value with nothing before it, or beside another, cannot be told apart.
      if ((i == 0 && !IsBounded(p.text)) || (!last && pieces[i + 1].value)) readable = false;
      if (IsCount(p.text)) {
        pattern += "(\\d+)";
      } else if (EndsWith(p.text, "_shape")) {
        pattern += "(\\([0-9, ]*\\))";
      } else if (EndsWith(p.text, "_index")) {
        pattern += "(\\[[^\\]\\n]*\\])";
      } else if (p.text == "doc") {
        pattern += "(docs/[A-Za-z0-9_./-]+?\\.md)";
      } else if (p.text == "mistake") {
        readable = readable && !any_mistake.empty();
        pattern += "(" + any_mistake + ")";
      } else {
        pattern += last ? "(.+)" : "(.+?)";
      }
      s.names.push_back(p.text);
    }
    if (!readable) continue;
    try {
      s.english = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error&) {
      continue;  // a sentence this reader cannot match stays English
    }
    sentences_.push_back(std::move(s));
  }
  std::stable_sort(sentences_.begin(), sentences_.end(),
                   [](const Sentence& a, const Sentence& b) { return a.words > b.words; });
}

std::string Translator::Translate(const std::string& text) const { return Translate(text, 0); }

std::string Translator::Translate(const std::string& text, int depth) const {
  if (text.size() > kMaxText || sentences_.empty()) return text;
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    // The sentence that starts first; at the same place, the one with more words.
    const Sentence* best = nullptr;
    std::smatch found;
    std::size_t best_start = text.size();
    for (const Sentence& s : sentences_) {
      std::smatch m;
      if (!std::regex_search(
              text.begin() + pos, text.end(), m, s.english,
              pos ? std::regex_constants::match_prev_avail : std::regex_constants::match_default)) {
        continue;
      }
      const std::size_t start = pos + m.position(0);
      if (start < best_start) {
        best_start = start;
        best = &s;
        found = m;
      }
    }
    if (best == nullptr || found.length(0) == 0) break;
    out.append(text, pos, best_start - pos);
    SentenceValues values;
    for (std::size_t i = 0; i < best->names.size(); ++i) {
      values.emplace_back(best->names[i], Value(best->names[i], found[i + 1].str(), depth));
    }
    out += Fill(best->translation, values);
    pos = best_start + found.length(0);
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string Translator::Value(const std::string& name, const std::string& value, int depth) const {
  if (name == "mistake") {
    const auto m = mistakes_.find(value);
    return m == mistakes_.end() ? value : m->second;
  }
  if (name == "doc") {
    const std::string prefix = "docs/";
    if (pages_.empty() || value.rfind(prefix + pages_ + "/", 0) == 0) return value;
    const std::string page = prefix + pages_ + "/" + value.substr(prefix.size());
    return page_exists_(page) ? page : value;
  }
  if (EndsWith(name, "_index")) return Index(value);
  if (IsBounded(name) || depth >= kMaxDepth) return value;
  return Translate(value, depth + 1);
}

std::string Translator::Index(const std::string& index) const {
  // "[head 1, query 2, key 0]": each position's axis name, then its number.
  std::string out = "[";
  std::size_t start = 1;
  while (start < index.size()) {
    std::size_t end = index.find(", ", start);
    if (end == std::string::npos) end = index.size() - 1;  // the closing ']'
    const std::string part = index.substr(start, end - start);
    const std::size_t space = part.rfind(' ');
    const auto axis = space == std::string::npos ? axes_.end() : axes_.find(part.substr(0, space));
    out += axis == axes_.end() ? part : axis->second + part.substr(space);
    out += end + 1 < index.size() ? ", " : "]";
    start = end + 2;
  }
  return out;
}

std::optional<Translator> LearnerTranslator(const std::string& root) {
  namespace fs = std::filesystem;
  const std::string requested = RequestedLanguage([](const char* n) { return std::getenv(n); });
  if (requested.empty()) return std::nullopt;
  const fs::path registry = fs::path(root) / "po" / "languages.json";
  std::ifstream in(registry);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::vector<Language> languages = ParseLanguages(text.str());
  const Language* lang = LanguageFor(requested, languages);
  if (lang == nullptr) return std::nullopt;
  std::optional<Catalogue> catalogue =
      Catalogue::Load((fs::path(root) / "po" / "cli" / (lang->po + ".po")).string());
  if (!catalogue) return std::nullopt;
  // The workspace holds po/languages.json: two levels above the file itself
  // (the runfiles hold a link to it). When that cannot be told, the
  // language's lessons are taken to exist, as they ship with its catalogues.
  std::error_code ec;
  const fs::path real = fs::canonical(registry, ec);
  const fs::path workspace = ec ? fs::path() : real.parent_path().parent_path();
  return Translator(*catalogue, lang->pages, [workspace](const std::string& page) {
    std::error_code missing;
    return workspace.empty() || fs::exists(workspace / page, missing);
  });
}

}  // namespace testing
}  // namespace mha
