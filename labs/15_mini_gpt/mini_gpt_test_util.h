// Helpers and shared cases of lab 15's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (tests/15_mini_gpt/gen_goldens.py writes both
// sets: PyTorch in float64, NumPy for the sampler), and name each classic
// mistake in the same words. The grading tests add cases of their own on top.
//
//   const MiniGpt model = testing::CaseModel("labs/15_mini_gpt/golden/", "pub");
//   testing::ExpectLogitsMatchTorch(model, "labs/15_mini_gpt/golden/", "pub");
//
// A case's model is built by the test, not trusted to a constructor: the
// learner's MiniGpt constructor (the class is theirs), then every field from
// the case's files, blocks made by lab 14's constructor and overwritten too.
#ifndef MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_
#define MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/mini_gpt.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/15_mini_gpt.md, by the names the golden
// generator gives what each one computes (<case>_<what>_mistake_<name>.npy).
inline const MistakeTable kMiniGptMistakes(
    "docs/15_mini_gpt.md",
    {
        {"lnf_missing",
         "the final LayerNorm left out: logits = x_L @ embed^T instead of "
         "layer_norm(x_L, lnf_gamma, lnf_beta) @ embed^T"},
        {"no_max_subtraction",
         "cross-entropy's logsumexp without the row max subtracted first: exp(1e4) overflows"},
        {"mean_over_all",
         "cross-entropy averaged over all T rows instead of over the scored ones (targets >= 0): "
         "the loss and every gradient shrink by n_scored / T"},
        {"tied_output_grad_missing",
         "d_embed without the output layer's part d_logits^T h: embed is also the output layer, "
         "so its gradient has that part too"},
        {"tied_input_grad_missing",
         "d_embed without the input rows' part: row t of dx_0 must be added into the row of "
         "token inputs[t]"},
        {"scatter_overwritten",
         "d_embed's rows of the input tokens assigned instead of added to: a repeated token "
         "keeps its last position only, and the output layer's part of those rows is lost"},
        {"clip_per_tensor",
         "each gradient clipped by its own norm instead of all of them by one global norm"},
        {"decay_all",
         "AdamW's weight decay applied to gammas, betas and biases too: only the matrices "
         "(embed, W_Q, W_K, W_V, W_O, W_1, W_2) decay"},
        {"no_bias_correction",
         "AdamW without bias correction: m / (1 - beta1^t) and v / (1 - beta2^t) make up for "
         "moments that start at 0"},
        {"topk_ties_high",
         "top-k ties at the k-th largest logit kept with the higher ids instead of the lower ones"},
        {"cached_keys_rotated_again",
         "the decoder's cached keys rotated again at every step: a key turns once, at its own "
         "position, and is cached turned"},
    });

inline const std::vector<std::string> kTokenLogit = {"token", "logit"};

// <dir><c>_<what>.npy as a tensor of rank N.
template <std::size_t N>
xt::xtensor<float, N> Golden(const std::string& dir, const std::string& c,
                             const std::string& what) {
  return LoadGolden<N>(GoldenFile(dir, c + "_" + what));
}

// <dir><c>_<what>.npy, a row of token ids written as floats.
inline std::vector<int> GoldenIds(const std::string& dir, const std::string& c,
                                  const std::string& what) {
  const Tensor1 ids = Golden<1>(dir, c, what);
  return std::vector<int>(ids.begin(), ids.end());
}

// MatchesGolden of `actual` with <dir><c>_<what>.npy, naming any of `mistakes`
// whose golden <dir><c>_<what>_mistake_<m>.npy the generator wrote (a mistake
// that does not change this output has none) and `actual` matches instead.
template <class A>
::testing::AssertionResult MatchesCase(const A& actual, const std::string& dir,
                                       const std::string& c, const std::string& what,
                                       Tolerance tol, const std::vector<std::string>& axes,
                                       const std::vector<std::string>& mistakes = {}) {
  const std::string golden = dir + c + "_" + what;
  std::vector<std::string> written;
  for (const std::string& m : mistakes) {
    if (std::ifstream(golden + "_mistake_" + m + ".npy").good()) written.push_back(m);
  }
  return MatchesGolden(actual, golden + ".npy", tol, axes, kMiniGptMistakes.Of(golden, written));
}

// ------------------------------------------------------------ every parameter

// f(key, tensor) for each parameter of `model` (const or not) in the API's
// declaration order; key as the golden files name it: "embed", "<l>_ln1_gamma"
// ... "<l>_b_2" (lab 14's BlockGrads order), "lnf_gamma", "lnf_beta".
template <class Model, class F>
void ForEachParameter(Model& m, F&& f) {
  f(std::string("embed"), m.embed);
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    auto& b = m.blocks[l];
    const std::string at = std::to_string(l) + "_";
    f(at + "ln1_gamma", b.ln1_gamma), f(at + "ln1_beta", b.ln1_beta);
    f(at + "W_Q", b.attn.W_Q), f(at + "W_K", b.attn.W_K);
    f(at + "W_V", b.attn.W_V), f(at + "W_O", b.attn.W_O);
    f(at + "ln2_gamma", b.ln2_gamma), f(at + "ln2_beta", b.ln2_beta);
    f(at + "W_1", b.ffn.W_1), f(at + "b_1", b.ffn.b_1);
    f(at + "W_2", b.ffn.W_2), f(at + "b_2", b.ffn.b_2);
  }
  f(std::string("lnf_gamma"), m.lnf_gamma);
  f(std::string("lnf_beta"), m.lnf_beta);
}

// The same for the parameter gradients of `g` (the dx fields are not
// parameters: left out), under the same keys.
template <class Grads, class F>
void ForEachGradient(Grads& g, F&& f) {
  f(std::string("embed"), g.d_embed);
  for (std::size_t l = 0; l < g.blocks.size(); ++l) {
    auto& b = g.blocks[l];
    const std::string at = std::to_string(l) + "_";
    f(at + "ln1_gamma", b.dln1_gamma), f(at + "ln1_beta", b.dln1_beta);
    f(at + "W_Q", b.dW_Q), f(at + "W_K", b.dW_K), f(at + "W_V", b.dW_V), f(at + "W_O", b.dW_O);
    f(at + "ln2_gamma", b.dln2_gamma), f(at + "ln2_beta", b.dln2_beta);
    f(at + "W_1", b.dW_1), f(at + "b_1", b.db_1), f(at + "W_2", b.dW_2), f(at + "b_2", b.db_2);
  }
  f(std::string("lnf_gamma"), g.d_lnf_gamma);
  f(std::string("lnf_beta"), g.d_lnf_beta);
}

template <class T>
constexpr std::size_t RankOf() {
  return std::tuple_size<typename std::decay_t<T>::shape_type>::value;
}

// Every parameter flattened in declaration order (what AdamW's goldens hold).
inline Tensor1 Flatten(const MiniGpt& model) {
  std::vector<float> all;
  ForEachParameter(model, [&](const std::string&, const auto& t) {
    all.insert(all.end(), t.begin(), t.end());
  });
  return xt::adapt(all, {all.size()});
}

// Gradients shaped like `model`'s parameters, read from `flat` in declaration
// order; dx fields left empty.
inline GptGrads GradsFromFlat(const MiniGpt& model, const Tensor1& flat) {
  GptGrads g;
  g.blocks.resize(model.blocks.size());
  std::size_t at = 0;
  std::vector<std::vector<std::size_t>> shapes;
  ForEachParameter(model, [&](const std::string&, const auto& t) {
    shapes.emplace_back(t.shape().begin(), t.shape().end());
  });
  std::size_t i = 0;
  ForEachGradient(g, [&](const std::string&, auto& t) {
    using T = std::decay_t<decltype(t)>;
    typename T::shape_type shape;
    std::copy(shapes[i].begin(), shapes[i].end(), shape.begin());
    t = T::from_shape(shape);
    if (at + t.size() > flat.size()) {  // a model larger than the numbers given
      throw std::invalid_argument("GradsFromFlat: the model has more parameters than the " +
                                  std::to_string(flat.size()) + " numbers given");
    }
    std::copy(flat.begin() + at, flat.begin() + at + t.size(), t.begin());
    at += t.size();
    ++i;
  });
  return g;
}

// The keys of the parameters whose slice of `actual` differs from `expected`
// (two flattenings of `model`'s shape), for a failure message.
inline std::string DifferingParameters(const MiniGpt& model, const Tensor1& actual,
                                       const Tensor1& expected, Tolerance tol) {
  std::string out;
  std::size_t at = 0;
  ForEachParameter(model, [&](const std::string& key, const auto& t) {
    const auto n = t.size();
    if (actual.size() >= at + n && expected.size() >= at + n &&
        !AllClose(xt::view(actual, xt::range(at, at + n)),
                  xt::view(expected, xt::range(at, at + n)), tol)) {
      out += (out.empty() ? "" : ", ") + key;
    }
    at += n;
  });
  return out.empty() ? "" : "parameters that differ: " + out;
}

// ------------------------------------------------------------ a case's model

struct Sizes {
  int vocab, max_len, d_model, n_heads, d_ff, n_layers;
  std::uint64_t seed;
  double base;
};

inline Sizes CaseSizes(const std::string& dir, const std::string& c) {
  const Tensor1 s = Golden<1>(dir, c, "config");
  return {int(s(0)), int(s(1)), int(s(2)), int(s(3)), int(s(4)), int(s(5)),
          static_cast<std::uint64_t>(s(6)), double(s(7))};
}

inline MiniGpt Construct(const Sizes& s) {
  return MiniGpt(s.vocab, s.max_len, s.d_model, s.n_heads, s.d_ff, s.n_layers, s.seed, s.base);
}

// The sizes, and blocks from lab 14's constructor, whatever the model's
// constructor did; the parameters are for the caller to install.
inline void SetSizes(MiniGpt& model, const Sizes& s) {
  model.vocab = s.vocab, model.max_len = s.max_len, model.d_model = s.d_model;
  model.n_heads = s.n_heads, model.d_ff = s.d_ff, model.n_layers = s.n_layers;
  model.base = s.base;
  model.blocks.assign(static_cast<std::size_t>(s.n_layers),
                      TransformerBlock(s.d_model, s.n_heads, s.d_ff, s.seed, s.base));
}

// The case's model: every field set from <dir><c>_config and <dir><c>_p_<key>.
inline MiniGpt CaseModel(const std::string& dir, const std::string& c) {
  const Sizes s = CaseSizes(dir, c);
  MiniGpt model = Construct(s);
  SetSizes(model, s);
  ForEachParameter(model, [&](const std::string& key, auto& t) {
    t = Golden<RankOf<decltype(t)>()>(dir, c, "p_" + key);
  });
  return model;
}

// The case's gradients (<dir><c>_g_<key>, and each block's dx).
inline GptGrads CaseGrads(const std::string& dir, const std::string& c, int n_layers) {
  GptGrads g;
  g.blocks.resize(static_cast<std::size_t>(n_layers));
  ForEachGradient(g, [&](const std::string& key, auto& t) {
    t = Golden<RankOf<decltype(t)>()>(dir, c, "g_" + key);
  });
  for (int l = 0; l < n_layers; ++l) g.blocks[l].dx = Golden<2>(dir, c, "g_" + std::to_string(l) + "_dx");
  return g;
}

// ------------------------------------------------------------ shared checks

// The learner's constructor alone draws embed from seed and block l from
// seed + 1000 (l + 1) (the case's matrices are those draws), with every
// gamma 1 and every beta and bias 0.
inline void ExpectDrawsItsWeights(const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Sizes s = CaseSizes(dir, c);
  const MiniGpt model = Construct(s);
  ASSERT_EQ(model.blocks.size(), static_cast<std::size_t>(s.n_layers)) << "one block per layer";
  EXPECT_EQ(model.parameter_count(), Flatten(CaseModel(dir, c)).size());
  ForEachParameter(model, [&](const std::string& key, const auto& t) {
    const bool gamma = key.find("gamma") != std::string::npos;
    if (t.dimension() == 2) {
      EXPECT_TRUE(MatchesCase(t, dir, c, "p_" + key, kExact, {"row", "column"}))
          << key << ": embed is NumpyRng(seed)'s, block l TransformerBlock(..., seed + 1000 * "
          << "(l + 1), base)'s";
    } else {
      const auto want = xt::xtensor<float, 1>(xt::ones<float>(t.shape()) * (gamma ? 1.0f : 0.0f));
      EXPECT_TRUE(AllClose(t, want, kExact)) << key << (gamma ? " starts at 1" : " starts at 0");
    }
  });
}

// logits and each block's attention weights against torch; the final
// LayerNorm left out is named.
inline void ExpectLogitsMatchTorch(const MiniGpt& model, const std::string& dir,
                                   const std::string& c) {
  SCOPED_TRACE(dir + c);
  const std::vector<int> tokens = GoldenIds(dir, c, "inputs");
  EXPECT_TRUE(MatchesCase(model.logits(tokens), dir, c, "logits", kModel, kTokenLogit,
                          {"lnf_missing"}));
  const std::vector<Tensor3> w = model.attention_weights(tokens);
  ASSERT_EQ(w.size(), model.blocks.size()) << "one (n_heads, T, T) tensor per block";
  for (std::size_t l = 0; l < w.size(); ++l) {
    EXPECT_TRUE(MatchesCase(w[l], dir, c, "weights_" + std::to_string(l), kModel,
                            {"head", "query", "key"}))
        << "block " << l << ": its attention's softmax on its own input x_l";
  }
}

// cross_entropy on the case's logits: the loss and d_logits against torch,
// and the same loss without d_logits. A loss that is not finite on logits
// of 1e4 is named.
inline void ExpectCrossEntropyMatchesTorch(const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Tensor2 logits = Golden<2>(dir, c, "logits");
  const std::vector<int> targets = GoldenIds(dir, c, "targets");
  Tensor2 d_logits;
  const double loss = cross_entropy(logits, targets, &d_logits);
  const MistakeNote overflow = std::isfinite(loss) ? NoNote("")
                                                   : kMiniGptMistakes.LooksLike("no_max_subtraction");
  EXPECT_TRUE(MatchesCase(Tensor1{float(loss)}, dir, c, "loss", kRowOp, {"loss"},
                          {"mean_over_all"})) << overflow;
  EXPECT_TRUE(MatchesCase(d_logits, dir, c, "d_logits", kRowOp, {"row", "logit"},
                          {"mean_over_all"})) << overflow;
  EXPECT_TRUE(MatchesCase(Tensor1{float(cross_entropy(logits, targets))}, dir, c, "loss", kRowOp,
                          {"loss"})) << "cross_entropy without d_logits";
}

// gpt_loss_and_grads on the case: the loss and the number of scored rows.
inline void ExpectLossMatchesTorch(const MiniGpt& model, const std::string& dir,
                                   const std::string& c) {
  SCOPED_TRACE(dir + c);
  const std::vector<int> targets = GoldenIds(dir, c, "targets");
  const GptLossAndGrads r = gpt_loss_and_grads(model, GoldenIds(dir, c, "inputs"), targets);
  EXPECT_EQ(r.scored, static_cast<std::size_t>(std::count_if(
                          targets.begin(), targets.end(), [](int t) { return t >= 0; })))
      << "scored: the targets that are not -1";
  EXPECT_TRUE(MatchesCase(Tensor1{float(r.loss)}, dir, c, "loss", kModel, {"loss"},
                          {"mean_over_all"}));
}

// d_embed, the tied gradient, against autograd: either part missing, the
// rows overwritten and the mean over all rows are named.
inline void ExpectTiedGradientMatchesTorch(const MiniGpt& model, const std::string& dir,
                                           const std::string& c) {
  SCOPED_TRACE(dir + c);
  const GptLossAndGrads r =
      gpt_loss_and_grads(model, GoldenIds(dir, c, "inputs"), GoldenIds(dir, c, "targets"));
  EXPECT_TRUE(MatchesCase(r.grads.d_embed, dir, c, "g_embed", kModel, {"token", "column"},
                          {"tied_output_grad_missing", "tied_input_grad_missing",
                           "scatter_overwritten", "mean_over_all"}));
}

// Every other gradient (each block's, the final LayerNorm's) and each
// block's dx against autograd.
inline void ExpectOtherGradsMatchTorch(const MiniGpt& model, const std::string& dir,
                                       const std::string& c) {
  SCOPED_TRACE(dir + c);
  const GptLossAndGrads r =
      gpt_loss_and_grads(model, GoldenIds(dir, c, "inputs"), GoldenIds(dir, c, "targets"));
  ASSERT_EQ(r.grads.blocks.size(), model.blocks.size()) << "one BlockGrads per block";
  ForEachGradient(r.grads, [&](const std::string& key, const auto& g) {
    if (key == "embed") return;
    EXPECT_TRUE(MatchesCase(g, dir, c, "g_" + key, kModel, {"row", "column"}, {"mean_over_all"}))
        << "the gradient of " << key;
  });
  for (std::size_t l = 0; l < r.grads.blocks.size(); ++l) {
    EXPECT_TRUE(MatchesCase(r.grads.blocks[l].dx, dir, c, "g_" + std::to_string(l) + "_dx",
                            kModel, {"token", "column"}))
        << "blocks[" << l << "].dx: dLoss/dx_" << l << ", block " << l << "'s input";
  }
}

// clip_grad_norm of the case's gradients to <c>_clip_max_norm against
// torch.nn.utils.clip_grad_norm_: the norm before, every scaled gradient, and
// the dx fields left as they were.
inline void ExpectClipMatchesTorch(const std::string& dir, const std::string& c, int n_layers) {
  SCOPED_TRACE(dir + c);
  GptGrads g = CaseGrads(dir, c, n_layers);
  const GptGrads before = g;
  const double norm = clip_grad_norm(g, Golden<1>(dir, c, "clip_max_norm")(0));
  EXPECT_TRUE(MatchesCase(Tensor1{float(norm)}, dir, c, "clip_norm", kRowOp, {"norm"}))
      << "the global L2 norm of every parameter gradient, before clipping";
  ASSERT_EQ(g.blocks.size(), before.blocks.size());
  ForEachGradient(g, [&](const std::string& key, const auto& t) {
    EXPECT_TRUE(MatchesCase(t, dir, c, "clip_" + key, kRowOp, {"row", "column"},
                            {"clip_per_tensor"})) << key;
  });
  for (std::size_t l = 0; l < g.blocks.size(); ++l) {
    EXPECT_TRUE(AllClose(g.blocks[l].dx, before.blocks[l].dx, kExact, {"token", "column"}))
        << "blocks[" << l << "].dx is not a parameter: neither counted nor scaled";
  }
}

// clip_grad_norm of the case's gradients to a max_norm far above their norm:
// the norm is still returned, and every gradient is left as it was.
inline void ExpectClipLeavesSmallGradients(const std::string& dir, const std::string& c,
                                           int n_layers) {
  SCOPED_TRACE(dir + c);
  GptGrads g = CaseGrads(dir, c, n_layers);
  const double norm = clip_grad_norm(g, 1e3);
  EXPECT_TRUE(MatchesCase(Tensor1{float(norm)}, dir, c, "clip_norm", kRowOp, {"norm"}))
      << "the norm is returned whether or not it is above max_norm";
  ForEachGradient(g, [&](const std::string& key, const auto& t) {
    EXPECT_TRUE(MatchesCase(t, dir, c, "g_" + key, kExact, {"row", "column"}))
        << key << ": a norm under max_norm leaves every gradient as it was";
  });
}

// learning_rate_at at every step of <c>_steps with <c>_args.
inline void ExpectScheduleMatches(const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Tensor1 args = Golden<1>(dir, c, "args");
  const std::vector<int> steps = GoldenIds(dir, c, "steps");
  Tensor1 lr = xt::zeros<float>({steps.size()});
  for (std::size_t i = 0; i < steps.size(); ++i) {
    lr(i) = float(learning_rate_at(steps[i], args(0), args(1), int(args(2)), int(args(3))));
  }
  EXPECT_TRUE(MatchesCase(lr, dir, c, "lr", kRowOp, {"step"}))
      << "max_lr " << args(0) << ", min_lr " << args(1) << ", warmup " << args(2) << ", total "
      << args(3);
}

// AdamW(model, <c>_adamw_config) stepped with <c>_adamw_grads_<k> at the
// rates of <c>_adamw_lr against torch.optim.AdamW after every step.
inline void ExpectAdamWMatchesTorch(MiniGpt model, const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Tensor1 config = Golden<1>(dir, c, "adamw_config"), lr = Golden<1>(dir, c, "adamw_lr");
  AdamW optimiser(model, AdamWConfig{config(0), config(1), config(2), config(3)});
  for (std::size_t k = 1; k <= lr.size(); ++k) {
    const std::string n = std::to_string(k);
    optimiser.step(model, GradsFromFlat(model, Golden<1>(dir, c, "adamw_grads_" + n)), lr(k - 1));
    EXPECT_EQ(optimiser.steps(), static_cast<int>(k));
    const Tensor1 theta = Flatten(model);
    EXPECT_TRUE(MatchesCase(theta, dir, c, "adamw_theta_" + n, kRowOp, {"parameter element"},
                            {"decay_all", "no_bias_correction"}))
        << "after step " << k << "; "
        << DifferingParameters(model, theta, Golden<1>(dir, c, "adamw_theta_" + n), kRowOp);
  }
}

// sample_token for every (temperature, top_k) of <c>_settings and every u of
// <c>_u against the NumPy sampler; ties at the k-th logit kept high are named.
inline void ExpectSamplingMatchesNumpy(const std::string& dir, const std::string& c) {
  SCOPED_TRACE(dir + c);
  const Tensor1 logits = Golden<1>(dir, c, "logits"), us = Golden<1>(dir, c, "u");
  const Tensor2 settings = Golden<2>(dir, c, "settings");
  Tensor2 ids = xt::zeros<float>({settings.shape(0), us.size()});
  for (std::size_t i = 0; i < settings.shape(0); ++i) {
    const Sampling s{settings(i, 0), int(settings(i, 1))};
    for (std::size_t j = 0; j < us.size(); ++j) ids(i, j) = float(sample_token(logits, s, us(j)));
  }
  EXPECT_TRUE(MatchesCase(ids, dir, c, "ids", kExact, {"setting", "u"}, {"topk_ties_high"}))
      << "settings (temperature, top_k) by row, u by column as in the golden files";
}

// A GptDecoder fed the case's inputs in chunks of the given sizes: the rows
// of its steps are the model's logits (torch's), its length the tokens fed,
// its caches (n_heads, length, d_head).
inline void ExpectDecoderMatchesTorch(const MiniGpt& model, const std::string& dir,
                                      const std::string& c, const std::vector<int>& chunks) {
  const std::vector<int> tokens = GoldenIds(dir, c, "inputs");
  std::string sizes;
  for (int t : chunks) sizes += std::to_string(t) + " ";
  SCOPED_TRACE(dir + c + ", chunks of " + sizes);
  ASSERT_EQ(std::accumulate(chunks.begin(), chunks.end(), std::size_t{0}), tokens.size());
  GptDecoder decoder(model, model.max_len);
  Tensor2 rows = xt::zeros<float>({tokens.size(), std::size_t(model.vocab)});
  std::size_t P = 0;
  for (int t : chunks) {
    const std::vector<int> fresh(tokens.begin() + P, tokens.begin() + P + t);
    const Tensor2 y = decoder.step(fresh);
    ASSERT_EQ(y.shape(0), std::size_t(t)) << "one row per new token";
    ASSERT_EQ(y.shape(1), std::size_t(model.vocab)) << "a row is a logit per token of the vocab";
    xt::view(rows, xt::range(P, P + t), xt::all()) = y;
    P += t;
    EXPECT_EQ(decoder.length(), static_cast<int>(P)) << "length(): the tokens fed so far";
  }
  EXPECT_TRUE(MatchesCase(rows, dir, c, "logits", kModel, kTokenLogit,
                          {"cached_keys_rotated_again"}));
  for (int l = 0; l < model.n_layers; ++l) {
    const Tensor3 keys = decoder.cache(l).keys();
    EXPECT_EQ(keys.shape(0), std::size_t(model.n_heads)) << "cache(" << l << ")";
    EXPECT_EQ(keys.shape(1), P) << "cache(" << l << ") holds every token fed";
  }
}

// generate with the setting <c>_gen_<i>_setting (temperature, top_k,
// max_new_tokens, eos, seed) on <c>_gen_<i>_prompt: the NumPy sampler's
// tokens, with the same NumpyRng(seed).random() draws.
inline void ExpectGenerateMatchesNumpy(const MiniGpt& model, const std::string& dir,
                                       const std::string& c, int i) {
  const std::string g = "gen_" + std::to_string(i) + "_";
  const Tensor1 s = Golden<1>(dir, c, g + "setting");
  SCOPED_TRACE(dir + c + "_" + g + ": temperature " + std::to_string(s(0)) + ", top_k " +
               std::to_string(int(s(1))) + ", max_new_tokens " + std::to_string(int(s(2))) +
               ", eos " + std::to_string(int(s(3))) + ", seed " + std::to_string(int(s(4))));
  const std::vector<int> out = generate(model, GoldenIds(dir, c, g + "prompt"), int(s(2)),
                                        Sampling{s(0), int(s(1))}, int(s(3)),
                                        static_cast<std::uint64_t>(s(4)));
  EXPECT_EQ(out, GoldenIds(dir, c, g + "tokens"))
      << "one draw u = NumpyRng(seed).random() per new token; stop after eos, after "
         "max_new_tokens, or at max_len tokens in all";
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_
