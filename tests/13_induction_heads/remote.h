// How lab 13's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_13_INDUCTION_HEADS_REMOTE_H_
#define MHA_TESTS_13_INDUCTION_HEADS_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/13_induction_heads/induction_heads.h"
#include "tests/03_output_projection/remote.h"

namespace mha {
// The model travels whole: sizes, embeddings and every layer (a
// std::vector<MultiHeadAttention>, each layer as lab 3 sends it).
MHA_REMOTE_STATE(AttentionOnlyTransformer, vocab, max_len, d_model, n_heads, n_layers, embed,
                 pos, layers, unembed)
MHA_REMOTE_STATE(LayerGrads, dW_Q, dW_K, dW_V, dW_O)
MHA_REMOTE_STATE(TransformerGrads, d_embed, d_pos, d_unembed, layers)
MHA_REMOTE_STATE(LossAndGrads, loss, grads)
MHA_REMOTE_STATE(Composition, q, k, v)
}  // namespace mha

#endif  // MHA_TESTS_13_INDUCTION_HEADS_REMOTE_H_
