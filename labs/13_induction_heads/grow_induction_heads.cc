// grow_induction_heads: two layers grow an induction head. An experiment,
// run with your own model and gradients (lab 13, on labs 1-4 and 10) and
// your own head scores (lab 7).
//
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --steps 4000 --seed 1
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --quick
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --positions rope
//
// The data: a block of L distinct random tokens (L drawn from
// [--min-len, --max-len] per sequence) followed by the same block again,
// T = 2L. In the first half the next token is a fresh random draw: nothing
// predicts it. In the repeated half it is the token that followed the
// current token's first occurrence, which a model can only find by looking
// at what came before the key it attends to. The block length varies, so no
// fixed positional offset finds it either.
//
// It trains a one-layer and a two-layer AttentionOnlyTransformer from the
// same seed (same embeddings and same first layer), on the same batches,
// with Adam (common/programs/optimizer.h) on loss_and_grads. Every --eval-every steps
// it measures, on held-out sequences, the loss on the first half (targets
// 1 .. L-1) and on the repeated half (targets L+1 .. 2L-1). At the end it
// prints each layer-2 head's induction score and each layer-1 head's
// previous-token score (lab 7, averaged over held-out sequences of length
// 2 * --max-len). Then it asks which circuit does the induction
// (circuits.h): the Q-, K- and V-composition scores of every layer-1 head
// into every layer-2 head, beside the level of random heads, and path
// ablations: the repeated-half loss when one layer-1 head's output (all of
// it, or only its position part, or only its token part) is removed from
// what the layer-2 queries, keys or values read, the residual untouched.
// It writes under out/grow_induction_heads/ in the repository (each chart a
// .json that tools/plot/draw_chart.py draws as the .png of the same name):
//   loss_curves.csv, loss_curves.json   the four curves by step
//   view.json                           the heads, their scores, the composition scores and
//                                       the induction score over training, for the course
//                                       reader's head viewer (./lab read)
//   heads.json                          every head's attention on one sequence
//   composition.json                    the three composition matrices
//   ablations.json                      the path ablations
//
// --positions rope trains the same models with no `pos`: every layer rotates
// its queries and keys with your lab 11's apply_rope instead, so a position
// can never be copied into the residual stream.
//
// Deterministic: the same flags give the same numbers, bit for bit, on the
// same machine. On another CPU (another BLAS kernel, another summation
// order) the first steps agree to the printed digits and, after the phase
// change amplifies the rounding, the table drifts in the 2nd or 3rd digit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "common/programs/optimizer.h"
#include "labs/07_head_analysis/head_analysis.h"
#include "labs/13_induction_heads/circuits.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace {

using mha::AttentionOnlyTransformer;

const mha::LabProgram kProgram = {
    "grow_induction_heads", "your labs 1-4, 7, 10 and 13",
    "bazel run -c opt --config=solutions //labs/13_induction_heads:grow_induction_heads"};  // in the instructors' repository

struct Options {
  int vocab = 64;
  int d_model = 32;
  int heads = 4;
  int min_len = 6;
  int max_len = 12;
  int steps = 3000;
  int batch = 16;
  float lr = 3e-3f;
  int eval_every = 50;
  int eval_sequences = 64;
  std::uint64_t seed = 0;
  std::string positions = "learned";  // or "rope" (circuits.h)
  std::string out;  // empty: out/grow_induction_heads in the repository
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Int("--steps", &o.steps, 1, 1000000, "Adam steps per model (default 3000)")
      .Int("--batch", &o.batch, 1, 4096, "sequences per step (default 16)")
      .Number("--lr", &o.lr, 1e-6, 1.0,
              "learning rate, after a warm-up of 5% of the steps (default 0.003)")
      .Int("--vocab", &o.vocab, 2, 100000, "distinct tokens (default 64; at least --max-len)")
      .Int("--d-model", &o.d_model, 1, 1024, "width of the residual stream (default 32)")
      .Int("--heads", &o.heads, 1, 1024, "heads per layer, must divide --d-model (default 4)")
      .Int("--min-len", &o.min_len, 2, 512, "shortest block, L (default 6; sequences are 2L long)")
      .Int("--max-len", &o.max_len, 2, 512, "longest block (default 12)")
      .Int("--eval-every", &o.eval_every, 1, 1000000,
           "steps between two measurements of the held-out losses (default 50)")
      .Seed("--seed", &o.seed, "weights and data (default 0)")
      .Choice("--positions", &o.positions, {"learned", "rope"},
              "learned: x_0 = embed + pos (lab 13, the default); rope: no pos, every\n"
              "layer rotates its queries and keys (your lab 11)")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.steps = 60;
        o.batch = 4;
        o.d_model = 16;
        o.heads = 2;
        o.vocab = 16;
        o.min_len = 4;
        o.max_len = 6;
        o.eval_every = 10;
        o.eval_sequences = 8;
      }, "a small run for tests: 60 steps of 4, d_model 16, 2 heads");
  return f;
}

void check(Options& o) {
  if (o.d_model % o.heads != 0) {
    throw std::invalid_argument("--heads " + std::to_string(o.heads) +
                                " does not divide --d-model " + std::to_string(o.d_model));
  }
  if (o.min_len > o.max_len) {
    throw std::invalid_argument("--min-len " + std::to_string(o.min_len) +
                                " is larger than --max-len " + std::to_string(o.max_len));
  }
  if (o.positions == "rope" && (o.d_model / o.heads) % 2 != 0) {
    throw std::invalid_argument("--positions rope needs an even d_head, not d_model " +
                                std::to_string(o.d_model) + " / " + std::to_string(o.heads) +
                                " heads = " + std::to_string(o.d_model / o.heads));
  }
  if (o.vocab < o.max_len) {
    throw std::invalid_argument("--vocab " + std::to_string(o.vocab) +
                                " is smaller than --max-len " + std::to_string(o.max_len) +
                                ": a block holds distinct tokens");
  }
}

// A block of L distinct tokens, then the same block: inputs (2L) and the
// next-token targets (the last position has none).
struct Sequence {
  int block_len;
  std::vector<int> inputs, targets;
};

Sequence repeated_block(std::mt19937_64& gen, int vocab, int block_len) {
  std::vector<int> pool(vocab);
  for (int i = 0; i < vocab; ++i) pool[i] = i;
  for (int i = 0; i < block_len; ++i) {  // partial Fisher-Yates: L distinct tokens
    std::uniform_int_distribution<int> pick(i, vocab - 1);
    std::swap(pool[i], pool[pick(gen)]);
  }
  Sequence s{block_len, {}, {}};
  for (int r = 0; r < 2; ++r) s.inputs.insert(s.inputs.end(), pool.begin(), pool.begin() + block_len);
  s.targets.assign(s.inputs.begin() + 1, s.inputs.end());
  s.targets.push_back(-1);
  return s;
}

Sequence random_sequence(std::mt19937_64& gen, const Options& o) {
  const int L = std::uniform_int_distribution<int>(o.min_len, o.max_len)(gen);
  return repeated_block(gen, o.vocab, L);
}

// One model, its gradient accumulator and its optimiser.
struct Trainee {
  std::string name;
  AttentionOnlyTransformer model;
  mha::TransformerGrads sum;  // the batch's summed gradients
  mha::Adam adam;
  std::vector<double> first_half, repeated_half;  // held-out losses by evaluation
  double seconds = 0.0;
};

void zero_like(mha::TransformerGrads& g, const AttentionOnlyTransformer& m) {
  g.d_embed = xt::zeros<float>(m.embed.shape());
  g.d_pos = xt::zeros<float>(m.pos.shape());
  g.d_unembed = xt::zeros<float>(m.unembed.shape());
  g.layers.resize(m.layers.size());
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const auto shape = m.layers[l].W_Q.shape();
    g.layers[l] = {xt::zeros<float>(shape), xt::zeros<float>(shape), xt::zeros<float>(shape),
                   xt::zeros<float>(shape)};
  }
}

// With rotary positions `pos` is not read, and not trained.
std::vector<mha::Param> parameters(AttentionOnlyTransformer& m, const mha::TransformerGrads& g,
                                   mha::Positions positions) {
  std::vector<mha::Param> p = {mha::param(m.embed, g.d_embed), mha::param(m.unembed, g.d_unembed)};
  if (positions == mha::Positions::kLearned) p.push_back(mha::param(m.pos, g.d_pos));
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    p.push_back(mha::param(m.layers[l].W_Q, g.layers[l].dW_Q));
    p.push_back(mha::param(m.layers[l].W_K, g.layers[l].dW_K));
    p.push_back(mha::param(m.layers[l].W_V, g.layers[l].dW_V));
    p.push_back(mha::param(m.layers[l].W_O, g.layers[l].dW_O));
  }
  return p;
}

// sum += w * g
void add(mha::TransformerGrads& sum, const mha::TransformerGrads& g, float w) {
  sum.d_embed += w * g.d_embed;
  sum.d_pos += w * g.d_pos;
  sum.d_unembed += w * g.d_unembed;
  for (std::size_t l = 0; l < sum.layers.size(); ++l) {
    sum.layers[l].dW_Q += w * g.layers[l].dW_Q;
    sum.layers[l].dW_K += w * g.layers[l].dW_K;
    sum.layers[l].dW_V += w * g.layers[l].dW_V;
    sum.layers[l].dW_O += w * g.layers[l].dW_O;
  }
}

// Mean cross-entropy per half on held-out sequences: first half = inputs
// 0 .. L-2 (targets 1 .. L-1), repeated half = inputs L .. 2L-2. `logits_of`
// is the model's forward, or an ablated one.
template <class LogitsOf>
void evaluate_with(LogitsOf logits_of, const std::vector<Sequence>& held_out, double* first,
                   double* repeated) {
  double f = 0, r = 0;
  long nf = 0, nr = 0;
  for (const Sequence& s : held_out) {
    const mha::Tensor2 logits = logits_of(s.inputs);  // (T, vocab)
    const int L = s.block_len, V = static_cast<int>(logits.shape(1));
    for (int t = 0; t < 2 * L - 1; ++t) {
      if (t == L - 1) continue;  // the second block's first token: unpredictable, and not "first half"
      const float* row = &logits(t, 0);
      const float max = *std::max_element(row, row + V);
      double sum = 0;
      for (int c = 0; c < V; ++c) sum += std::exp(double(row[c]) - max);
      const double loss = std::log(sum) - (double(row[s.targets[t]]) - max);
      if (t < L - 1) {
        f += loss;
        ++nf;
      } else {
        r += loss;
        ++nr;
      }
    }
  }
  *first = f / nf;
  *repeated = r / nr;
}

void evaluate(const AttentionOnlyTransformer& m, mha::Positions positions,
              const std::vector<Sequence>& held_out, double* first, double* repeated) {
  evaluate_with([&](const std::vector<int>& x) { return mha::model_logits(m, x, positions); },
                held_out, first, repeated);
}

// Head scores of a trained model on held-out sequences of length 2 * block.
struct HeadScores {
  std::vector<double> previous_token;  // layer 1's heads
  std::vector<double> induction;       // the last layer's heads
  // Layer 1's heads, by half: mean p_{i,i-1} over the first half's queries
  // 1 .. L-1 (where the keys an induction head needs are), and mean
  // p_{i,i-L} over the repeated half's queries L .. 2L-1 (the earlier copy of
  // the current token: a duplicate-token head).
  std::vector<double> previous_token_first_half, duplicate_token;
};

HeadScores score_heads(const AttentionOnlyTransformer& m, mha::Positions positions,
                       const std::vector<Sequence>& probes) {
  const std::size_t H = static_cast<std::size_t>(m.n_heads);
  const std::vector<double> zeros(H, 0.0);
  HeadScores s{zeros, zeros, zeros, zeros};
  for (const Sequence& p : probes) {
    // per layer (H, T, T)
    const std::vector<mha::Tensor3> w = mha::model_attention_weights(m, p.inputs, positions);
    const std::vector<mha::HeadProfile> first = mha::profile_heads(w.front());  // lab 7
    const std::size_t L = static_cast<std::size_t>(p.block_len);
    for (std::size_t h = 0; h < H; ++h) {
      s.previous_token[h] += first[h].previous_token / probes.size();
      const mha::Tensor2 head = xt::view(w.back(), h, xt::all(), xt::all());  // (T, T)
      s.induction[h] += mha::induction_score(head, p.block_len) / probes.size();  // lab 7
      double prev = 0, dup = 0;
      for (std::size_t i = 1; i < L; ++i) prev += w.front()(h, i, i - 1) / (L - 1);
      for (std::size_t i = L; i < 2 * L; ++i) dup += w.front()(h, i, i - L) / L;
      s.previous_token_first_half[h] += prev / probes.size();
      s.duplicate_token[h] += dup / probes.size();
    }
  }
  return s;
}

// The data of the course reader's head viewer (./lab read): every head's
// weights on one sequence, its lab 7 score, the composition scores of the two
// layers, and each layer-2 head's induction score at every evaluation.
mha::Json heads_view(const AttentionOnlyTransformer& m, mha::Positions positions,
                     const Sequence& seq, const HeadScores& scores, const std::vector<int>& steps,
                     const std::vector<std::vector<double>>& induction_by_step,
                     const std::string& title) {
  // per layer (H, T, T), with the positions the model was trained with
  const std::vector<mha::Tensor3> w = mha::model_attention_weights(m, seq.inputs, positions);
  auto matrix = [](const mha::Tensor2& a) {  // (rows, cols) as rows of numbers
    mha::Json rows = mha::Json::Array();
    for (std::size_t i = 0; i < a.shape(0); ++i) {
      rows.Add(std::vector<double>(&a(i, 0), &a(i, 0) + a.shape(1)));
    }
    return rows;
  };
  mha::Json layers = mha::Json::Array();
  for (int l = 0; l < m.n_layers; ++l) {
    mha::Json heads = mha::Json::Array();
    for (int h = 0; h < m.n_heads; ++h) {
      const mha::Tensor2 head = xt::view(w[l], h, xt::all(), xt::all());  // (T, T)
      mha::Json s = mha::Json::Object();
      if (l == 0) s.Set("previous token", scores.previous_token[h]);
      if (l == m.n_layers - 1) s.Set("induction", scores.induction[h]);
      heads.Add(mha::Json::Object().Set("weights", matrix(head)).Set("scores", std::move(s)));
    }
    layers.Add(mha::Json::Object()
                   .Set("name", "layer " + std::to_string(l + 1))
                   .Set("heads", std::move(heads)));
  }
  std::vector<std::string> tokens;
  for (int t : seq.inputs) tokens.push_back("t" + std::to_string(t));
  mha::Json curves = mha::Json::Array();
  for (int h = 0; h < m.n_heads; ++h) {
    std::vector<double> y;
    for (const auto& at_step : induction_by_step) y.push_back(at_step[h]);
    curves.Add(mha::Json::Object()
                   .Set("label", "layer 2, head " + std::to_string(h))
                   .Set("x", std::vector<double>(steps.begin(), steps.end()))
                   .Set("y", y));
  }
  const mha::Composition c = mha::composition_scores(m.layers[0], m.layers[1]);
  return mha::Json::Object()
      .Set("kind", "heads_view")
      .Set("program", "grow_induction_heads")
      .Set("title", title)
      .Set("tokens", tokens)
      .Set("block_len", seq.block_len)
      .Set("layers", std::move(layers))
      .Set("composition", mha::Json::Object()
                              .Set("q", matrix(c.q))
                              .Set("k", matrix(c.k))
                              .Set("v", matrix(c.v)))
      .Set("induction_over_training", std::move(curves));
}

// Every head's attention on one sequence: a row of heatmaps per layer.
mha::Json heads_chart(const AttentionOnlyTransformer& m, mha::Positions positions,
                      const Sequence& seq, const HeadScores& scores, const std::string& subtitle) {
  // per layer (H, T, T)
  const std::vector<mha::Tensor3> w = mha::model_attention_weights(m, seq.inputs, positions);
  const std::size_t T = seq.inputs.size();
  mha::Json panels = mha::Json::Array();
  for (int l = 0; l < m.n_layers; ++l) {
    for (int h = 0; h < m.n_heads; ++h) {
      char label[64];
      if (l == 0) {
        std::snprintf(label, sizeof label, "layer 1, head %d: prev %.2f", h,
                      scores.previous_token[h]);
      } else if (l == m.n_layers - 1) {
        std::snprintf(label, sizeof label, "layer %d, head %d: ind %.2f", l + 1, h,
                      scores.induction[h]);
      } else {
        std::snprintf(label, sizeof label, "layer %d, head %d", l + 1, h);
      }
      const mha::Tensor2 head = xt::view(w[l], h, xt::all(), xt::all());  // (T, T)
      // The white line: the first query of the repeated half. Grey: the keys
      // the causal mask removes (a weight that rounds to 0 keeps its colour).
      panels.Add(mha::HeatmapPanel(label, head.data(), T, T)
                     .Set("hline", seq.block_len)
                     .Set("mask_future", true));
    }
  }
  return mha::HeatmapsChart("Attention of every head on one repeated sequence", subtitle,
                            m.n_heads, std::move(panels))
      .Set("row_title", "query")
      .Set("footer", "rows: queries (tokens in order), columns: keys; bright = weight 1. The "
                     "white line starts the repeated half.");
}

// ------------------------------------------------------------ which circuit?
// The Q-, K- and V-composition of every layer-1 head (column a) into every
// layer-2 head (row b), from the weights alone, beside the level of random
// heads of the same shape; and their chart.
mha::Json composition_report(const AttentionOnlyTransformer& m, const Options& o) {
  const int H = m.n_heads;
  const mha::Composition c = mha::composition_scores(m.layers[0], m.layers[1]);  // lab 13
  const int pairs = 50;
  const mha::CompositionBaseline base = mha::random_composition_baseline(m.d_model, H, pairs);
  std::printf("\ncomposition scores (Elhage et al. 2021), from the weights alone: row = layer-2 "
              "head b,\ncolumn = layer-1 head a\n");
  std::printf("random level (two independent random layers of this shape, mean over %d pairs of "
              "layers):\n  q %.3f, k %.3f, v %.3f. Elhage et al. report a score minus this level; "
              "the tables below\n  are the raw scores (subtract the level to compare with theirs)."
              "\n", pairs, base.q, base.k, base.v);
  if (o.positions == "rope") {
    std::printf("  (with RoPE a score is x_i W_Q R(j - i) W_K^T x_j^T: the QK circuit here is "
                "the one at distance 0)\n");
  }
  const mha::Tensor2* kinds[3] = {&c.q, &c.k, &c.v};
  const char* names[3] = {"Q-composition q(b, a)", "K-composition k(b, a)",
                          "V-composition v(b, a)"};
  std::printf("\n      ");
  for (const char* n : names) std::printf("  %-*s", 6 * H, n);
  std::printf("\n      ");
  for (int k = 0; k < 3; ++k) {
    std::printf("  ");
    for (int a = 0; a < H; ++a) std::printf("   a=%d", a);
  }
  std::printf("\n");
  for (int b = 0; b < H; ++b) {
    std::printf("  b=%d ", b);
    for (int k = 0; k < 3; ++k) {
      std::printf("  ");
      for (int a = 0; a < H; ++a) std::printf(" %5.2f", (*kinds[k])(b, a));
    }
    std::printf("\n");
  }
  mha::Json panels = mha::Json::Array();
  const double levels[3] = {base.q, base.k, base.v};
  mha::Json labels_a = mha::Json::Array(), labels_b = mha::Json::Array();
  for (int h = 0; h < H; ++h) {
    labels_a.Add("a=" + std::to_string(h));
    labels_b.Add("b=" + std::to_string(h));
  }
  for (int k = 0; k < 3; ++k) {
    char note[80];
    std::snprintf(note, sizeof note, "random heads: %.2f", levels[k]);
    panels.Add(mha::HeatmapPanel(names[k], kinds[k]->data(), H, H)
                   .Set("note", note)
                   .Set("row_labels", labels_b)
                   .Set("col_labels", labels_a));
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "the 2-layer model after %d steps (seed %llu, %s positions); rows: layer-2 "
                "head b, columns: layer-1 head a",
                o.steps, static_cast<unsigned long long>(o.seed), o.positions.c_str());
  return mha::HeatmapsChart("How strongly each layer-2 head reads each layer-1 head", subtitle,
                            3, std::move(panels))
      .Set("colorbar_label", "composition score")
      .Set("footer", "Each score is a normalised Frobenius norm in [0, 1] computed from the "
                     "weights alone; the note under each panel is the mean score of random "
                     "heads of this shape.");
}

// Path ablations: the repeated-half loss when one layer-1 head's output (or
// one part of it) is removed from one input of layer 2, the residual
// untouched; and their chart.
mha::Json ablation_report(const AttentionOnlyTransformer& m, const Options& o,
                          const std::vector<Sequence>& held_out, double intact) {
  const mha::Positions positions = mha::parse_positions(o.positions);
  const bool rope = positions == mha::Positions::kRope;
  // With RoPE nothing of a position is in the stream: the token part is the whole.
  std::vector<mha::Part> parts = {mha::Part::kWhole};
  if (!rope) parts = {mha::Part::kWhole, mha::Part::kPosition, mha::Part::kToken};
  const mha::Path paths[3] = {mha::Path::kQuery, mha::Path::kKey, mha::Path::kValue};
  const auto loss = [&](int head, mha::Path path, mha::Part part) {
    double first, repeated;
    evaluate_with(
        [&](const std::vector<int>& x) {
          return mha::ablated_logits(m, x, positions, head, path, part);
        },
        held_out, &first, &repeated);
    return repeated;
  };
  std::printf("\npath ablations: the 2-layer model's repeated-half loss (held-out, nats) with "
              "layer-1 head a's\noutput removed from what the layer-2 queries, keys or values "
              "read; the residual stream\n(and so the unembedding) keeps it. intact %.3f (this "
              "program's own forward: %.3f)\n",
              intact, loss(-1, mha::Path::kQuery, mha::Part::kWhole));
  if (!rope) {
    std::printf("position part: A_a (pos W_V^a) W_O^a; token part: A_a (embed[tokens] W_V^a) "
                "W_O^a; A_a is the\nintact pattern, so the two parts add up to the whole\n");
  }
  std::printf("  %-22s %8s %8s %8s\n", "removed", "queries", "keys", "values");
  std::vector<mha::BarGroup> groups;
  for (mha::Path path : paths) {
    groups.push_back({std::string("removed from the layer-2 ") + mha::path_name(path), {}});
  }
  for (int a = 0; a < m.n_heads; ++a) {
    for (mha::Part part : parts) {
      char row[40];
      std::snprintf(row, sizeof row, "head %d, %s", a,
                    part == mha::Part::kWhole ? "all of it" : mha::part_name(part));
      std::printf("  %-22s", row);
      for (int k = 0; k < 3; ++k) {
        const double v = loss(a, paths[k], part);
        std::printf(" %8.3f", v);
        char note[16];
        std::snprintf(note, sizeof note, "%.2f", v);
        groups[k].bars.push_back({std::string("L1 ") + row, v, note});
      }
      std::printf("\n");
    }
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "the 2-layer model after %d steps (seed %llu, %s positions); intact: %.3f nats; "
                "%zu held-out sequences",
                o.steps, static_cast<unsigned long long>(o.seed), o.positions.c_str(), intact,
                held_out.size());
  return mha::BarsChart("Repeated-half loss with one path from layer 1 to layer 2 cut", subtitle,
                        "repeated-half loss (nats per token)", groups);
}

// The best expected first-half loss (targets 1 .. L-1, L uniform in
// [min_len, max_len]). After t distinct tokens the next one is one of the
// vocab - t not yet seen. A predictor that knows L spreads its guess over
// them; the model does not know L, and training also scores the repeat's
// first token (a token already seen), so the best it can do keeps the
// probability P(L = t | L >= t) for "the block ends here".
void first_half_floors(const Options& o, double* knows_len, double* not_knowing) {
  double a = 0, b = 0;
  long n = 0;
  for (int L = o.min_len; L <= o.max_len; ++L) {
    for (int t = 1; t < L; ++t) {
      const double p_end = t < o.min_len ? 0.0 : 1.0 / (o.max_len - t + 1);
      a += std::log(double(o.vocab - t));
      b += std::log(double(o.vocab - t)) - std::log(1.0 - p_end);
      ++n;
    }
  }
  *knows_len = a / n;
  *not_knowing = b / n;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(const Options& o) {
  std::printf("data: L distinct random tokens of %d, L in [%d, %d], then the same L again (T = 2L)\n",
              o.vocab, o.min_len, o.max_len);
  std::printf("models: attention-only, d_model=%d, %d heads, 1 and 2 layers, seed %llu, %s\n",
              o.d_model, o.heads, static_cast<unsigned long long>(o.seed),
              o.positions == "rope" ? "rotary positions (lab 11) instead of pos"
                                    : "learned positions (pos)");
  const mha::Positions positions = mha::parse_positions(o.positions);
  std::printf("training: Adam lr %g (warm-up %d steps), %d steps of %d sequences\n", o.lr,
              std::max(1, o.steps / 20), o.steps, o.batch);
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes many times longer than it needs to)\n");
#endif
  const int max_T = 2 * o.max_len;
  std::vector<Trainee> models;
  for (int layers : {1, 2}) {
    Trainee t{std::to_string(layers) + " layer" + (layers == 1 ? "" : "s"),
              AttentionOnlyTransformer(o.vocab, max_T, o.d_model, o.heads, layers, o.seed),
              {},
              mha::Adam(o.lr),
              {},
              {}};
    zero_like(t.sum, t.model);
    models.push_back(std::move(t));
  }
  std::mt19937_64 held_gen(o.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<Sequence> held_out, probes;
  for (int i = 0; i < o.eval_sequences; ++i) held_out.push_back(random_sequence(held_gen, o));
  for (int i = 0; i < o.eval_sequences; ++i) probes.push_back(repeated_block(held_gen, o.vocab, o.max_len));

  std::mt19937_64 gen(o.seed);
  std::vector<int> eval_steps;
  std::vector<std::vector<double>> induction_by_step;  // per evaluation, each layer-2 head's
  const int warmup = std::max(1, o.steps / 20);
  for (int step = 0; step <= o.steps; ++step) {
    if (step % o.eval_every == 0 || step == o.steps) {
      eval_steps.push_back(step);
      for (Trainee& t : models) {
        double f, r;
        evaluate(t.model, positions, held_out, &f, &r);
        t.first_half.push_back(f);
        t.repeated_half.push_back(r);
      }
      induction_by_step.push_back(score_heads(models[1].model, positions, probes).induction);
      char progress[160];
      std::snprintf(progress, sizeof progress,
                    "step %5d/%d   repeated-half loss: 1 layer %.3f, 2 layers %.3f   "
                    "first half: %.3f, %.3f ",
                    step, o.steps, models[0].repeated_half.back(), models[1].repeated_half.back(),
                    models[0].first_half.back(), models[1].first_half.back());
      mha::PrintProgress(progress);
    }
    if (step == o.steps) break;
    std::vector<Sequence> batch;
    for (int b = 0; b < o.batch; ++b) batch.push_back(random_sequence(gen, o));
    const float lr = o.lr * std::min(1.0f, float(step + 1) / warmup);
    for (Trainee& t : models) {
      const auto t0 = std::chrono::steady_clock::now();
      zero_like(t.sum, t.model);
      for (const Sequence& s : batch) {
        add(t.sum, mha::model_loss_and_grads(t.model, s.inputs, s.targets, positions).grads,
            1.0f / o.batch);
      }
      t.adam.set_learning_rate(lr);
      t.adam.step(parameters(t.model, t.sum, positions));
      t.seconds += seconds_since(t0);
    }
  }
  mha::EndProgress();

  const double ln_v = std::log(double(o.vocab));
  std::printf("\nheld-out loss (nats per token; ln %d = %.3f is a uniform guess)\n", o.vocab, ln_v);
  double floor_known, floor_unknown;
  first_half_floors(o, &floor_known, &floor_unknown);
  std::printf("the first half's best: %.3f for a model that does not know L (%.3f if it knew L)\n",
              floor_unknown, floor_known);
  std::printf("%8s  %12s %14s  %12s %14s\n", "step", "1L first", "1L repeated", "2L first",
              "2L repeated");
  const std::size_t n = eval_steps.size();
  const std::size_t every = std::max<std::size_t>(1, n / 12);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % every != 0 && i + 1 != n) continue;
    std::printf("%8d  %12.3f %14.3f  %12.3f %14.3f\n", eval_steps[i], models[0].first_half[i],
                models[0].repeated_half[i], models[1].first_half[i], models[1].repeated_half[i]);
  }
  // The phase change: the largest drop of the two-layer repeated-half loss
  // between two consecutive measurements, after the first tenth of the run
  // (where every curve falls from its random start).
  std::size_t drop_at = 1;
  double drop = -1e300;
  for (std::size_t i = 1; i < n; ++i) {
    if (eval_steps[i - 1] < o.steps / 10) continue;
    const double d = models[1].repeated_half[i - 1] - models[1].repeated_half[i];
    if (d > drop) {
      drop = d;
      drop_at = i;
    }
  }
  if (n > 1 && drop > -1e300) {
    std::printf("largest drop of the 2-layer repeated-half loss: %.3f nats between steps %d and %d\n",
                drop, eval_steps[drop_at - 1], eval_steps[drop_at]);
  }

  const HeadScores two = score_heads(models[1].model, positions, probes);
  const HeadScores one = score_heads(models[0].model, positions, probes);
  std::printf("\nhead scores (lab 7), mean over %zu sequences of T = %d:\n", probes.size(), max_T);
  std::printf("  2 layers, layer 1, previous-token:");
  for (double v : two.previous_token) std::printf(" %.2f", v);
  std::printf("\n    previous-token, first half only: ");
  for (double v : two.previous_token_first_half) std::printf(" %.2f", v);
  std::printf("\n    duplicate-token, repeated half:  ");
  for (double v : two.duplicate_token) std::printf(" %.2f", v);
  std::printf("\n  2 layers, layer 2, induction:     ");
  for (double v : two.induction) std::printf(" %.2f", v);
  std::printf("\n  1 layer,  induction:              ");
  for (double v : one.induction) std::printf(" %.2f", v);
  std::printf("\n");
  const mha::Json composition = composition_report(models[1].model, o);
  const mha::Json ablations =
      ablation_report(models[1].model, o, held_out, models[1].repeated_half.back());
  std::printf("\ntraining wall-clock time (grows with the machine's load): 1 layer %.1f s, "
              "2 layers %.1f s\n",
              models[0].seconds, models[1].seconds);

  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  const auto csv_path = dir / "loss_curves.csv";
  std::ofstream csv(csv_path);
  csv << "step,one_layer_first_half,one_layer_repeated_half,two_layers_first_half,"
         "two_layers_repeated_half\n";
  for (std::size_t i = 0; i < n; ++i) {
    csv << eval_steps[i] << "," << models[0].first_half[i] << "," << models[0].repeated_half[i]
        << "," << models[1].first_half[i] << "," << models[1].repeated_half[i] << "\n";
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "vocab %d, L in [%d, %d], d_model %d, %d heads, Adam %g, %d steps x %d; "
                "held-out, every %d steps",
                o.vocab, o.min_len, o.max_len, o.d_model, o.heads, o.lr, o.steps, o.batch,
                o.eval_every);
  csv.close();
  std::vector<double> x(eval_steps.begin(), eval_steps.end());
  const mha::Json curves =
      mha::LinesChart("Held-out loss: first half and repeated half", subtitle, "step",
                      "loss (nats per token)",
                      {{"1 layer, first half", x, models[0].first_half},
                       {"1 layer, repeated half", x, models[0].repeated_half},
                       {"2 layers, first half", x, models[1].first_half},
                       {"2 layers, repeated half", x, models[1].repeated_half}})
          .Set("y_scale", "log");
  char heads_subtitle[200];
  std::snprintf(heads_subtitle, sizeof heads_subtitle,
                "the 2-layer model after %d steps, on a block of %d tokens repeated; scores "
                "are means over %zu sequences",
                o.steps, o.max_len, probes.size());
  std::cout << "\n";
  mha::WriteChart(heads_view(models[1].model, positions, probes.front(), two, eval_steps,
                             induction_by_step, heads_subtitle),
                  dir / "view.json");
  mha::WriteAndDrawCharts(
      {csv_path, dir / "view.json"},
      {{dir / "loss_curves.json", curves},
       {dir / "heads.json",
        heads_chart(models[1].model, positions, probes.front(), two, heads_subtitle)},
       {dir / "composition.json", composition},
       {dir / "ablations.json", ablations}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
