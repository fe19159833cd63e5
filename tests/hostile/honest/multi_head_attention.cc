// Honest definitions of lab 3 for the hostile cases (written for them, not
// the reference solution): the constructor, as the lesson describes it.
#include "labs/03_output_projection/multi_head_attention.h"

#include "common/rng.h"

namespace mha {

MultiHeadAttention::MultiHeadAttention(int embed_dim, int num_heads, std::uint64_t seed)
    : d_model(embed_dim), n_heads(num_heads), d_head(embed_dim / num_heads) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  NumpyRng rng(seed);
  W_Q = rng.normal_matrix(d, d, d);
  W_K = rng.normal_matrix(d, d, d);
  W_V = rng.normal_matrix(d, d, d);
  W_O = rng.normal_matrix(d, d, d);
}

}  // namespace mha
