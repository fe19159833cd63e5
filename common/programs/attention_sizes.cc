#include "common/programs/attention_sizes.h"

#include <stdexcept>
#include <string>

namespace mha {
namespace sizes {
namespace {

void check_positive(const char* name, std::int64_t value) {
  if (value <= 0) {
    throw std::invalid_argument(std::string(name) + "=" + std::to_string(value) +
                                " must be positive");
  }
}

// d_head = d_model / n_heads, after checking the split is exact.
std::int64_t head_width(std::int64_t d_model, std::int64_t n_heads) {
  check_positive("d_model", d_model);
  check_positive("n_heads", n_heads);
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  return d_model / n_heads;
}

void check_groups(std::int64_t n_heads, std::int64_t n_kv_heads) {
  check_positive("n_kv_heads", n_kv_heads);
  if (n_heads % n_kv_heads != 0) {
    throw std::invalid_argument("n_heads=" + std::to_string(n_heads) +
                                " is not divisible by n_kv_heads=" + std::to_string(n_kv_heads));
  }
}

void check_rope(std::int64_t rope_dim) {
  if (rope_dim < 0) {
    throw std::invalid_argument("rope_dim=" + std::to_string(rope_dim) + " must be >= 0");
  }
}

}  // namespace

std::int64_t gqa_parameters(std::int64_t d_model, std::int64_t n_heads, std::int64_t n_kv_heads) {
  const std::int64_t d_head = head_width(d_model, n_heads);
  check_groups(n_heads, n_kv_heads);
  const std::int64_t kv_width = n_kv_heads * d_head;       // columns of W_K and of W_V
  return 2 * d_model * d_model + 2 * d_model * kv_width;  // W_Q, W_O + W_K, W_V
}

std::int64_t gqa_cache_floats_per_token(std::int64_t d_model, std::int64_t n_heads,
                                        std::int64_t n_kv_heads) {
  const std::int64_t d_head = head_width(d_model, n_heads);
  check_groups(n_heads, n_kv_heads);
  return 2 * n_kv_heads * d_head;  // a key and a value per kv head
}

std::int64_t mla_parameters(std::int64_t d_model, std::int64_t n_heads, std::int64_t kv_rank,
                            std::int64_t rope_dim) {
  head_width(d_model, n_heads);
  check_positive("kv_rank", kv_rank);
  check_rope(rope_dim);
  const std::int64_t lab6 = 2 * d_model * d_model + 3 * d_model * kv_rank;  // W_Q, W_O; W_DKV, W_UK, W_UV
  const std::int64_t rope = d_model * rope_dim + d_model * n_heads * rope_dim;  // W_KR, W_QR
  return lab6 + rope;
}

std::int64_t mla_cache_floats_per_token(std::int64_t kv_rank, std::int64_t rope_dim) {
  check_positive("kv_rank", kv_rank);
  check_rope(rope_dim);
  return kv_rank + rope_dim;  // the latent c, and the RoPE key shared by every head
}

}  // namespace sizes
}  // namespace mha
