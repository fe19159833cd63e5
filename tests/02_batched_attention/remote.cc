// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/02_batched_attention/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor2, softmax_rows, (const Tensor2& scores), (scores))
MHA_REMOTE_FUNCTION(AttentionResult, attention_loop,
                    (const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask),
                    (q, k, v, mask))
MHA_REMOTE_FUNCTION(AttentionResult, attention_batched,
                    (const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask),
                    (q, k, v, mask))
}  // namespace mha
