// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
//
// (First version, with the header: the model, the loss and gradients, the
// schedule and sampling. cross_entropy's output argument, clip_grad_norm's
// in-place gradients, AdamW, GptDecoder and generate come with the tests.)
#include "tests/15_mini_gpt/remote.h"

namespace mha {
MHA_REMOTE_CONSTRUCTOR(MiniGpt,
                       (int vocab, int max_len, int d_model, int n_heads, int d_ff, int n_layers,
                        std::uint64_t seed, double base),
                       (vocab, max_len, d_model, n_heads, d_ff, n_layers, seed, base))
MHA_REMOTE_CONST_METHOD(MiniGpt, Tensor2, logits, (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_CONST_METHOD(MiniGpt, std::vector<Tensor3>, attention_weights,
                        (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_CONST_METHOD(MiniGpt, std::size_t, parameter_count, (), ())
MHA_REMOTE_FUNCTION(GptLossAndGrads, gpt_loss_and_grads,
                    (const MiniGpt& model, const std::vector<int>& inputs,
                     const std::vector<int>& targets),
                    (model, inputs, targets))
MHA_REMOTE_FUNCTION(double, learning_rate_at,
                    (int step, double max_lr, double min_lr, int warmup, int total),
                    (step, max_lr, min_lr, warmup, total))
MHA_REMOTE_FUNCTION(int, sample_token,
                    (const Tensor1& logits, const Sampling& sampling, double u),
                    (logits, sampling, u))
}  // namespace mha
