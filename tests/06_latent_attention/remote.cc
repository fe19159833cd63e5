// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/06_latent_attention/remote.h"

namespace mha {
MHA_REMOTE_CONSTRUCTOR(MultiHeadLatentAttention,
                       (int d_model, int n_heads, int kv_rank, std::uint64_t seed),
                       (d_model, n_heads, kv_rank, seed))
MHA_REMOTE_CONST_METHOD(MultiHeadLatentAttention, Tensor2, compress, (const Tensor2& x), (x))
MHA_REMOTE_CONST_METHOD(MultiHeadLatentAttention, Tensor2, forward,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_CONST_METHOD(MultiHeadLatentAttention, Tensor2, forward_absorbed,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_CONST_METHOD(MultiHeadLatentAttention, std::size_t, parameter_count, (), ())
MHA_REMOTE_CONST_METHOD(MultiHeadLatentAttention, std::size_t, kv_cache_floats_per_token, (), ())
}  // namespace mha
