// How lab 11's types travel between processes (common/grading/remote.h). A decoder
// travels with the layer it points to, so every step sees the layer's
// current weights; the cache travels whole (lab 8's KVCache).
#ifndef MHA_TESTS_11_ROTARY_EMBEDDINGS_REMOTE_H_
#define MHA_TESTS_11_ROTARY_EMBEDDINGS_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"
#include "tests/08_kv_cache/remote.h"

namespace mha {
MHA_REMOTE_STATE(RotaryAttention, d_model, n_heads, d_head, base, W_Q, W_K, W_V, W_O)
MHA_REMOTE_STATE(RotaryDecoder, layer_, cache_)
}  // namespace mha

#endif  // MHA_TESTS_11_ROTARY_EMBEDDINGS_REMOTE_H_
