// How lab 6's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_06_LATENT_ATTENTION_REMOTE_H_
#define MHA_TESTS_06_LATENT_ATTENTION_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {
MHA_REMOTE_STATE(MultiHeadLatentAttention, d_model, n_heads, kv_rank, d_head, W_Q, W_DKV, W_UK,
                 W_UV, W_O)
}  // namespace mha

#endif  // MHA_TESTS_06_LATENT_ATTENTION_REMOTE_H_
