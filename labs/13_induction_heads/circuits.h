// Which circuit does the induction? Helpers of grow_induction_heads (not part
// of the graded API): the model with rotary positions instead of `pos`, the
// random baseline of the composition scores, and path-specific ablations.
//
// Everything here runs on the learner's own labs: the learned-position model
// is lab 13's AttentionOnlyTransformer (logits, attention_weights,
// loss_and_grads); the rotary model is the same weights with `pos` left out
// and lab 11's apply_rope on every layer's queries and keys, its forward built
// from labs 1, 2 and 4 and its backward from lab 10's attention_backward.
#ifndef MHA_LABS_13_INDUCTION_HEADS_CIRCUITS_H_
#define MHA_LABS_13_INDUCTION_HEADS_CIRCUITS_H_

#include <string>
#include <vector>

#include "common/tensor.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace mha {

// Where the model gets positions from.
enum class Positions {
  kLearned,  // x_0 = embed[tokens] + pos[0:T], lab 13's model
  kRope,     // x_0 = embed[tokens]; every layer rotates its queries and keys (lab 11)
};
Positions parse_positions(const std::string& name);  // "learned" or "rope"

// The model's forward, attention and gradients with either kind of positions.
// With kRope, `pos` is never read and its gradient is zero.
Tensor2 model_logits(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                     Positions positions);  // (T, vocab)
std::vector<Tensor3> model_attention_weights(const AttentionOnlyTransformer& m,
                                             const std::vector<int>& tokens,
                                             Positions positions);  // per layer (H, T, T)
LossAndGrads model_loss_and_grads(const AttentionOnlyTransformer& m,
                                  const std::vector<int>& inputs,
                                  const std::vector<int>& targets, Positions positions);

// The composition scores of two independent random layers of this shape
// (lab 3's initialisation; the scores do not depend on the scale), averaged
// over every (b, a) entry of `pairs` pairs of layers: Elhage et al. (2021)
// subtract this level from a trained model's scores.
struct CompositionBaseline {
  double q, k, v;
};
CompositionBaseline random_composition_baseline(int d_model, int n_heads, int pairs);

// Path-specific ablation of a two-layer model: remove layer-1 head `head`'s
// output (all of it, or only what it moves from the position embeddings,
// A_h (pos W_V^h) W_O^h, or only what it moves from the token embeddings,
// A_h (embed[tokens] W_V^h) W_O^h) from the input of the layer-2 queries, keys
// or values only. The residual stream that reaches the unembedding keeps it,
// and so do the other two inputs of layer 2. Layer 1's attention pattern A_h is
// the intact one.
enum class Path { kQuery, kKey, kValue };
enum class Part { kWhole, kPosition, kToken };
const char* path_name(Path path);  // "queries", "keys", "values"
const char* part_name(Part part);  // "whole", "position", "token"
// (T, vocab). head < 0 removes nothing (the intact model, computed by this
// code's own forward: a check of it against model_logits).
Tensor2 ablated_logits(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                       Positions positions, int head, Path path, Part part);

}  // namespace mha

#endif  // MHA_LABS_13_INDUCTION_HEADS_CIRCUITS_H_
