// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
#include "common/grading/remote.h"
#include "labs/09_flash_attention/flash_attention.h"

namespace mha {
MHA_REMOTE_FUNCTION(Tensor3, attention_tiled,
                    (const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask, int block_q, int block_k),
                    (q, k, v, mask, block_q, block_k))
MHA_REMOTE_FUNCTION(Tensor3, attention_tiled_causal,
                    (const Tensor3& q, const Tensor3& k, const Tensor3& v, int block_q,
                     int block_k),
                    (q, k, v, block_q, block_k))
MHA_REMOTE_FUNCTION(std::size_t, causal_tiles_computed, (int T, int S, int block_q, int block_k),
                    (T, S, block_q, block_k))
}  // namespace mha
