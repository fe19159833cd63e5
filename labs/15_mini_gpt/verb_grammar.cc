// Lab 15's corpus (given, not graded): see verb_grammar.h.
#include "labs/15_mini_gpt/verb_grammar.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha::grammar {
namespace {

// English stem, English past ("" for stem + "ed"), Spanish stem ("" for ir).
struct Verb {
  const char* stem;
  const char* past;
  const char* spanish;
};
const Verb kVerbs[14] = {
    {"work", "", "trabaj"}, {"walk", "", "camin"},   {"talk", "", "habl"},
    {"listen", "", "escuch"}, {"look", "", "mir"},   {"help", "", "ayud"},
    {"call", "", "llam"},   {"jump", "", "salt"},    {"paint", "", "pint"},
    {"clean", "", "limpi"}, {"cook", "", "cocin"},   {"buy", "bought", "compr"},
    {"sing", "sang", "cant"}, {"go", "went", ""},
};
const char* const kEnglishPronouns[4] = {"I", "you", "he", "she"};
const char* const kSpanishPronouns[4] = {"yo", "tú", "él", "ella"};
// The Spanish person of each English pronoun: yo, tú, él / ella.
const int kPerson[4] = {0, 1, 2, 2};
// [tense][person]: the -ar endings, and ir's whole forms.
const char* const kEndings[3][3] = {{"o", "as", "a"}, {"é", "aste", "ó"}, {"aré", "arás", "ará"}};
const char* const kIrForms[3][3] = {{"voy", "vas", "va"}, {"fui", "fuiste", "fue"},
                                    {"iré", "irás", "irá"}};

bool held_out(int verb, Tense tense) {
  return (verb == 1 && tense == Tense::kPresent) ||  // walk
         (verb == 3 && tense == Tense::kPresent) ||  // listen
         (verb == 5 && tense == Tense::kPast) ||     // help
         (verb == 10 && tense == Tense::kFuture);    // cook
}

void english_clause(int verb, Tense tense, int pronoun, std::vector<int>& ids) {
  const Verb& v = kVerbs[verb];
  const bool third_person = pronoun >= 2;  // he, she
  ids.push_back(id(kEnglishPronouns[pronoun]));
  switch (tense) {
    case Tense::kPresent:
      if (std::string(v.stem) == "go") {
        ids.push_back(id(third_person ? "goes" : "go"));
      } else {
        ids.push_back(id(v.stem));
        if (third_person) ids.push_back(id("s"));
      }
      break;
    case Tense::kPast:
      if (*v.past) {
        ids.push_back(id(v.past));
      } else {
        ids.push_back(id(v.stem));
        ids.push_back(id("ed"));
      }
      break;
    case Tense::kFuture:
      ids.push_back(id("will"));
      ids.push_back(id(v.stem));
      break;
  }
}

void spanish_clause(int verb, Tense tense, int pronoun, std::vector<int>& ids) {
  const Verb& v = kVerbs[verb];
  const int t = static_cast<int>(tense), person = kPerson[pronoun];
  ids.push_back(id(kSpanishPronouns[pronoun]));
  if (*v.spanish) {
    ids.push_back(id(v.spanish));
    ids.push_back(id(kEndings[t][person]));
  } else {
    ids.push_back(id(kIrForms[t][person]));
  }
}

Sentence make_sentence(int verb, Tense tense, const std::array<int, 3>& pronouns) {
  Sentence s{verb, tense, pronouns, {id("<bos>")}};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) s.ids.push_back(id(","));
    english_clause(verb, tense, pronouns[i], s.ids);
  }
  s.ids.push_back(id("/"));
  for (int i = 0; i < 3; ++i) {
    if (i > 0) s.ids.push_back(id(","));
    spanish_clause(verb, tense, pronouns[i], s.ids);
  }
  s.ids.push_back(id("<eos>"));
  return s;
}

// Every prefix of every sentence -> the one token that follows it, or -1
// when several do. Built once.
const std::map<std::vector<int>, int>& continuations() {
  static const std::map<std::vector<int>, int> next = [] {
    std::map<std::vector<int>, int> m;
    for (const Sentence& s : all_sentences()) {
      std::vector<int> prefix;
      for (std::size_t t = 0; t + 1 < s.ids.size(); ++t) {
        prefix.push_back(s.ids[t]);
        auto [it, inserted] = m.emplace(prefix, s.ids[t + 1]);
        if (!inserted && it->second != s.ids[t + 1]) it->second = -1;
      }
    }
    return m;
  }();
  return next;
}

bool in_range(int token, const char* first, const char* last) {
  return token >= id(first) && token <= id(last);
}

Category category_of(const std::vector<int>& ids, std::size_t t, std::size_t slash) {
  const int here = ids[t], target = ids[t + 1];
  if (t + 1 <= slash) {  // the English half, "/" included
    // The 13 English stems that take "-s": every stem of 24-45 at an even id
    // (the English one of each pair), buy and sing.
    const bool stem_taking_s = (in_range(here, "work", "cocin") && (here - id("work")) % 2 == 0) ||
                               here == id("buy") || here == id("sing");
    const bool s_slot = target == id("s") || target == id(",") || target == id("/");
    if ((stem_taking_s && s_slot) || target == id("go") || target == id("goes")) {
      return Category::kEnglishAgreement;
    }
    return Category::kOther;
  }
  if (in_range(target, "yo", "ella")) return Category::kSpanishPronoun;
  if ((in_range(target, "work", "cocin") && (target - id("work")) % 2 == 1) ||
      target == id("compr") || target == id("cant")) {
    return Category::kSpanishStem;
  }
  if (in_range(target, "o", "ará") || in_range(target, "voy", "irá")) {
    return Category::kSpanishForm;
  }
  return Category::kOther;
}

}  // namespace

const std::vector<std::string>& tokens() {
  static const std::vector<std::string> all = {
      "<bos>", "<eos>", ",", "/",
      "I", "you", "he", "she", "yo", "tú", "él", "ella",
      "will", "s", "ed",
      "o", "as", "a", "é", "aste", "ó", "aré", "arás", "ará",
      "work", "trabaj", "walk", "camin", "talk", "habl", "listen", "escuch",
      "look", "mir", "help", "ayud", "call", "llam", "jump", "salt",
      "paint", "pint", "clean", "limpi", "cook", "cocin",
      "buy", "bought", "compr", "sing", "sang", "cant",
      "go", "goes", "went", "voy", "vas", "va", "fui", "fuiste", "fue", "iré", "irás", "irá"};
  return all;
}

int id(const std::string& token) {
  static const std::map<std::string, int> ids = [] {
    std::map<std::string, int> m;
    for (std::size_t i = 0; i < tokens().size(); ++i) m[tokens()[i]] = static_cast<int>(i);
    return m;
  }();
  const auto it = ids.find(token);
  if (it == ids.end()) {
    throw std::invalid_argument("grammar::id: \"" + token +
                                "\" is not one of the corpus's 64 tokens");
  }
  return it->second;
}

std::string text(const std::vector<int>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= static_cast<int>(tokens().size())) {
      throw std::invalid_argument("grammar::text: id " + std::to_string(ids[i]) +
                                  " at position " + std::to_string(i) +
                                  " is outside [0, 64)");
    }
    if (i > 0) out += ' ';
    out += tokens()[static_cast<std::size_t>(ids[i])];
  }
  return out;
}

std::vector<Sentence> all_sentences() {
  std::vector<Sentence> out;
  for (int verb = 0; verb < 14; ++verb) {
    for (Tense tense : {Tense::kPresent, Tense::kPast, Tense::kFuture}) {
      // Three distinct pronouns of four, in lexicographic order.
      for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 4; ++b) {
          for (int c = 0; c < 4; ++c) {
            if (a == b || a == c || b == c) continue;
            out.push_back(make_sentence(verb, tense, {a, b, c}));
          }
        }
      }
    }
  }
  return out;
}

Split split() {
  Split s;
  for (Sentence& sentence : all_sentences()) {
    (held_out(sentence.verb, sentence.tense) ? s.held_out : s.train).push_back(sentence);
  }
  return s;
}

std::vector<Decision> decisions(const Sentence& s) {
  const std::map<std::vector<int>, int>& next = continuations();
  const auto slash_at = std::find(s.ids.begin(), s.ids.end(), id("/"));
  const std::size_t slash = static_cast<std::size_t>(slash_at - s.ids.begin());
  std::vector<Decision> out;
  std::vector<int> prefix;
  for (std::size_t t = 0; t + 1 < s.ids.size(); ++t) {
    prefix.push_back(s.ids[t]);
    const auto it = next.find(prefix);
    if (it == next.end() || it->second != s.ids[t + 1]) continue;  // free, or not the corpus's
    out.push_back({static_cast<int>(t), s.ids[t + 1], category_of(s.ids, t, slash)});
  }
  return out;
}

const char* category_name(Category c) {
  switch (c) {
    case Category::kEnglishAgreement: return "english_agreement";
    case Category::kSpanishForm: return "spanish_form";
    case Category::kSpanishStem: return "spanish_stem";
    case Category::kSpanishPronoun: return "spanish_pronoun";
    case Category::kOther: return "other";
  }
  return "?";
}

double entropy_floor(const std::vector<Sentence>& train) {
  if (train.empty()) {
    throw std::invalid_argument("grammar::entropy_floor: no sentences, expected at least one");
  }
  // The best model gives each sentence its frequency p(s) and pays -ln p(s)
  // for it, spread over the sentence's predicted positions.
  std::map<std::vector<int>, int> count;
  double positions = 0.0;
  for (const Sentence& s : train) {
    ++count[s.ids];
    positions += static_cast<double>(s.ids.size()) - 1.0;
  }
  const double n = static_cast<double>(train.size());
  double nats = 0.0;
  for (const auto& [ids, c] : count) nats += c * -std::log(c / n);
  return nats / positions;
}

}  // namespace mha::grammar
