// How lab 8's types travel between processes (common/grading/remote.h). A decoder
// travels with the layer it points to, so every step sees the layer's
// current weights; the cache travels whole.
#ifndef MHA_TESTS_08_KV_CACHE_REMOTE_H_
#define MHA_TESTS_08_KV_CACHE_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/08_kv_cache/kv_cache.h"
#include "tests/05_grouped_query_attention/remote.h"
#include "tests/06_latent_attention/remote.h"

namespace mha {
MHA_REMOTE_STATE(KVCache, n_kv_heads_, d_head_, capacity_, length_, keys_, values_)
MHA_REMOTE_STATE(GqaDecoder, layer_, cache_)
MHA_REMOTE_STATE(LatentCache, kv_rank_, capacity_, length_, latents_)
MHA_REMOTE_STATE(MlaDecoder, layer_, cache_)
}  // namespace mha

#endif  // MHA_TESTS_08_KV_CACHE_REMOTE_H_
