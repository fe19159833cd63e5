// Honest lab 8 definitions that hostile cases take by name ("honest" in their
// expect.json): decoders that keep their layer, and their caches' accessors.
// Only these; the rest of a case's file is the stub.
#include "labs/08_kv_cache/kv_cache.h"

namespace mha {

GqaDecoder::GqaDecoder(const GroupedQueryAttention& layer, int capacity) : layer_(&layer) {}

const KVCache& GqaDecoder::cache() const { return cache_; }

MlaDecoder::MlaDecoder(const MultiHeadLatentAttention& layer, int capacity) : layer_(&layer) {}

const LatentCache& MlaDecoder::cache() const { return cache_; }

}  // namespace mha
