// An independent double-precision reference of lab 13's model, for the
// hidden tests: a plain forward (loops and small matrix products, no lab
// code), its loss, and the composition scores straight from the formulas.
// The gradient tests differentiate Loss by central differences.
#ifndef MHA_TESTS_13_INDUCTION_HEADS_REFERENCE_H_
#define MHA_TESTS_13_INDUCTION_HEADS_REFERENCE_H_

#include <vector>

#include <xtensor/xtensor.hpp>

#include "labs/13_induction_heads/induction_heads.h"

namespace mha {
namespace reference {

using D2 = xt::xtensor<double, 2>;
using D3 = xt::xtensor<double, 3>;

struct Layer {
  D2 W_Q, W_K, W_V, W_O;  // (d_model, d_model)
};
struct Model {
  int n_heads = 1;
  D2 embed, pos, unembed;
  std::vector<Layer> layers;
};

// The model's weights in double.
Model FromTransformer(const AttentionOnlyTransformer& model);
Layer FromLayer(const MultiHeadAttention& layer);

// (T, vocab) logits; `weights`, when given, receives each layer's (H, T, T).
D2 Logits(const Model& model, const std::vector<int>& tokens, std::vector<D3>* weights = nullptr);
// Mean cross-entropy over the positions with targets >= 0.
double Loss(const Model& model, const std::vector<int>& inputs, const std::vector<int>& targets);

struct Scores {
  D2 q, k, v;  // (later heads, earlier heads)
};
Scores Composition(const Layer& earlier, int earlier_heads, const Layer& later, int later_heads);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_13_INDUCTION_HEADS_REFERENCE_H_
