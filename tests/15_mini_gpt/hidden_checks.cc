#include "tests/15_mini_gpt/hidden_checks.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "tests/15_mini_gpt/reference.h"
#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace hidden {
namespace {

using reference::D2;
using testing::AllClose;
using testing::kModel;

template <class T, std::size_t N>
xt::xtensor<float, N> Float(const xt::xtensor<T, N>& t) {
  return xt::cast<float>(t);
}

}  // namespace

MiniGpt SeededModel(const testing::Sizes& s, std::optional<std::uint64_t> moved_seed) {
  MiniGpt model = testing::Construct(s);
  seeded::InstallMiniGpt(model, s.vocab, s.max_len, s.d_model, s.n_heads, s.d_ff, s.n_layers,
                         s.seed, s.base);
  if (moved_seed) {
    std::mt19937_64 gen(*moved_seed);
    std::normal_distribution<float> z(0.0f, 0.3f);
    testing::ForEachParameter(model, [&](const std::string& key, auto& t) {
      if (t.dimension() != 1) return;
      const float centre = key.find("gamma") != std::string::npos ? 1.0f : 0.0f;
      for (float& v : t) v = centre + z(gen);
    });
  }
  return model;
}

MiniGpt SmallModel() { return testing::CaseModel(kGolden, "small"); }
MiniGpt MiniModel() { return SeededModel(kMiniSizes); }

testing::Sizes RandomSizes(testing::FreshDraws& gen) {
  // (d_model 4 at least: a LayerNorm over 2 features turns nearly equal
  // features into a sign, too steep a function for finite differences.)
  const int H = gen.Pick(1, 3), d_head = H == 1 ? 4 : 2 * gen.Pick(1, 2);
  return {gen.Pick(3, 9), gen.Pick(4, 8), H * d_head, H, gen.Pick(2, 10), gen.Pick(1, 3),
          gen() % 100000, gen.Pick(0, 1) == 0 ? 10000.0 : 100.0};
}

std::vector<int> RandomIds(testing::FreshDraws& gen, int n, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int& id : ids) id = gen.Pick(0, vocab - 1);
  return ids;
}

void ExpectForwardMatchesReference(const MiniGpt& model, const std::vector<int>& tokens) {
  std::vector<reference::D3> weights;
  const D2 logits = reference::Logits(reference::FromModel(model), tokens, &weights);
  EXPECT_TRUE(AllClose(model.logits(tokens), Float(logits), kModel, testing::kTokenLogit))
      << "logits" << kSeeDoc;
  const std::vector<Tensor3> w = model.attention_weights(tokens);
  ASSERT_EQ(w.size(), weights.size()) << "one (n_heads, T, T) tensor per block";
  for (std::size_t l = 0; l < w.size(); ++l) {
    EXPECT_TRUE(AllClose(w[l], Float(weights[l]), kModel, {"head", "query", "key"}))
        << "attention weights of block " << l << kSeeDoc;
  }
}

void ExpectGradsMatchFiniteDifferences(const MiniGpt& model, const std::vector<int>& inputs,
                                       const std::vector<int>& targets) {
  const GptLossAndGrads r = gpt_loss_and_grads(model, inputs, targets);
  reference::Gpt m = reference::FromModel(model);
  auto loss = [&] { return reference::Loss(m, inputs, targets); };
  EXPECT_TRUE(AllClose(Tensor1{float(r.loss)}, Tensor1{float(loss())}, kModel, {"loss"}))
      << "loss" << kSeeDoc;
  ASSERT_EQ(r.grads.blocks.size(), m.blocks.size()) << "one BlockGrads per block";
  // Each parameter of the reference, in the order of testing::ForEachGradient.
  std::vector<reference::D1*> vectors;
  std::vector<D2*> matrices;
  matrices.push_back(&m.embed);
  for (reference::Block& b : m.blocks) {
    vectors.insert(vectors.end(), {&b.ln1_gamma, &b.ln1_beta, &b.ln2_gamma, &b.ln2_beta, &b.b_1,
                                   &b.b_2});
    matrices.insert(matrices.end(), {&b.W_Q, &b.W_K, &b.W_V, &b.W_O, &b.W_1, &b.W_2});
  }
  vectors.insert(vectors.end(), {&m.lnf_gamma, &m.lnf_beta});
  std::size_t v = 0, w = 0;
  testing::ForEachGradient(r.grads, [&](const std::string& key, const auto& g) {
    if (g.dimension() == 1) {
      const Tensor1 fd = Float(naive::CentralDifferences(*vectors[v++], loss));
      EXPECT_TRUE(AllClose(g, fd, kModel, {"element"})) << "the gradient of " << key << kSeeDoc;
    } else {
      const Tensor2 fd = Float(naive::CentralDifferences(*matrices[w++], loss));
      EXPECT_TRUE(AllClose(g, fd, kModel, {"row", "column"}))
          << "the gradient of " << key << kSeeDoc;
    }
  });
}

void ExpectRowsOfTheLogits(const Tensor2& rows, const MiniGpt& model,
                           const std::vector<int>& tokens, std::size_t from,
                           const std::string& what) {
  const D2 all = reference::Logits(reference::FromModel(model), tokens);
  const D2 expected = xt::view(all, xt::range(from, from + rows.shape(0)), xt::all());
  EXPECT_TRUE(AllClose(rows, Float(expected), kModel, testing::kTokenLogit)) << what << kSeeDoc;
}

void ExpectClipAndAdamWMatchTheReference(testing::FreshDraws& gen) {
  MiniGpt model = SeededModel(RandomSizes(gen), gen());
  const Tensor1 start = testing::Flatten(model);
  const std::vector<double> theta0(start.begin(), start.end());
  std::vector<bool> decayed;  // per element: does it belong to a matrix?
  testing::ForEachParameter(model, [&](const std::string&, const auto& t) {
    decayed.insert(decayed.end(), t.size(), t.dimension() == 2);
  });
  const float b1 = 0.5f + 0.1f * gen.Pick(0, 4), b2 = 0.9f + 0.01f * gen.Pick(0, 9);
  const float wd = 0.1f * gen.Pick(0, 3), max_norm = 0.5f * gen.Pick(1, 4);
  const float eps = AdamWConfig{}.eps;
  SCOPED_TRACE("beta1 " + std::to_string(b1) + ", beta2 " + std::to_string(b2) +
               ", weight decay " + std::to_string(wd) + ", max_norm " + std::to_string(max_norm));
  AdamW optimiser(model, AdamWConfig{b1, b2, eps, wd});
  std::vector<std::vector<double>> grads;
  std::vector<double> lrs;
  for (int k = 0; k < 3; ++k) {
    const Tensor2 g = testing::RandomTensor2(1, theta0.size(), static_cast<std::uint32_t>(gen()));
    GptGrads clipped = testing::GradsFromFlat(model, xt::view(g, 0, xt::all()));
    double sum = 0.0;
    for (float x : g) sum += double(x) * x;
    const double norm = std::sqrt(sum), scale = std::min(1.0, max_norm / (norm + 1e-6));
    EXPECT_TRUE(AllClose(Tensor1{float(clip_grad_norm(clipped, max_norm))}, Tensor1{float(norm)},
                         testing::kRowOp, {"norm"}))
        << "clip_grad_norm's norm" << kSeeDoc;
    grads.emplace_back(g.begin(), g.end());
    for (double& x : grads.back()) x *= scale;
    lrs.push_back(0.01 * gen.Pick(1, 5));
    optimiser.step(model, clipped, float(lrs.back()));
  }
  const std::vector<double> after =
      reference::AdamWSteps(theta0, decayed, grads, lrs, b1, b2, eps, wd).back();
  const Tensor1 expected = xt::cast<float>(xt::adapt(after, {after.size()}));
  const Tensor1 theta = testing::Flatten(model);
  EXPECT_TRUE(AllClose(theta, expected, testing::kRowOp, {"parameter element"}))
      << testing::DifferingParameters(model, theta, expected, testing::kRowOp) << kSeeDoc;
}

}  // namespace hidden
}  // namespace mha
