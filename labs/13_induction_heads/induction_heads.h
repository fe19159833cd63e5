// Lab 13: two layers grow an induction head.
//
// One layer of heads can only look at tokens; a head in a second layer can
// look at what a first-layer head wrote into the residual stream. That
// composition is how a two-layer attention-only model learns to continue a
// sequence it has seen before (an induction head: find the previous
// occurrence of the current token, copy the token that followed it).
//
// The model (no MLP, no layer norm):
//
//   x_0     = embed[tokens] + pos[0:T]                          (T, d_model)
//   x_{l+1} = x_l + layers[l].forward(x_l, causal_mask(T))       (T, d_model)  residual
//   logits  = x_L @ unembed                                       (T, vocab)
//
// Every layer reads the whole residual stream x_l and adds its output to it:
// the stream is the memory that all heads share.
//
// loss_and_grads: the mean cross-entropy of the logits over the scored
// positions, and its gradient with respect to every weight. The residual
// makes the backward fork at each layer: with g_{l+1} = dL/dx_{l+1},
//
//   g_l = g_{l+1} + mha_backward(layers[l], x_l, causal, g_{l+1}).dx
//
// (around the layer, and through it). g_0 then goes to the rows of embed
// that the tokens picked and to the first T rows of pos.
//
// composition_scores: how strongly a head b of a later layer reads what a
// head a of an earlier layer writes (Elhage et al., 2021), from the weights
// alone. With head h's column block of W_Q, W_K, W_V and row block of W_O
// (columns and rows [h * d_head, (h + 1) * d_head)):
//
//   W_OV^h = W_V[:, h] W_O[h, :]      (d_model, d_model): x_j @ W_OV^h is what h writes
//   W_QK^h = W_Q[:, h] W_K[:, h]^T    (d_model, d_model): score_ij = x_i W_QK^h x_j^T
//   q(b, a) = ||W_OV^a W_QK^b||_F     / (||W_OV^a||_F ||W_QK^b||_F)   a's output feeds b's queries
//   k(b, a) = ||W_QK^b (W_OV^a)^T||_F / (||W_QK^b||_F ||W_OV^a||_F)   a's output feeds b's keys
//   v(b, a) = ||W_OV^a W_OV^b||_F     / (||W_OV^a||_F ||W_OV^b||_F)   a's output feeds b's values
//
// The formulas are for row vectors, x @ W, as in every lab (papers that use
// column vectors write the transposes). A head whose W_OV or W_QK is all
// zero gives 0, not NaN. Each score lies in [0, 1].
//
// The weights are public: a test may overwrite them, and every later call
// must use the new values. Nothing is cached.
//
// Bad arguments throw std::invalid_argument naming the offending values.
//
// Lesson: docs/13_induction_heads.md.
#ifndef MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_H_
#define MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_H_

#include <cstdint>
#include <vector>

#include "common/tensor.h"
#include "labs/03_output_projection/multi_head_attention.h"

namespace mha {

class AttentionOnlyTransformer {
 public:
  // From NumpyRng(seed + 1), in this order: embed = normal_matrix(vocab, d_model, 1),
  // pos = normal_matrix(max_len, d_model, 1), unembed = normal_matrix(d_model, vocab, d_model).
  // layers[l] = MultiHeadAttention(d_model, n_heads, seed + 1000 * l).
  // Sizes < 1 (n_layers included): std::invalid_argument, as d_model % n_heads != 0.
  AttentionOnlyTransformer(int vocab, int max_len, int d_model, int n_heads, int n_layers,
                           std::uint64_t seed = 0);
  // tokens: 1 <= T <= max_len ids in [0, vocab); otherwise std::invalid_argument.
  Tensor2 logits(const std::vector<int>& tokens) const;  // (T, vocab)
  // The attention weights of every layer on `tokens`, each (n_heads, T, T):
  // layer l's are those of layers[l].attend(x_l, causal_mask(T)).
  std::vector<Tensor3> attention_weights(const std::vector<int>& tokens) const;
  int vocab, max_len, d_model, n_heads, n_layers;
  Tensor2 embed;    // (vocab, d_model)
  Tensor2 pos;      // (max_len, d_model)
  std::vector<MultiHeadAttention> layers;
  Tensor2 unembed;  // (d_model, vocab)

 private:
  // Lets the grader copy a model between processes (common/grading/remote.h).
  friend struct remote::Access;
  AttentionOnlyTransformer() = default;
};

struct LayerGrads {
  Tensor2 dW_Q, dW_K, dW_V, dW_O;  // (d_model, d_model) each
};
struct TransformerGrads {
  Tensor2 d_embed, d_pos, d_unembed;  // shaped like embed, pos, unembed
  std::vector<LayerGrads> layers;     // one per layer
};
struct LossAndGrads {
  double loss;  // mean over positions t with targets[t] >= 0 of -ln softmax(logits[t])[targets[t]]
  TransformerGrads grads;  // the gradient of that loss with respect to every weight
};

// inputs and targets of equal length T (1 <= T <= max_len); targets in [-1, vocab),
// -1 meaning "not scored"; at least one target scored. Otherwise, or a token out of
// range: std::invalid_argument. Rows of d_embed of tokens absent from inputs, and
// rows t >= T of d_pos, are zero.
LossAndGrads loss_and_grads(const AttentionOnlyTransformer& model, const std::vector<int>& inputs,
                            const std::vector<int>& targets);

struct Composition {
  Tensor2 q, k, v;  // each (later.n_heads, earlier.n_heads): row b, column a
};
// The Q-, K- and V-composition scores of every head b of `later` with every
// head a of `earlier` (formulas above). Layers of different d_model:
// std::invalid_argument.
Composition composition_scores(const MultiHeadAttention& earlier, const MultiHeadAttention& later);

}  // namespace mha

#endif  // MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_H_
