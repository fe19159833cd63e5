// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/13_induction_heads/remote.h"

namespace mha {
MHA_REMOTE_CONSTRUCTOR(AttentionOnlyTransformer,
                       (int vocab, int max_len, int d_model, int n_heads, int n_layers,
                        std::uint64_t seed),
                       (vocab, max_len, d_model, n_heads, n_layers, seed))
MHA_REMOTE_CONST_METHOD(AttentionOnlyTransformer, Tensor2, logits,
                        (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_CONST_METHOD(AttentionOnlyTransformer, std::vector<Tensor3>, attention_weights,
                        (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_FUNCTION(LossAndGrads, loss_and_grads,
                    (const AttentionOnlyTransformer& model, const std::vector<int>& inputs,
                     const std::vector<int>& targets),
                    (model, inputs, targets))
MHA_REMOTE_FUNCTION(Composition, composition_scores,
                    (const MultiHeadAttention& earlier, const MultiHeadAttention& later),
                    (earlier, later))
}  // namespace mha
