// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
//
// Two members of each decoder keep something of the caller's: the constructor
// keeps a pointer to *our* layer (the learner's process gets a copy of it at
// every call), and cache() returns a reference, so the client refreshes its
// own copy of the cache from the learner's answer and returns that
// (MHA_REMOTE_POINTER_CONSTRUCTOR and MHA_REMOTE_REFERENCE_METHOD).
#include "tests/08_kv_cache/remote.h"

namespace mha {

MHA_REMOTE_CONSTRUCTOR(KVCache, (int n_kv_heads, int d_head, int capacity),
                       (n_kv_heads, d_head, capacity))
MHA_REMOTE_METHOD(KVCache, void, append, (const Tensor3& k, const Tensor3& v), (k, v))
MHA_REMOTE_CONST_METHOD(KVCache, int, length, (), ())
MHA_REMOTE_CONST_METHOD(KVCache, int, capacity, (), ())
MHA_REMOTE_CONST_METHOD(KVCache, Tensor3, keys, (), ())
MHA_REMOTE_CONST_METHOD(KVCache, Tensor3, values, (), ())
MHA_REMOTE_CONST_METHOD(KVCache, std::size_t, bytes, (), ())
MHA_REMOTE_METHOD(KVCache, void, clear, (), ())

MHA_REMOTE_CONSTRUCTOR(LatentCache, (int kv_rank, int capacity), (kv_rank, capacity))
MHA_REMOTE_METHOD(LatentCache, void, append, (const Tensor2& c), (c))
MHA_REMOTE_CONST_METHOD(LatentCache, int, length, (), ())
MHA_REMOTE_CONST_METHOD(LatentCache, int, capacity, (), ())
MHA_REMOTE_CONST_METHOD(LatentCache, Tensor2, latents, (), ())
MHA_REMOTE_CONST_METHOD(LatentCache, std::size_t, bytes, (), ())
MHA_REMOTE_METHOD(LatentCache, void, clear, (), ())

MHA_REMOTE_METHOD(GqaDecoder, Tensor2, step, (const Tensor2& x_new), (x_new))
MHA_REMOTE_METHOD(MlaDecoder, Tensor2, step, (const Tensor2& x_new), (x_new))

MHA_REMOTE_POINTER_CONSTRUCTOR(GqaDecoder, (const GroupedQueryAttention& layer, int capacity),
                               (layer, capacity), layer_, layer)
MHA_REMOTE_REFERENCE_METHOD(GqaDecoder, const KVCache&, cache, (), (), cache_)

MHA_REMOTE_POINTER_CONSTRUCTOR(MlaDecoder, (const MultiHeadLatentAttention& layer, int capacity),
                               (layer, capacity), layer_, layer)
MHA_REMOTE_REFERENCE_METHOD(MlaDecoder, const LatentCache&, cache, (), (), cache_)

}  // namespace mha
