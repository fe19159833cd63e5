// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/03_output_projection/remote.h"

namespace mha {
MHA_REMOTE_CONSTRUCTOR(MultiHeadAttention, (int d_model, int n_heads, std::uint64_t seed),
                       (d_model, n_heads, seed))
MHA_REMOTE_CONST_METHOD(MultiHeadAttention, Tensor2, forward,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_CONST_METHOD(MultiHeadAttention, AttentionResult, attend,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_CONST_METHOD(MultiHeadAttention, std::size_t, parameter_count, (), ())
}  // namespace mha
