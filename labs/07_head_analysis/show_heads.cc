// show_heads: look at what the heads of one attention layer attend to.
//
//   bazel run //labs/07_head_analysis:show_heads
//   bazel run //labs/07_head_analysis:show_heads -- --sentence "the cat sat on the mat" --seed 3
//   bazel run //labs/07_head_analysis:show_heads -- --induction
//   bazel run //labs/07_head_analysis:show_heads -- --trained
//
// It tokenises a sentence on spaces, gives every token a deterministic
// embedding (a seeded random vector per distinct token string plus a
// sinusoidal position signal), runs your lab 3 MultiHeadAttention
// (d_model = 32, 4 heads) with your lab 4 causal mask, profiles each head
// with your lab 7 functions, prints a table and writes one heatmap chart per
// head plus a grid of all of them under out/heads/ (head_0.json ... and
// heads.json, drawn as head_0.png ... heads.png by tools/plot/draw_chart.py),
// and the same weights and scores as view.json for the head viewer of the
// course reader (./lab read).
//
// The layer is untrained: its weights are random, so the patterns are what a
// random bilinear form makes of these embeddings, not learned linguistics.
// The point is to see the statistics of lab 7 on real attention weights.
//
// --trained swaps in a layer that did learn something: the embeddings and
// W_Q..W_O of a tiny attention-only model trained on a toy agreement grammar
// ("I work , you often work , he often works") by
// labs/07_head_analysis/train_toy_model.py, read from labs/07_head_analysis/trained/.
//
// It runs your own labs: while one of them is still a stub it says which one
// and exits with status 1. `bazel run --config=solutions ...` uses the
// reference solutions instead (in the instructors' repository).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <xtensor/xmath.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "common/programs/chart_spec.h"
#include "common/rng.h"
#include "common/tensor.h"
#include "common/programs/lab_program.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/07_head_analysis/head_analysis.h"
#include "labs/07_head_analysis/trained_model.h"

namespace {

constexpr int kDModel = 32;
constexpr int kHeads = 4;
const char* const kDefaultSentence = "I work , you work , he works";
// With --trained: an adverb between pronoun and verb, so that agreement needs
// attention (the verb after "often" depends on the pronoun before it).
const char* const kTrainedSentence = "I work , you often work , he often works";
// Relative to the workspace root; written by labs/07_head_analysis/train_toy_model.py.
const char* const kTrainedDir = "labs/07_head_analysis/trained";

const mha::LabProgram kProgram = {
    "show_heads", "your labs 1-4 and 7",
    "bazel run --config=solutions //labs/07_head_analysis:show_heads"};  // in the instructors' repository

struct Options {
  std::string sentence;  // empty: the default of the mode
  std::string out;  // empty: the default below
  std::uint64_t seed = 0;
  bool induction = false;
  bool trained = false;
  int block_len = 8;
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Text("--sentence", &o.sentence, "\"...\"",
         "the text to analyse, tokenised on spaces\n(default: \"I work , you work , he works\"; "
         "with --trained\n\"I work , you often work , he often works\")")
      .Text("--out", &o.out, "DIR",
            "where the charts go (default: out/heads in the repository\nwhen started with bazel "
            "run, else ./out/heads)")
      .Seed("--seed", &o.seed, "seed of the layer's weights (default 0)")
      .Switch("--induction", [&o] { o.induction = true; },
              "instead of the sentence, feed a random block of L tokens\nfollowed by the same "
              "block again, and print induction scores")
      .Int("--block", &o.block_len, 1, 32, "L for --induction (default 8)")
      .Switch("--trained", [&o] { o.trained = true; },
              "use the toy model trained by labs/07_head_analysis/train_toy_model.py\n"
              "(labs/07_head_analysis/trained/) instead of random weights;\nthe sentence may "
              "only use its vocabulary");
  return f;
}

void check(Options& o) {
  if (o.trained && o.induction) {
    throw std::invalid_argument(
        "--trained and --induction do not go together: the trained model only knows its toy "
        "vocabulary");
  }
  if (o.sentence.empty()) o.sentence = o.trained ? kTrainedSentence : kDefaultSentence;
}

std::vector<std::string> tokenize(const std::string& sentence) {
  std::istringstream in(sentence);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

// FNV-1a: a stable 64-bit hash, so a token string always gets the same seed.
std::uint64_t hash_token(const std::string& token) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : token) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// (T, d_model): token vector + position signal. Equal strings get equal
// token vectors, so only the position tells two "work"s apart.
mha::Tensor2 embed(const std::vector<std::string>& tokens) {
  const std::size_t T = tokens.size();
  mha::Tensor2 x = xt::zeros<float>({T, static_cast<std::size_t>(kDModel)});
  for (std::size_t t = 0; t < T; ++t) {
    mha::NumpyRng rng(hash_token(tokens[t]));
    const mha::Tensor2 v = rng.normal_matrix(1, kDModel, 1);  // (1, d_model), N(0, 1)
    for (int k = 0; k < kDModel; ++k) {
      // The sinusoidal encoding of "Attention Is All You Need": pairs of
      // sin/cos at geometrically spaced frequencies.
      const double freq = std::pow(10000.0, -static_cast<double>(k - k % 2) / kDModel);
      const double angle = static_cast<double>(t) * freq;
      x(t, k) = v(0, k) + static_cast<float>(k % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return x;
}

// ----------------------------------------------------------------- trained model

// (T, d_model): the trained token vector plus the trained position vector,
// exactly as the training script feeds its layer.
mha::Tensor2 embed_trained(const std::vector<std::string>& tokens, const mha::TrainedModel& m) {
  const std::size_t T = tokens.size();
  if (T > m.pos.shape(0)) {
    throw mha::TrainedModelError("the trained model was trained on at most " +
                             std::to_string(m.pos.shape(0)) + " tokens; the sentence has " +
                             std::to_string(T));
  }
  mha::Tensor2 x = xt::zeros<float>({T, static_cast<std::size_t>(kDModel)});
  for (std::size_t t = 0; t < T; ++t) {
    const auto it = std::find(m.vocab.begin(), m.vocab.end(), tokens[t]);
    if (it == m.vocab.end()) {
      std::string known;
      for (const auto& v : m.vocab) known += " " + v;
      throw mha::TrainedModelError("unknown token \"" + tokens[t] + "\" at position " +
                               std::to_string(t) + "; the trained model knows only:" + known);
    }
    const std::size_t id = static_cast<std::size_t>(it - m.vocab.begin());
    xt::view(x, t, xt::all()) = xt::view(m.embed, id, xt::all()) + xt::view(m.pos, t, xt::all());
  }
  return x;
}

// L distinct tokens "w0".."w49", then the same L again.
std::vector<std::string> repeated_block(int L, std::uint64_t seed) {
  std::vector<int> vocab(50);
  for (int i = 0; i < 50; ++i) vocab[i] = i;
  std::mt19937_64 gen(seed + 1);
  std::shuffle(vocab.begin(), vocab.end(), gen);
  std::vector<std::string> tokens;
  for (int copy = 0; copy < 2; ++copy)
    for (int i = 0; i < L; ++i) tokens.push_back("w" + std::to_string(vocab[i]));
  return tokens;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct Head {
  mha::HeadProfile profile;
  float induction;  // -1 when not measured
  std::string label;
};

std::string title_of(int h, const Head& head) {
  return "head " + std::to_string(h) + ": " + head.label;
}

std::string stats_of(const Head& head) {
  const mha::HeadProfile& p = head.profile;
  std::string s = "entropy " + fixed(p.entropy, 2) + "  dist " + fixed(p.mean_distance, 2) +
                  "  prev " + fixed(p.previous_token, 2) + "  self " + fixed(p.self, 2) +
                  "  first " + fixed(p.first_token, 2);
  if (head.induction >= 0.0f) s += "  ind " + fixed(head.induction, 2);
  return s;
}

// One head's panel: its weights, labelled, with its statistics; on a
// repeated block, the cells an induction head would light up outlined.
mha::Json panel(const mha::Tensor2& w, const std::vector<std::string>& labels, const Head& head,
                int h, int block_len) {
  const std::size_t T = labels.size();
  mha::Json outline = mha::Json::Array();
  for (int i = block_len; block_len > 0 && i < 2 * block_len; ++i) {
    outline.Add(std::vector<double>{double(i), double(i - block_len + 1)});
  }
  return mha::HeatmapPanel(title_of(h, head), w.data(), T, T)
      .Set("note", stats_of(head))
      .Set("row_labels", labels)
      .Set("col_labels", labels)
      .Set("mask_zero", true)  // exactly zero only where the causal mask removed the key
      .Set("outline", std::move(outline));
}

// One chart per head and one of all heads, two panels a row.
std::vector<std::pair<std::filesystem::path, mha::Json>> charts_of(
    const std::filesystem::path& dir, const std::string& prefix, const mha::Tensor3& weights,
    const std::vector<std::string>& labels, const std::vector<Head>& heads,
    const std::string& heading, const std::string& subheading, int block_len) {
  std::string footer = "grey: masked (future key)";
  if (block_len > 0) footer += "; red: induction target, key i-L+1";
  auto chart = [&](int columns, mha::Json panels) {
    return mha::HeatmapsChart(heading, subheading, columns, std::move(panels))
        .Set("row_title", "query")
        .Set("footer", footer);
  };
  std::vector<std::pair<std::filesystem::path, mha::Json>> charts;
  mha::Json all = mha::Json::Array();
  for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
    const mha::Tensor2 w = xt::view(weights, h, xt::all(), xt::all());  // (T, T)
    const mha::Json one = panel(w, labels, heads[h], h, block_len);
    all.Add(one);
    charts.push_back({dir / (prefix + "head_" + std::to_string(h) + ".json"),
                      chart(1, mha::Json::Array().Add(one))});
  }
  charts.push_back({dir / (prefix + "heads.json"), chart(2, std::move(all))});
  return charts;
}

// The data of the course reader's head viewer (./lab read):
// the tokens, and per head its (T, T) weights, class and lab 7 scores.
mha::Json heads_view(const mha::Tensor3& weights, const std::vector<std::string>& tokens,
                     const std::vector<Head>& heads, const std::string& title) {
  const std::size_t T = tokens.size();
  mha::Json layer = mha::Json::Array();
  for (std::size_t h = 0; h < heads.size(); ++h) {
    mha::Json rows = mha::Json::Array();
    for (std::size_t i = 0; i < T; ++i) {
      rows.Add(std::vector<double>(&weights(h, i, 0), &weights(h, i, 0) + T));  // row i: (T,)
    }
    const mha::HeadProfile& p = heads[h].profile;
    mha::Json scores = mha::Json::Object()
                           .Set("entropy", p.entropy)
                           .Set("mean distance", p.mean_distance)
                           .Set("previous token", p.previous_token)
                           .Set("self", p.self)
                           .Set("first token", p.first_token);
    if (heads[h].induction >= 0.0f) scores.Set("induction", heads[h].induction);
    layer.Add(mha::Json::Object()
                  .Set("weights", std::move(rows))
                  .Set("role", heads[h].label)
                  .Set("scores", std::move(scores)));
  }
  return mha::Json::Object()
      .Set("kind", "heads_view")
      .Set("program", "show_heads")
      .Set("title", title)
      .Set("tokens", tokens)
      .Set("layers", mha::Json::Array().Add(
                         mha::Json::Object().Set("name", "layer 1").Set("heads", std::move(layer))));
}

// ----------------------------------------------------------------- report

void print_table(const std::vector<Head>& heads, bool with_induction) {
  std::printf("\nhead  entropy  distance  previous   self  first%s  class\n",
              with_induction ? "  induction" : "");
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const mha::HeadProfile& p = heads[h].profile;
    std::printf("%4zu  %7.3f  %8.3f  %8.3f  %5.3f  %5.3f", h, p.entropy, p.mean_distance,
                p.previous_token, p.self, p.first_token);
    if (with_induction) std::printf("  %9.3f", heads[h].induction);
    std::printf("  %s\n", heads[h].label.c_str());
  }
  std::printf("(entropy in nats; a uniform row over n keys has ln n)\n");
}

int run(const Options& o) {
  std::vector<std::string> tokens =
      o.induction ? repeated_block(o.block_len, o.seed) : tokenize(o.sentence);
  if (tokens.empty()) throw std::runtime_error("the sentence has no tokens");
  const int T = static_cast<int>(tokens.size());

  // The layer: your labs 3 (MultiHeadAttention) and 4 (causal_mask).
  mha::Tensor2 x;  // (T, d_model)
  mha::MultiHeadAttention layer(kDModel, kHeads, o.seed);
  if (o.trained) {
    // The weights are public: overwrite the seeded ones with the trained ones.
    const mha::TrainedModel m = mha::load_trained_model(mha::WorkspaceRoot() / kTrainedDir);
    x = embed_trained(tokens, m);
    layer.W_Q = m.W_Q;
    layer.W_K = m.W_K;
    layer.W_V = m.W_V;
    layer.W_O = m.W_O;
  } else {
    x = embed(tokens);
  }
  const mha::AttentionResult r = layer.attend(x, mha::causal_mask(T));  // weights (H, T, T)

  // The analysis: your lab 7.
  const std::vector<mha::HeadProfile> profiles = mha::profile_heads(r.weights);
  std::vector<Head> heads;
  for (int h = 0; h < kHeads; ++h) {
    Head head{profiles[h], -1.0f, ""};
    if (o.induction) {
      const mha::Tensor2 w = xt::view(r.weights, h, xt::all(), xt::all());
      head.induction = mha::induction_score(w, o.block_len);
    }
    head.label = mha::classify_head(head.profile, o.induction ? head.induction : 0.0f);
    heads.push_back(head);
  }

  std::string text;
  for (const auto& t : tokens) text += (text.empty() ? "" : " ") + t;
  std::printf("tokens (T=%d): %s\n", T, text.c_str());
  if (o.trained) {
    std::printf("layer: MultiHeadAttention(d_model=%d, n_heads=%d) with the trained weights of\n"
                "       %s/, causal mask\n",
                kDModel, kHeads, kTrainedDir);
  } else {
    std::printf("layer: MultiHeadAttention(d_model=%d, n_heads=%d, seed=%llu), causal mask\n",
                kDModel, kHeads, static_cast<unsigned long long>(o.seed));
  }
  print_table(heads, o.induction);
  if (o.induction) {
    double uniform = 0.0;  // query i spread evenly over its i + 1 visible keys
    for (int i = o.block_len; i < 2 * o.block_len; ++i) uniform += 1.0 / (i + 1);
    uniform /= o.block_len;
    std::printf(
        "induction score: mean over the second copy of the weight on the token that followed\n"
        "the previous occurrence (key i-L+1, L=%d). Uniform causal attention would give about\n"
        "%.3f. One random layer has no induction heads: they need two trained layers (a\n"
        "previous-token head feeding the keys of the next layer, or a duplicate-token head\n"
        "feeding its queries; lesson 7).\n",
        o.block_len, uniform);
  }

  std::vector<std::string> labels;
  for (int t = 0; t < T; ++t) labels.push_back(std::to_string(t) + " " + tokens[t]);
  const std::string heading =
      o.induction ? "repeated block, L=" + std::to_string(o.block_len) : "\"" + o.sentence + "\"";
  const std::string layer_name =
      o.trained ? "trained toy model (" + std::string(kTrainedDir) + ")"
                : "MultiHeadAttention(d_model=" + std::to_string(kDModel) +
                      ", n_heads=" + std::to_string(kHeads) + ", seed=" + std::to_string(o.seed) +
                      ")";
  const std::string sub = layer_name + ", causal mask; rows: queries, columns: keys";
  const std::string prefix = o.induction ? "induction_" : o.trained ? "trained_" : "";
  std::cout << "\n";
  const std::filesystem::path dir = mha::OutputFolder(o.out, "heads");
  mha::WriteChart(heads_view(r.weights, tokens, heads, heading + ", " + layer_name),
                  dir / (prefix + "view.json"));
  mha::WriteAndDrawCharts({dir / (prefix + "view.json")},
                          charts_of(dir, prefix, r.weights, labels, heads, heading, sub,
                                    o.induction ? o.block_len : 0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
