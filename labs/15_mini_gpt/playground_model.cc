// The playground's answers (playground_model.h): parse one request line,
// run the learner's model on it, write what the page draws.
#include "labs/15_mini_gpt/playground_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "labs/07_head_analysis/head_analysis.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha::playground {
namespace {

constexpr int kTop = 5;  // the most likely next tokens shown at each position

// A request the program refuses: its answer names what is wrong.
struct Refusal {
  Json answer;
};

Json Error(const std::string& code) { return Json::Object().Set("error", code); }

Refusal BadRequest(const std::string& detail) {
  return {Error("bad_request").Set("detail", detail)};
}

struct Request {
  std::vector<int> ids;                     // the prompt, <bos> first
  std::vector<std::pair<int, int>> off;     // {block, head}
  bool sample = false;
  float temperature = 1.0f;
  int top_k = 0;
  std::uint64_t seed = 0;
  int max_new = 0;
};

// "run\tkey=value\t..." -> {key: value}.
std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::stringstream in(line);
  std::string field;
  std::getline(in, field, '\t');
  if (field != "run") throw BadRequest("the request is not \"run\"");
  while (std::getline(in, field, '\t')) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) throw BadRequest("a field without '='");
    out[field.substr(0, eq)] = field.substr(eq + 1);
  }
  for (const char* key : {"tokens", "off", "mode", "temperature", "top_k", "seed", "max_new"}) {
    if (!out.count(key)) throw BadRequest(std::string("no field ") + key);
  }
  return out;
}

// A number in [low, high]; anything else is refused naming the field.
double Number(const std::map<std::string, std::string>& f, const std::string& key, double low,
              double high) {
  const std::string& text = f.at(key);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= low && value <= high)) {
    throw Refusal{Error("bad_value").Set("field", key).Set("value", text.substr(0, 20))
                      .Set("low", low).Set("high", high)};
  }
  return value;
}

Request Parse(const MiniGpt& model, const std::string& line) {
  const auto f = Fields(line);
  Request r;
  std::stringstream in(f.at("tokens"));
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  if (words.empty() || words[0] != "<bos>") words.insert(words.begin(), "<bos>");
  if (words.size() < 2) throw Refusal{Error("empty")};
  for (const std::string& word : words) {
    try {
      r.ids.push_back(grammar::id(word));
    } catch (const std::invalid_argument&) {
      // Its position counts <bos> as 0, as the page shows the prompt.
      throw Refusal{Error("unknown_token").Set("token", word.substr(0, 40))
                        .Set("position", static_cast<int>(r.ids.size()))};
    }
  }
  if (static_cast<int>(r.ids.size()) > model.max_len) {
    throw Refusal{Error("too_long").Set("length", static_cast<int>(r.ids.size()))
                      .Set("max", model.max_len)};
  }
  std::stringstream heads(f.at("off"));
  std::string pair;
  while (std::getline(heads, pair, ',')) {
    int b = -1, h = -1;
    char dot = 0;
    std::stringstream p(pair);
    if (!(p >> b >> dot >> h) || dot != '.' || !p.eof() || b < 0 || b >= model.n_layers ||
        h < 0 || h >= model.n_heads) {
      throw Refusal{Error("bad_head").Set("blocks", model.n_layers).Set("heads", model.n_heads)};
    }
    r.off.emplace_back(b, h);
  }
  const std::string& mode = f.at("mode");
  if (mode != "greedy" && mode != "sample") throw BadRequest("mode must be greedy or sample");
  r.sample = mode == "sample";
  r.temperature = static_cast<float>(Number(f, "temperature", 0.05, 5.0));
  r.top_k = static_cast<int>(Number(f, "top_k", 0, model.vocab));
  r.seed = static_cast<std::uint64_t>(Number(f, "seed", 0, 2147483647.0));
  r.max_new = static_cast<int>(Number(f, "max_new", 0, model.max_len));
  return r;
}

// softmax of one row of logits, in double: what the model gives each token.
std::vector<double> Probabilities(const Tensor2& logits, std::size_t row) {
  std::vector<double> p(logits.shape(1));
  double top = -INFINITY, sum = 0.0;
  for (std::size_t v = 0; v < p.size(); ++v) top = std::max(top, double(logits(row, v)));
  for (std::size_t v = 0; v < p.size(); ++v) sum += p[v] = std::exp(logits(row, v) - top);
  for (double& x : p) x /= sum;
  return p;
}

// The kTop most likely tokens, as [[token, p], ...]; ties to the lower id.
Json Top(const std::vector<double>& p) {
  std::vector<int> order(p.size());
  for (std::size_t v = 0; v < p.size(); ++v) order[v] = static_cast<int>(v);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  Json top = Json::Array();
  for (int k = 0; k < kTop && k < static_cast<int>(order.size()); ++k) {
    top.Add(Json::Array().Add(grammar::tokens()[order[k]]).Add(p[order[k]]));
  }
  return top;
}

std::vector<std::string> Texts(const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(grammar::tokens()[id]);
  return out;
}

const char* CategoryName(grammar::Category c) {
  switch (c) {
    case grammar::Category::kEnglishAgreement: return "english_agreement";
    case grammar::Category::kSpanishForm: return "spanish_form";
    case grammar::Category::kSpanishStem: return "spanish_stem";
    case grammar::Category::kSpanishPronoun: return "spanish_pronoun";
    case grammar::Category::kOther: return "other";
  }
  return "other";
}

Json Run(const MiniGpt& trained, const Request& r) {
  const MiniGpt model = WithHeadsOff(trained, r.off);
  const Tensor2 logits = model.logits(r.ids);                                  // (T, vocab)
  const std::vector<Tensor3> weights = model.attention_weights(r.ids);         // (H, T, T) each
  Json positions = Json::Array();
  std::vector<double> last;
  for (std::size_t t = 0; t < r.ids.size(); ++t) {
    last = Probabilities(logits, t);
    positions.Add(Json::Object().Set("top", Top(last)));
  }
  Json attention = Json::Array(), labels = Json::Array();
  for (const Tensor3& w : weights) {
    Json block = Json::Array(), names = Json::Array();
    // Lab 7's profile of each head on this prompt, and its label.
    const std::vector<HeadProfile> profiles = profile_heads(w);
    for (std::size_t h = 0; h < w.shape(0); ++h) {
      Json rows = Json::Array();
      for (std::size_t i = 0; i < w.shape(1); ++i) {
        // Row i: (T,). Four decimals are all a heat map and its hover show,
        // and a third of the bytes of float's nine digits.
        std::vector<double> row(w.shape(2));
        for (std::size_t j = 0; j < row.size(); ++j) row[j] = std::round(w(h, i, j) * 1e4) / 1e4;
        rows.Add(row);
      }
      block.Add(std::move(rows));
      names.Add(classify_head(profiles[h]));
    }
    attention.Add(std::move(block));
    labels.Add(std::move(names));
  }
  const int room = model.max_len - static_cast<int>(r.ids.size());
  const Sampling sampling{r.sample ? r.temperature : 0.0f, r.top_k};
  const std::vector<int> more = generate(model, r.ids, std::min(r.max_new, room), sampling,
                                         grammar::id("<eos>"), r.seed);
  Json off = Json::Array();
  for (const auto& [b, h] : r.off) off.Add(Json::Array().Add(b).Add(h));
  return Json::Object()
      .Set("tokens", Texts(r.ids))
      .Set("positions", std::move(positions))
      .Set("last", last)
      .Set("attention", std::move(attention))
      .Set("labels", std::move(labels))
      .Set("continuation", Texts(more))
      .Set("seed", static_cast<double>(r.seed))
      .Set("off", std::move(off));
}

}  // namespace

MiniGpt WithHeadsOff(const MiniGpt& model, const std::vector<std::pair<int, int>>& off) {
  MiniGpt copy = model;
  for (const auto& [b, h] : off) {
    RotaryAttention& attn = copy.blocks.at(b).attn;
    if (h < 0 || h >= attn.n_heads) throw std::invalid_argument("no head " + std::to_string(h));
    // Head h's output is columns [h d_head, (h+1) d_head) of the concatenation,
    // which multiply these rows of W_O: zero rows = zero output before W_O.
    xt::view(attn.W_O, xt::range(h * attn.d_head, (h + 1) * attn.d_head), xt::all()) = 0.0f;
  }
  return copy;
}

Json Examples() {
  Json out = Json::Array();
  std::set<std::pair<int, int>> seen;  // {verb, tense}: the first held-out sentence of each
  for (const grammar::Sentence& s : grammar::split().held_out) {
    if (!seen.insert({s.verb, static_cast<int>(s.tense)}).second) continue;
    std::map<grammar::Category, grammar::Decision> chosen;
    for (const grammar::Decision& d : grammar::decisions(s)) {
      if (d.category == grammar::Category::kOther) continue;
      const bool is_s = grammar::tokens()[d.target] == "s";
      auto it = chosen.find(d.category);
      // English agreement: the "-s" if the sentence has one; Spanish form:
      // the last (the third clause, "él camin" -> "a"); else the first.
      if (it == chosen.end() || (is_s && grammar::tokens()[it->second.target] != "s") ||
          d.category == grammar::Category::kSpanishForm) {
        chosen[d.category] = d;
      }
    }
    for (const auto& [category, d] : chosen) {
      const std::vector<int> prompt(s.ids.begin(), s.ids.begin() + d.position + 1);
      out.Add(Json::Object()
                  .Set("prompt", Texts(prompt))
                  .Set("answer", grammar::tokens()[d.target])
                  .Set("category", CategoryName(category)));
    }
  }
  return out;
}

Json Hello(const MiniGpt& model, std::uint64_t seed) {
  return Json::Object()
      .Set("vocab", grammar::tokens())
      .Set("config", Json::Object()
                         .Set("vocab", model.vocab)
                         .Set("max_len", model.max_len)
                         .Set("d_model", model.d_model)
                         .Set("n_heads", model.n_heads)
                         .Set("d_ff", model.d_ff)
                         .Set("n_layers", model.n_layers))
      .Set("params", model.parameter_count())
      .Set("seed", static_cast<double>(seed))
      .Set("examples", Examples());
}

std::string OneLine(const Json& answer) {
  std::string text = answer.Dump();
  // Dump breaks lines between members; a JSON string holds no raw newline.
  text.erase(std::remove(text.begin(), text.end(), '\n'), text.end());
  return text;
}

Json Answer(const MiniGpt& model, const std::string& line) {
  try {
    return Run(model, Parse(model, line));
  } catch (const Refusal& r) {
    return r.answer;
  } catch (const std::exception& e) {
    // The learner's code refused something (a "not implemented yet", or a
    // check of theirs): said, not a crash.
    return Error("model").Set("detail", e.what());
  }
}

}  // namespace mha::playground
