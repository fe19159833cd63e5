// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "tests/07_head_analysis/remote.h"

namespace mha {
MHA_REMOTE_FUNCTION(std::vector<HeadProfile>, profile_heads, (const Tensor3& weights), (weights))
MHA_REMOTE_FUNCTION(float, induction_score, (const Tensor2& head_weights, int block_len),
                    (head_weights, block_len))
MHA_REMOTE_FUNCTION(std::string, classify_head, (const HeadProfile& profile, float induction),
                    (profile, induction))
}  // namespace mha
