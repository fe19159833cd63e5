#include "labs/13_induction_heads/induction_experiment.h"

#include <cstdio>
#include <utility>

#include <xtensor/xview.hpp>

#include "labs/07_head_analysis/head_analysis.h"

namespace mha::induction_experiment {

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

void evaluate(const AttentionOnlyTransformer& m, mha::Positions positions,
              const std::vector<Sequence>& held_out, double* first, double* repeated) {
  evaluate_with([&](const std::vector<int>& x) { return mha::model_logits(m, x, positions); },
                held_out, first, repeated);
}

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

}  // namespace mha::induction_experiment
