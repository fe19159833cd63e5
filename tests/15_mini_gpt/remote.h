// How lab 15's types travel between processes (common/grading/remote.h). The
// model travels whole: its sizes, embed, its blocks (as lab 14 sends them)
// and the final LayerNorm. An optimiser travels with its moments; a decoder
// with the model it points to and its RotaryDecoders (lab 11's: each with the
// block's attention and its cache).
#ifndef MHA_TESTS_15_MINI_GPT_REMOTE_H_
#define MHA_TESTS_15_MINI_GPT_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/15_mini_gpt/mini_gpt.h"
#include "tests/14_transformer_block/remote.h"

namespace mha {
MHA_REMOTE_STATE(MiniGpt, vocab, max_len, d_model, n_heads, d_ff, n_layers, base, embed, blocks,
                 lnf_gamma, lnf_beta)
MHA_REMOTE_STATE(GptGrads, d_embed, blocks, d_lnf_gamma, d_lnf_beta)
MHA_REMOTE_STATE(GptLossAndGrads, loss, scored, grads)
MHA_REMOTE_STATE(AdamWConfig, beta1, beta2, eps, weight_decay)
MHA_REMOTE_STATE(AdamW, config_, steps_, m_, v_)
MHA_REMOTE_STATE(Sampling, temperature, top_k)
MHA_REMOTE_STATE(GptDecoder, model_, attention_, length_)
}  // namespace mha

#endif  // MHA_TESTS_15_MINI_GPT_REMOTE_H_
