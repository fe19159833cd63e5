// How lab 3's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_03_OUTPUT_PROJECTION_REMOTE_H_
#define MHA_TESTS_03_OUTPUT_PROJECTION_REMOTE_H_

#include "labs/03_output_projection/multi_head_attention.h"
#include "tests/02_batched_attention/remote.h"

namespace mha {
MHA_REMOTE_STATE(MultiHeadAttention, d_model, n_heads, d_head, W_Q, W_K, W_V, W_O)
}  // namespace mha

#endif  // MHA_TESTS_03_OUTPUT_PROJECTION_REMOTE_H_
