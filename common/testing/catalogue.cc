#include "common/testing/catalogue.h"

#include <fstream>
#include <sstream>

namespace mha {
namespace testing {
namespace {

// The string between the first and the last double quote of `line`, with
// its escapes undone.
std::string QuotedString(const std::string& line) {
  const std::size_t open = line.find('"');
  const std::size_t close = line.rfind('"');
  if (open == std::string::npos || close <= open) return "";
  std::string out;
  for (std::size_t i = open + 1; i < close; ++i) {
    if (line[i] != '\\' || i + 1 >= close) {
      out += line[i];
      continue;
    }
    const char c = line[++i];
    out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
  }
  return out;
}

// One entry while it is read: which field a continuation line extends.
struct Entry {
  std::string context, id, str;
  bool fuzzy = false;
  bool obsolete = false;
  std::string* field = nullptr;
  bool empty() const { return id.empty() && str.empty() && context.empty(); }
};

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Catalogue Catalogue::Parse(const std::string& po_text) {
  Catalogue catalogue;
  Entry e;
  // The header entry (msgid "") and untranslated, fuzzy or obsolete ones
  // translate nothing.
  auto finish = [&]() {
    if (!e.obsolete && !e.fuzzy && !e.id.empty() && !e.str.empty()) {
      catalogue.entries_[e.context][e.id] = e.str;
    }
    e = Entry();
  };
  std::istringstream in(po_text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) {
      finish();
      continue;
    }
    line = line.substr(start);
    // A comment after an entry's strings begins the next entry.
    if (line[0] == '#' && (!e.id.empty() || !e.str.empty())) finish();
    if (StartsWith(line, "#~")) {
      e.obsolete = true;
    } else if (StartsWith(line, "#,")) {
      if (line.find("fuzzy") != std::string::npos) e.fuzzy = true;
    } else if (line[0] == '#') {
      // A comment: the translator's, the extractor's or a reference.
    } else if (line[0] == '"') {
      if (e.field) *e.field += QuotedString(line);
    } else if (StartsWith(line, "msgctxt")) {
      if (!e.empty()) finish();
      e.context = QuotedString(line);
      e.field = &e.context;
    } else if (StartsWith(line, "msgid_plural")) {
      e.field = nullptr;  // the plural's English is not looked up
    } else if (StartsWith(line, "msgid")) {
      if (!e.id.empty() || !e.str.empty()) finish();
      e.id = QuotedString(line);
      e.field = &e.id;
    } else if (StartsWith(line, "msgstr[0]") || StartsWith(line, "msgstr ")) {
      e.str = QuotedString(line);
      e.field = &e.str;
    } else {
      e.field = nullptr;  // another plural form, or a line this reader ignores
    }
  }
  finish();
  return catalogue;
}

std::optional<Catalogue> Catalogue::Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream text;
  text << f.rdbuf();
  return Parse(text.str());
}

const std::string* Catalogue::Find(const std::string& context, const std::string& msgid) const {
  const auto c = entries_.find(context);
  if (c == entries_.end()) return nullptr;
  const auto e = c->second.find(msgid);
  return e == c->second.end() ? nullptr : &e->second;
}

std::vector<std::pair<std::string, std::string>> Catalogue::Translated(
    const std::string& context) const {
  const auto c = entries_.find(context);
  if (c == entries_.end()) return {};
  return {c->second.begin(), c->second.end()};
}

}  // namespace testing
}  // namespace mha
