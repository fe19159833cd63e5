// The counting rules of labs 5 and 6, as formulas: parameters of one
// attention layer and the floats its KV cache keeps per token, for shapes too
// large to build (an 8192-wide layer holds a quarter of a billion floats).
// lab 8's configurator sizes real models with them; lab 8's grading tests
// check that they agree with GroupedQueryAttention and MultiHeadLatentAttention
// on shapes that can be built.
//
//   sizes::gqa_parameters(4096, 32, 8)           41,943,040   (Llama-3-8B, one layer)
//   sizes::gqa_cache_floats_per_token(4096, 32, 8)     2,048   (a key and a value per kv head)
//   sizes::mla_cache_floats_per_token(512, 64)           576   (DeepSeek-V2: latent + RoPE key)
//
// Layers have no biases and d_head = d_model / n_heads, as in every lab.
// Bad shapes (a size <= 0, d_model % n_heads != 0, n_heads % n_kv_heads != 0,
// rope_dim < 0) throw std::invalid_argument naming the values.
#ifndef MHA_COMMON_ATTENTION_SIZES_H_
#define MHA_COMMON_ATTENTION_SIZES_H_

#include <cstdint>

namespace mha {
namespace sizes {

// Lab 5's layer: W_Q and W_O (d_model, d_model), W_K and W_V
// (d_model, n_kv_heads * d_head):  2 d_model^2 + 2 d_model n_kv_heads d_head.
// n_kv_heads == n_heads is MHA (4 d_model^2), n_kv_heads == 1 is MQA.
std::int64_t gqa_parameters(std::int64_t d_model, std::int64_t n_heads, std::int64_t n_kv_heads);

// One key and one value per kv head: 2 n_kv_heads d_head. The query heads
// cache nothing.
std::int64_t gqa_cache_floats_per_token(std::int64_t d_model, std::int64_t n_heads,
                                        std::int64_t n_kv_heads);

// Lab 6's layer: W_Q and W_O (d_model, d_model), W_DKV (d_model, kv_rank),
// W_UK and W_UV (kv_rank, d_model):  2 d_model^2 + 3 d_model kv_rank.
// rope_dim > 0 adds DeepSeek-V2's decoupled RoPE: rotary position can not be
// absorbed into the latent, so a small extra key of rope_dim, shared by all
// heads, is projected from x (W_KR: d_model x rope_dim) and cached beside the
// latent, and each head gets rope_dim more query columns (W_QR:
// d_model x n_heads * rope_dim). rope_dim == 0 is lab 6 exactly.
std::int64_t mla_parameters(std::int64_t d_model, std::int64_t n_heads, std::int64_t kv_rank,
                            std::int64_t rope_dim = 0);

// The latent, plus the shared RoPE key: kv_rank + rope_dim.
std::int64_t mla_cache_floats_per_token(std::int64_t kv_rank, std::int64_t rope_dim = 0);

}  // namespace sizes
}  // namespace mha

#endif  // MHA_COMMON_ATTENTION_SIZES_H_
