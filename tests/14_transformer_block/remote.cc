// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/14_transformer_block/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor2, layer_norm,
                    (const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps),
                    (x, gamma, beta, eps))
MHA_REMOTE_FUNCTION(LayerNormGrads, layer_norm_backward,
                    (const Tensor2& x, const Tensor1& gamma, float eps, const Tensor2& dy),
                    (x, gamma, eps, dy))
MHA_REMOTE_FUNCTION(Tensor2, gelu, (const Tensor2& x), (x))
MHA_REMOTE_FUNCTION(Tensor2, gelu_backward, (const Tensor2& x, const Tensor2& dy), (x, dy))

MHA_REMOTE_CONSTRUCTOR(FeedForward, (int d_model, int d_ff, std::uint64_t seed),
                       (d_model, d_ff, seed))
MHA_REMOTE_CONST_METHOD(FeedForward, Tensor2, forward, (const Tensor2& x), (x))
MHA_REMOTE_CONST_METHOD(FeedForward, std::size_t, parameter_count, (), ())
MHA_REMOTE_FUNCTION(FeedForwardGrads, feed_forward_backward,
                    (const FeedForward& ffn, const Tensor2& x, const Tensor2& dy), (ffn, x, dy))

MHA_REMOTE_FUNCTION(Tensor3, rope_backward, (const Tensor3& d_rotated, int start, double base),
                    (d_rotated, start, base))
MHA_REMOTE_FUNCTION(MhaGrads, rotary_attention_backward,
                    (const RotaryAttention& layer, const Tensor2& x,
                     const std::optional<Tensor2>& mask, const Tensor2& d_y),
                    (layer, x, mask, d_y))

MHA_REMOTE_CONSTRUCTOR(TransformerBlock,
                       (int d_model, int n_heads, int d_ff, std::uint64_t seed, double base),
                       (d_model, n_heads, d_ff, seed, base))
MHA_REMOTE_CONST_METHOD(TransformerBlock, Tensor2, forward, (const Tensor2& x), (x))
MHA_REMOTE_CONST_METHOD(TransformerBlock, Tensor3, attention_weights, (const Tensor2& x), (x))
MHA_REMOTE_CONST_METHOD(TransformerBlock, std::size_t, parameter_count, (), ())
MHA_REMOTE_FUNCTION(BlockGrads, block_backward,
                    (const TransformerBlock& block, const Tensor2& x, const Tensor2& dy),
                    (block, x, dy))
}  // namespace mha
