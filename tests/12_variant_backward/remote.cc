// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/remote.h). Declare every function and method of the
// header here; lab_remote() in BUILD compiles it as client and as server.
#include "common/remote.h"
#include "labs/12_variant_backward/variant_backward.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor2, variant_backward, (const Tensor2& x), (x))
}  // namespace mha
