// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/12_variant_backward/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(GqaGrads, gqa_backward,
                    (const GroupedQueryAttention& layer, const Tensor2& x,
                     const std::optional<Tensor2>& mask, const Tensor2& d_y),
                    (layer, x, mask, d_y))
MHA_REMOTE_FUNCTION(MlaGrads, mla_backward,
                    (const MultiHeadLatentAttention& layer, const Tensor2& x,
                     const std::optional<Tensor2>& mask, const Tensor2& d_y),
                    (layer, x, mask, d_y))
}  // namespace mha
