// Lab 5: grouped-query attention. This is the file you edit.
// Read docs/05_grouped_query_attention.md first; the header labs/05_grouped_query_attention/grouped_query_attention.h says what each function must do.
// Check your work with:  bazel test //labs/05_grouped_query_attention/...
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

#include <stdexcept>

// You may call your own earlier labs, and common/rng.h for the seeded weights.

namespace mha {

Tensor3 repeat_kv(const Tensor3& kv, int n_heads) {
  // TODO: repeat each kv head n_heads / n_kv_heads times in place (np.repeat).
  throw std::logic_error(
      "lab 5: repeat_kv is not implemented yet, see docs/05_grouped_query_attention.md");
}

// The parameters are not named like the members they set (d_model, n_heads,
// n_kv_heads): such a parameter would hide its member inside this body
// (-Wshadow warns), and `d_model = d_model;` would assign it to itself.
GroupedQueryAttention::GroupedQueryAttention(int embed_dim, int num_heads, int num_kv_heads,
                                             std::uint64_t seed) {
  // TODO: check the sizes, store them and d_head, then draw W_Q, W_K, W_V, W_O
  // in that order from one NumpyRng(seed), all with fan-in d_model.
  throw std::logic_error(
      "lab 5: GroupedQueryAttention is not implemented yet, see "
      "docs/05_grouped_query_attention.md");
}

Tensor2 GroupedQueryAttention::forward(const Tensor2& x,
                                       const std::optional<Tensor2>& mask) const {
  throw std::logic_error(
      "lab 5: GroupedQueryAttention::forward is not implemented yet, see "
      "docs/05_grouped_query_attention.md");
}

std::size_t GroupedQueryAttention::parameter_count() const {
  throw std::logic_error(
      "lab 5: GroupedQueryAttention::parameter_count is not implemented yet, see "
      "docs/05_grouped_query_attention.md");
}

std::size_t GroupedQueryAttention::kv_cache_floats_per_token() const {
  throw std::logic_error(
      "lab 5: GroupedQueryAttention::kv_cache_floats_per_token is not implemented yet, see "
      "docs/05_grouped_query_attention.md");
}

}  // namespace mha
