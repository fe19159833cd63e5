// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "common/grading/remote.h"
#include "labs/01_split_heads/split_heads.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor3, split_heads, (const Tensor2& x, int n_heads), (x, n_heads))
MHA_REMOTE_FUNCTION(Tensor2, combine_heads, (const Tensor3& heads), (heads))
}  // namespace mha
