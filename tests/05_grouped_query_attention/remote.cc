// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/05_grouped_query_attention/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor3, repeat_kv, (const Tensor3& kv, int n_heads), (kv, n_heads))
MHA_REMOTE_CONSTRUCTOR(GroupedQueryAttention,
                       (int d_model, int n_heads, int n_kv_heads, std::uint64_t seed),
                       (d_model, n_heads, n_kv_heads, seed))
MHA_REMOTE_CONST_METHOD(GroupedQueryAttention, Tensor2, forward,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_CONST_METHOD(GroupedQueryAttention, std::size_t, parameter_count, (), ())
MHA_REMOTE_CONST_METHOD(GroupedQueryAttention, std::size_t, kv_cache_floats_per_token, (), ())
}  // namespace mha
