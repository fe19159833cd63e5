// How lab 14's types travel between processes (common/grading/remote.h). A
// block travels whole: its sizes, its LayerNorms' parameters, its rotary
// attention (as lab 11 sends it) and its FFN. Lab 15's model sends its blocks
// through this header.
#ifndef MHA_TESTS_14_TRANSFORMER_BLOCK_REMOTE_H_
#define MHA_TESTS_14_TRANSFORMER_BLOCK_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/14_transformer_block/transformer_block.h"
#include "tests/10_attention_backward/remote.h"
#include "tests/11_rotary_embeddings/remote.h"

namespace mha {
MHA_REMOTE_STATE(LayerNormGrads, dx, dgamma, dbeta)
MHA_REMOTE_STATE(FeedForward, d_model, d_ff, W_1, b_1, W_2, b_2)
MHA_REMOTE_STATE(FeedForwardGrads, dx, dW_1, db_1, dW_2, db_2)
MHA_REMOTE_STATE(TransformerBlock, d_model, n_heads, d_ff, ln1_gamma, ln1_beta, attn, ln2_gamma,
                 ln2_beta, ffn)
MHA_REMOTE_STATE(BlockGrads, dln1_gamma, dln1_beta, dW_Q, dW_K, dW_V, dW_O, dln2_gamma, dln2_beta,
                 dW_1, db_1, dW_2, db_2, dx)
}  // namespace mha

#endif  // MHA_TESTS_14_TRANSFORMER_BLOCK_REMOTE_H_
