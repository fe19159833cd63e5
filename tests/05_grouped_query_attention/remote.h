// How lab 5's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_05_GROUPED_QUERY_ATTENTION_REMOTE_H_
#define MHA_TESTS_05_GROUPED_QUERY_ATTENTION_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

namespace mha {
MHA_REMOTE_STATE(GroupedQueryAttention, d_model, n_heads, n_kv_heads, d_head, W_Q, W_K, W_V,
                 W_O)
}  // namespace mha

#endif  // MHA_TESTS_05_GROUPED_QUERY_ATTENTION_REMOTE_H_
