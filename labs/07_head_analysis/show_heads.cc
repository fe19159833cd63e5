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
// with your lab 7 functions, prints a table and draws one heatmap per head
// plus a grid of all of them (PNG files under out/heads/).
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

#include "common/programs/png_image.h"
#include "common/core/rng.h"
#include "common/core/tensor.h"
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

struct Options {
  std::string sentence;  // empty: the default of the mode
  std::string out;  // empty: the default below
  std::uint64_t seed = 0;
  bool induction = false;
  bool trained = false;
  int block_len = 8;
};

const char* const kUsage =
    "usage: show_heads [--sentence \"...\"] [--out DIR] [--seed N] [--induction [--block L]]\n"
    "                  [--trained]\n"
    "  --sentence  the text to analyse, tokenised on spaces\n"
    "              (default: \"I work , you work , he works\"; with --trained\n"
    "              \"I work , you often work , he often works\")\n"
    "  --out       where the PNG files go (default: out/heads in the repository\n"
    "              when started with bazel run, else ./out/heads)\n"
    "  --seed      seed of the layer's weights (default 0)\n"
    "  --induction instead of the sentence, feed a random block of L tokens\n"
    "              followed by the same block again, and print induction scores\n"
    "  --block     L for --induction (default 8)\n"
    "  --trained   use the toy model trained by labs/07_head_analysis/train_toy_model.py\n"
    "              (labs/07_head_analysis/trained/) instead of random weights;\n"
    "              the sentence may only use its vocabulary\n";

// Accepts "--flag value" and "--flag=value".
Options parse_args(int argc, char** argv) {
  Options o;
  mha::Flags flags(argc, argv, kUsage);
  while (flags.Next()) {
    if (flags.Is("--sentence")) {
      o.sentence = flags.String();
    } else if (flags.Is("--out")) {
      o.out = flags.String();
    } else if (flags.Is("--seed")) {
      o.seed = flags.UInt64();
    } else if (flags.Is("--induction")) {
      o.induction = flags.Switch();
    } else if (flags.Is("--trained")) {
      o.trained = flags.Switch();
    } else if (flags.Is("--block")) {
      o.block_len = static_cast<int>(flags.Int(1, 32));
    } else {
      flags.Unknown();
    }
  }
  if (o.trained && o.induction) {
    throw std::invalid_argument(
        "--trained and --induction do not go together: the trained model only knows its toy "
        "vocabulary");
  }
  if (o.sentence.empty()) o.sentence = o.trained ? kTrainedSentence : kDefaultSentence;
  return o;
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

// ".42" for a weight in a heatmap cell, "1" for one.
std::string cell_text(float p) {
  if (p >= 0.995f) return "1";
  std::string s = fixed(p, 2);
  return s.substr(1);  // drop the leading 0
}

// ----------------------------------------------------------------- drawing

struct Layout {
  int cell;   // side of one heatmap cell
  int label;  // width of the row labels = height of the column labels
  int width;  // of one panel
  int height;
};

constexpr int kPad = 10;
constexpr mha::Rgb kTarget{230, 40, 40};
constexpr int kTitleH = 40;  // title (scale 2) and one line of statistics

Layout layout_for(const std::vector<std::string>& labels) {
  Layout l;
  const int T = static_cast<int>(labels.size());
  l.cell = T <= 12 ? 32 : std::max(10, 384 / T);
  l.label = 0;
  for (const auto& s : labels) l.label = std::max(l.label, mha::Canvas::text_width(s));
  l.label = std::max(l.label + 8, 40);  // room for the axis names in the corner
  const int grid = T * l.cell;
  const int colour_bar = 14 + 12 + 4 + mha::Canvas::text_width("0.5");
  l.width = kPad + l.label + grid + colour_bar + kPad;
  // Wide enough for the line of statistics under the title.
  l.width = std::max(l.width, kPad + mha::Canvas::text_width(std::string(68, 'x')) + kPad);
  l.height = kPad + kTitleH + l.label + grid + 14 + mha::Canvas::text_height() + kPad;
  return l;
}

// One head: title, statistics, labelled heatmap, colour bar.
void draw_panel(mha::Canvas& c, int x0, int y0, const Layout& l, const mha::Tensor2& w,
                const std::vector<std::string>& labels, const std::string& title,
                const std::string& stats, int block_len) {
  const int T = static_cast<int>(labels.size());
  c.draw_text(x0 + kPad, y0 + kPad, title, mha::kBlack, 2);
  c.draw_text(x0 + kPad, y0 + kPad + 22, stats, mha::kGrey);

  const int left = x0 + kPad + l.label;
  const int top = y0 + kPad + kTitleH + l.label;
  // Column labels (keys), rotated, ending just above the grid.
  for (int j = 0; j < T; ++j) {
    const int x = left + j * l.cell + (l.cell - 7) / 2;
    c.draw_text_up(x, top - 5, labels[j], mha::kBlack);
  }
  // Row labels (queries), right-aligned against the grid.
  for (int i = 0; i < T; ++i) {
    const int y = top + i * l.cell + (l.cell - 7) / 2;
    c.draw_text(left - 5 - mha::Canvas::text_width(labels[i]), y, labels[i], mha::kBlack);
  }
  // Axis names in the empty corner, right-aligned against the grid.
  c.draw_text(left - 5 - mha::Canvas::text_width("key"), top - 22, "key", mha::kGrey);
  c.draw_text(left - 5 - mha::Canvas::text_width("query"), top - 12, "query", mha::kGrey);

  for (int i = 0; i < T; ++i) {
    for (int j = 0; j < T; ++j) {
      const float p = w(i, j);
      const int x = left + j * l.cell, y = top + i * l.cell;
      // Exactly zero only where the causal mask removed the key.
      const mha::Rgb fill = p == 0.0f ? mha::kLightGrey : mha::colormap(p);
      c.fill_rect(x, y, l.cell, l.cell, fill);
      if (l.cell >= 28 && p != 0.0f) {
        const std::string s = cell_text(p);
        c.draw_text(x + (l.cell - mha::Canvas::text_width(s)) / 2 + 1, y + (l.cell - 7) / 2, s,
                    mha::text_colour_on(fill));
      }
    }
  }
  c.draw_rect(left - 1, top - 1, T * l.cell + 2, T * l.cell + 2, mha::kGrey);
  // On a repeated block, outline the cells an induction head would light up.
  for (int i = block_len; block_len > 0 && i < 2 * block_len; ++i) {
    const int j = i - block_len + 1;
    c.draw_rect(left + j * l.cell, top + i * l.cell, l.cell, l.cell, kTarget);
    c.draw_rect(left + j * l.cell + 1, top + i * l.cell + 1, l.cell - 2, l.cell - 2, kTarget);
  }

  // Colour bar: 1 at the top, 0 at the bottom.
  const int bar_x = left + T * l.cell + 14;
  const int bar_h = T * l.cell;
  for (int y = 0; y < bar_h; ++y) {
    c.fill_rect(bar_x, top + y, 12, 1, mha::colormap(1.0f - static_cast<float>(y) / (bar_h - 1)));
  }
  c.draw_rect(bar_x - 1, top - 1, 14, bar_h + 2, mha::kGrey);
  c.draw_text(bar_x + 16, top, "1", mha::kBlack);
  c.draw_text(bar_x + 16, top + bar_h / 2 - 4, "0.5", mha::kBlack);
  c.draw_text(bar_x + 16, top + bar_h - 7, "0", mha::kBlack);

  // Legend under the grid.
  const int legend_y = top + T * l.cell + 8;
  c.fill_rect(left, legend_y, 10, 8, mha::kLightGrey);
  c.draw_text(left + 14, legend_y, "masked (future key)", mha::kGrey);
  if (block_len > 0) {
    const int x = left + 14 + mha::Canvas::text_width("masked (future key)") + 16;
    c.draw_rect(x, legend_y - 1, 10, 10, kTarget);
    c.draw_text(x + 14, legend_y, "induction target, key i-L+1", mha::kGrey);
  }
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

void write_images(const std::filesystem::path& dir, const std::string& prefix,
                  const mha::Tensor3& weights, const std::vector<std::string>& labels,
                  const std::vector<Head>& heads, const std::string& heading,
                  const std::string& subheading, int block_len) {
  std::filesystem::create_directories(dir);
  const Layout l = layout_for(labels);
  const int H = static_cast<int>(heads.size());
  std::vector<std::string> written;

  // One image per head.
  for (int h = 0; h < H; ++h) {
    mha::Canvas c(l.width, l.height);
    const mha::Tensor2 w = xt::view(weights, h, xt::all(), xt::all());
    draw_panel(c, 0, 0, l, w, labels, title_of(h, heads[h]), stats_of(heads[h]), block_len);
    const auto path = dir / (prefix + "head_" + std::to_string(h) + ".png");
    c.save_png(path.string());
    written.push_back(path.string());
  }

  // All heads on one grid, two panels a row, under a heading.
  const int cols = std::min(H, 2);
  const int rows = (H + cols - 1) / cols;
  const int header = 2 * kPad + 16 + 12;
  const int width = std::max(cols * l.width, 2 * kPad + mha::Canvas::text_width(heading, 2));
  mha::Canvas grid(width, header + rows * l.height);
  grid.draw_text(kPad, kPad, heading, mha::kBlack, 2);
  grid.draw_text(kPad, kPad + 20, subheading, mha::kGrey);
  for (int h = 0; h < H; ++h) {
    const int x0 = (h % cols) * l.width, y0 = header + (h / cols) * l.height;
    const mha::Tensor2 w = xt::view(weights, h, xt::all(), xt::all());
    draw_panel(grid, x0, y0, l, w, labels, title_of(h, heads[h]), stats_of(heads[h]), block_len);
    if (h % cols != 0) grid.fill_rect(x0, y0 + kPad, 1, l.height - 2 * kPad, mha::kLightGrey);
  }
  const auto path = dir / (prefix + "heads.png");
  grid.save_png(path.string());
  written.push_back(path.string());

  std::cout << "\nwrote";
  for (const auto& p : written) std::cout << "\n  " << p;
  std::cout << "\n";
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
        "previous-token head feeding the keys of the next layer).\n",
        o.block_len, uniform);
  }

  std::filesystem::path dir = o.out;
  if (dir.empty()) dir = mha::WorkspaceRoot() / "out" / "heads";
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
  write_images(dir, prefix, r.weights, labels, heads, heading, sub,
               o.induction ? o.block_len : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram(
      {"show_heads", "your labs 1-4 and 7",
       "bazel run --config=solutions //labs/07_head_analysis:show_heads", kUsage},  // in the instructors' repository
      [&] { return run(parse_args(argc, argv)); });
}
