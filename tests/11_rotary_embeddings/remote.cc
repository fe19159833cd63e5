// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
//
// As in lab 8 (tests/08_kv_cache/remote.cc), the decoder's constructor keeps a
// pointer to *our* layer (the learner's process gets a copy of it at every
// call), and cache() returns a reference, so the client refreshes its own copy
// of the cache from the learner's answer and returns that.
#include "tests/11_rotary_embeddings/remote.h"

namespace mha {

MHA_REMOTE_FUNCTION(Tensor2, rope_angles, (int n_positions, int d_head, double base),
                    (n_positions, d_head, base))
MHA_REMOTE_FUNCTION(Tensor3, apply_rope, (const Tensor3& x, int start, double base),
                    (x, start, base))

MHA_REMOTE_CONSTRUCTOR(RotaryAttention,
                       (int d_model, int n_heads, std::uint64_t seed, double base),
                       (d_model, n_heads, seed, base))
MHA_REMOTE_CONST_METHOD(RotaryAttention, Tensor2, forward,
                        (const Tensor2& x, const std::optional<Tensor2>& mask, int start),
                        (x, mask, start))
MHA_REMOTE_CONST_METHOD(RotaryAttention, std::size_t, parameter_count, (), ())

MHA_REMOTE_METHOD(RotaryDecoder, Tensor2, step, (const Tensor2& x_new), (x_new))

MHA_REMOTE_POINTER_CONSTRUCTOR(RotaryDecoder, (const RotaryAttention& layer, int capacity),
                               (layer, capacity), layer_, layer)
MHA_REMOTE_REFERENCE_METHOD(RotaryDecoder, const KVCache&, cache, (), (), cache_)

}  // namespace mha
