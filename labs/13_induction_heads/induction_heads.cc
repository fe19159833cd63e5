// Lab 13: Two layers grow an induction head. This is the file you edit.
// Read docs/13_induction_heads.md first; the header labs/13_induction_heads/induction_heads.h
// says what each function must do.
// Check your work with:  bazel test //labs/13_induction_heads/...
#include "labs/13_induction_heads/induction_heads.h"

#include <stdexcept>

// NumpyRng (common/rng.h): the constructor draws embed, pos and unembed with it.
#include "common/rng.h"

// What you may call from earlier labs: MultiHeadAttention's constructor,
// forward and attend (lab 3), causal_mask (lab 4) and mha_backward (lab 10).
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {

// (The parameters end in _ so that they do not shadow the members they set.)
AttentionOnlyTransformer::AttentionOnlyTransformer(int vocab_, int max_len_, int d_model_,
                                                   int n_heads_, int n_layers_,
                                                   std::uint64_t seed) {
  // TODO:
  // 1. Reject sizes < 1 and d_model % n_heads != 0, naming the values.
  // 2. Store the sizes; draw embed, pos, unembed from NumpyRng(seed + 1) in that order.
  // 3. layers[l] = MultiHeadAttention(d_model, n_heads, seed + 1000 * l).
  (void)vocab_, (void)max_len_, (void)d_model_, (void)n_heads_, (void)n_layers_, (void)seed;
  throw std::logic_error(
      "lab 13: AttentionOnlyTransformer is not implemented yet, see docs/13_induction_heads.md");
}

Tensor2 AttentionOnlyTransformer::logits(const std::vector<int>& tokens) const {
  // TODO: x = embed[tokens] + pos[0:T]; x = x + layer.forward(x, causal) for each layer;
  // return x @ unembed, (T, vocab).
  (void)tokens;
  throw std::logic_error(
      "lab 13: AttentionOnlyTransformer::logits is not implemented yet, see "
      "docs/13_induction_heads.md");
}

std::vector<Tensor3> AttentionOnlyTransformer::attention_weights(
    const std::vector<int>& tokens) const {
  // TODO: the same residual stream; layer l's weights come from attend(x_l, causal).
  (void)tokens;
  throw std::logic_error(
      "lab 13: AttentionOnlyTransformer::attention_weights is not implemented yet, see "
      "docs/13_induction_heads.md");
}

LossAndGrads loss_and_grads(const AttentionOnlyTransformer& model, const std::vector<int>& inputs,
                            const std::vector<int>& targets) {
  // TODO:
  // 1. Check the arguments.
  // 2. Forward, keeping each layer's input x_l; logits; mean cross-entropy over scored rows.
  // 3. Backward: d_logits, then down the stack g_l = g_{l+1} + mha_backward(...).dx;
  //    finally embed's rows and pos's rows.
  (void)model, (void)inputs, (void)targets;
  throw std::logic_error(
      "lab 13: loss_and_grads is not implemented yet, see docs/13_induction_heads.md");
}

Composition composition_scores(const MultiHeadAttention& earlier,
                               const MultiHeadAttention& later) {
  // TODO: per head, W_OV and W_QK from the weight blocks; the three normalised
  // Frobenius norms; 0 where a circuit is all zero.
  (void)earlier, (void)later;
  throw std::logic_error(
      "lab 13: composition_scores is not implemented yet, see docs/13_induction_heads.md");
}

}  // namespace mha
