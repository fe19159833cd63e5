// What each head of a trained MiniGpt does on one sentence: see head_report.h.
#include "labs/15_mini_gpt/head_report.h"

#include <algorithm>
#include <cstdio>

#include <xtensor/xview.hpp>

#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha::gpt {
namespace {

bool is_spanish_stem(int id) {
  const int work = grammar::id("work");
  return (id >= work && id <= grammar::id("cocin") && (id - work) % 2 == 1) ||
         id == grammar::id("compr") || id == grammar::id("cant");
}

bool is_spanish_form(int id) {
  return (id >= grammar::id("o") && id <= grammar::id("ará")) ||
         (id >= grammar::id("voy") && id <= grammar::id("irá"));
}

Json matrix(const Tensor2& a) {  // (rows, cols) as rows of numbers
  Json rows = Json::Array();
  for (std::size_t i = 0; i < a.shape(0); ++i) {
    rows.Add(std::vector<double>(&a(i, 0), &a(i, 0) + a.shape(1)));
  }
  return rows;
}

}  // namespace

HeadReport report_heads(const MiniGpt& model, const std::vector<int>& ids) {
  HeadReport r;
  r.ids = ids;
  for (int id : ids) r.tokens.push_back(grammar::tokens().at(static_cast<std::size_t>(id)));
  r.weights = model.attention_weights(ids);  // your lab 15: per block (H, T, T)
  for (const Tensor3& w : r.weights) {
    r.profiles.push_back(profile_heads(w));  // your lab 7
    std::vector<std::string> labels;
    for (const HeadProfile& p : r.profiles.back()) labels.push_back(classify_head(p));
    r.labels.push_back(labels);
  }
  // The probes: the first position predicting "s", a Spanish stem, a Spanish form.
  const struct {
    bool (*is)(int);
    const char* what;
  } kinds[] = {{[](int id) { return id == grammar::id("s"); }, "s"},
               {is_spanish_stem, "stem"},
               {is_spanish_form, "form"}};
  for (const auto& kind : kinds) {
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
      if (kind.is(ids[t + 1])) {
        r.probes.push_back(static_cast<int>(t));
        r.probe_names.push_back(r.tokens[t] + " -> " + r.tokens[t + 1]);
        break;
      }
    }
  }
  for (const Tensor3& w : r.weights) {
    std::vector<std::vector<int>> keys;
    std::vector<std::vector<float>> weights;
    for (std::size_t h = 0; h < w.shape(0); ++h) {
      std::vector<int> k;
      std::vector<float> v;
      for (int q : r.probes) {
        const float* row = &w(h, static_cast<std::size_t>(q), 0);
        const auto best = std::max_element(row, row + q + 1) - row;  // keys 0 .. q (causal)
        k.push_back(static_cast<int>(best));
        v.push_back(row[best]);
      }
      keys.push_back(k);
      weights.push_back(v);
    }
    r.top_key.push_back(keys);
    r.top_weight.push_back(weights);
  }
  return r;
}

void print_heads(const HeadReport& r) {
  std::printf("  %-5s %-4s %7s %8s %6s %5s %6s  %-15s", "block", "head", "entropy", "distance",
              "prev", "self", "first", "lab 7's label");
  for (const std::string& p : r.probe_names) std::printf("  %-18s", ("from " + p).c_str());
  std::printf("\n");
  for (std::size_t l = 0; l < r.profiles.size(); ++l) {
    for (std::size_t h = 0; h < r.profiles[l].size(); ++h) {
      const HeadProfile& p = r.profiles[l][h];
      std::printf("  %-5zu %-4zu %7.2f %8.2f %6.2f %5.2f %6.2f  %-15s", l + 1, h, p.entropy,
                  p.mean_distance, p.previous_token, p.self, p.first_token,
                  r.labels[l][h].c_str());
      for (std::size_t q = 0; q < r.probes.size(); ++q) {
        const int key = r.top_key[l][h][q];
        char cell[64];
        std::snprintf(cell, sizeof cell, "%s@%d %.2f", r.tokens[static_cast<std::size_t>(key)].c_str(),
                      key, r.top_weight[l][h][q]);
        std::printf("  %-18s", cell);
      }
      std::printf("\n");
    }
  }
}

Json heads_chart(const HeadReport& r, const std::string& subtitle) {
  const std::size_t T = r.ids.size();
  Json panels = Json::Array();
  int columns = 1;
  for (std::size_t l = 0; l < r.weights.size(); ++l) {
    columns = static_cast<int>(r.weights[l].shape(0));
    for (std::size_t h = 0; h < r.weights[l].shape(0); ++h) {
      const Tensor2 head = xt::view(r.weights[l], h, xt::all(), xt::all());  // (T, T)
      char title[96];
      std::snprintf(title, sizeof title, "block %zu, head %zu: %s", l + 1, h,
                    r.labels[l][h].c_str());
      panels.Add(HeatmapPanel(title, head.data(), T, T)
                     .Set("row_labels", r.tokens)
                     .Set("col_labels", r.tokens)
                     .Set("mask_future", true));
    }
  }
  return HeatmapsChart("Every head's attention on a held-out sentence", subtitle, columns,
                       std::move(panels))
      .Set("row_title", "query")
      .Set("footer", "rows: queries, columns: keys (the same tokens); bright = weight 1, grey: "
                     "the future, which the causal mask hides. The label is lab 7's.");
}

Json heads_view(const HeadReport& r, const std::string& title) {
  Json layers = Json::Array();
  for (std::size_t l = 0; l < r.weights.size(); ++l) {
    Json heads = Json::Array();
    for (std::size_t h = 0; h < r.weights[l].shape(0); ++h) {
      const Tensor2 head = xt::view(r.weights[l], h, xt::all(), xt::all());  // (T, T)
      const HeadProfile& p = r.profiles[l][h];
      heads.Add(Json::Object()
                    .Set("weights", matrix(head))
                    .Set("role", r.labels[l][h])
                    .Set("scores", Json::Object()
                                       .Set("entropy", p.entropy)
                                       .Set("mean distance", p.mean_distance)
                                       .Set("previous token", p.previous_token)
                                       .Set("self", p.self)
                                       .Set("first token", p.first_token)));
    }
    layers.Add(Json::Object().Set("name", "block " + std::to_string(l + 1)).Set("heads", heads));
  }
  return Json::Object()
      .Set("kind", "heads_view")
      .Set("program", "train_mini_gpt")
      .Set("title", title)
      .Set("tokens", r.tokens)
      .Set("layers", std::move(layers));
}

Json heads_json(const HeadReport& r) {
  Json blocks = Json::Array();
  for (std::size_t l = 0; l < r.profiles.size(); ++l) {
    Json heads = Json::Array();
    for (std::size_t h = 0; h < r.profiles[l].size(); ++h) {
      const HeadProfile& p = r.profiles[l][h];
      Json probes = Json::Object();
      for (std::size_t q = 0; q < r.probes.size(); ++q) {
        probes.Set(r.probe_names[q], Json::Object()
                                         .Set("key", r.top_key[l][h][q])
                                         .Set("token", r.tokens[std::size_t(r.top_key[l][h][q])])
                                         .Set("weight", r.top_weight[l][h][q]));
      }
      heads.Add(Json::Object()
                    .Set("label", r.labels[l][h])
                    .Set("entropy", p.entropy)
                    .Set("mean_distance", p.mean_distance)
                    .Set("previous_token", p.previous_token)
                    .Set("self", p.self)
                    .Set("first_token", p.first_token)
                    .Set("top_keys", std::move(probes)));
    }
    blocks.Add(std::move(heads));
  }
  return Json::Object().Set("tokens", r.tokens).Set("blocks", std::move(blocks));
}

}  // namespace mha::gpt
