// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "common/grading/remote.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor2, causal_mask, (int T), (T))
MHA_REMOTE_FUNCTION(Tensor2, causal_mask, (int T, int S), (T, S))
MHA_REMOTE_FUNCTION(Tensor2, padding_mask, (int T, const std::vector<bool>& key_valid),
                    (T, key_valid))
MHA_REMOTE_FUNCTION(Tensor2, combine_masks, (const Tensor2& a, const Tensor2& b), (a, b))
}  // namespace mha
