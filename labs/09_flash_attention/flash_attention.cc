// Lab 9: tiled attention with an online softmax. This is the file you edit.
// Read docs/09_flash_attention.md first; the header labs/09_flash_attention/flash_attention.h says what each function must do.
// Check your work with:  bazel test //labs/09_flash_attention/...
#include "labs/09_flash_attention/flash_attention.h"

#include <stdexcept>

// What you may find useful (all optional):
// #include <xtensor-blas/xlinalg.hpp>     // cblas_sgemm (a tile's product, in place), xt::linalg::dot
// #include "common/core/vector_math.h"         // max_of, exp_shifted_sum, scale_inplace, add_inplace
// Not <cblas.h> as well: xtensor-blas declares cblas_sgemm and its enums itself, and OpenBLAS's
// <cblas.h> declares them again (dozens of errors). <cblas.h> alone, without xtensor-blas, works.

namespace mha {

Tensor3 attention_tiled(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                        const std::optional<Tensor2>& mask, int block_q, int block_k) {
  // TODO:
  // 1. Check block_q, block_k >= 1 and the shapes (as lab 2); throw
  //    std::invalid_argument naming the values, e.g. "block_k=0 must be >= 1".
  // 2. For each head and each block of block_q query rows: m = -inf, l = 0,
  //    o = 0 per row.
  // 3. For each block of block_k keys: scores of the tile (scaled, plus the
  //    mask tile); per row m_new = max(m, tile max), rescale l and o by
  //    exp(m - m_new), add exp(s - m_new) to l and exp(s - m_new) @ v to o.
  //    Careful with a row whose scores so far are all -inf.
  // 4. output = o / l, and a zero row where l == 0.
  throw std::logic_error(
      "lab 9: attention_tiled is not implemented yet, see docs/09_flash_attention.md");
}

Tensor3 attention_tiled_causal(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               int block_q, int block_k) {
  // TODO: the same loop without a mask tensor. Query i sees keys
  // j <= S - T + i (bottom-right, as lab 4). For a query block, stop at the
  // key block that holds the last key its last query sees; mask, from the
  // indices, only the tiles that reach past their first query's last key.
  throw std::logic_error(
      "lab 9: attention_tiled_causal is not implemented yet, see docs/09_flash_attention.md");
}

std::size_t causal_tiles_computed(int T, int S, int block_q, int block_k) {
  // TODO: check the arguments (>= 1, S >= T), then count, for every query
  // block, the key blocks attention_tiled_causal visits.
  throw std::logic_error(
      "lab 9: causal_tiles_computed is not implemented yet, see docs/09_flash_attention.md");
}

}  // namespace mha
