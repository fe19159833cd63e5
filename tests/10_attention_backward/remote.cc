// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/10_attention_backward/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(AttentionGrads, attention_backward,
                    (const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask, const Tensor3& d_output),
                    (q, k, v, mask, d_output))
MHA_REMOTE_FUNCTION(MhaGrads, mha_backward,
                    (const MultiHeadAttention& layer, const Tensor2& x,
                     const std::optional<Tensor2>& mask, const Tensor2& d_y),
                    (layer, x, mask, d_y))
}  // namespace mha
