// Lab 9 reference solution: attention in tiles, with an online softmax.
//
//   for each head h:
//     for each query block  Q = q[h, i0:i1]                       (bq, d_head)
//       m = -inf, l = 0, o = 0                      (bq,), (bq,), (bq, d_head)
//       for each key block  K, V = k[h, j0:j1], v[h, j0:j1]       (bk, d_head)
//         pass 1: s = Q K^T / sqrt(d_head) + mask[i0:i1, j0:j1]   (bq, bk)
//         pass 2: per row, m_new = max(m, max s); rescale l and o by
//                 exp(m - m_new); p = exp(s - m_new); l += sum p; m = m_new
//         pass 3: o += p V                                        (bq, d_head)
//       output[h, i0:i1] = o / l                   (a row with l = 0 stays 0)
//
// Only one (bq, bk) block of scores exists at a time, so memory grows with
// the sequence (the output itself), never with its square. The two products
// are handed to BLAS, the row loops of pass 2 to common/core/vector_math.h; what
// is left is the bookkeeping the lesson derives (docs/09_flash_attention.md).
#include "labs/09_flash_attention/flash_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/core/shape_string.h"
#include "common/core/vector_math.h"

namespace mha {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

void check_positive(const char* function, const char* name, int value) {
  if (value < 1) {
    throw std::invalid_argument(std::string(function) + ": " + name + "=" +
                                std::to_string(value) + " must be >= 1");
  }
}

// q (H, T, d_head); k, v (H, S, d_head); mask (T, S). The same rules as lab 2.
void check_shapes(const char* function, const Tensor3& q, const Tensor3& k, const Tensor3& v,
                  const std::optional<Tensor2>& mask) {
  const std::string shapes = std::string(function) + ": q has shape " + shape_string(q.shape()) +
                             ", k has shape " + shape_string(k.shape()) + ", v has shape " +
                             shape_string(v.shape());
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0)) {
    throw std::invalid_argument(shapes + "; q, k and v must have the same number of heads H");
  }
  if (k.shape(2) != q.shape(2) || v.shape(2) != q.shape(2)) {
    throw std::invalid_argument(shapes + "; q, k and v must have the same d_head");
  }
  if (v.shape(1) != k.shape(1)) {
    throw std::invalid_argument(shapes + "; k and v must have the same number of keys S");
  }
  if (mask.has_value() && (mask->shape(0) != q.shape(1) || mask->shape(1) != k.shape(1))) {
    throw std::invalid_argument(std::string(function) + ": mask has shape " +
                                shape_string(mask->shape()) + ", expected " +
                                shape_string(std::vector<std::size_t>{q.shape(1), k.shape(1)}) +
                                " (T queries x S keys)");
  }
}

// Causal attention needs S >= T: the T queries are the last T of S positions.
void check_causal_lengths(const char* function, std::size_t T, std::size_t S) {
  if (S < T) {
    throw std::invalid_argument(std::string(function) + ": S=" + std::to_string(S) +
                                " keys cannot hold T=" + std::to_string(T) +
                                " causal queries (need S >= T, as causal_mask(T, S))");
  }
}

// ---------------------------------------------------------------- causal tiles

// Absolute position of query i among S positions: the T queries are the last
// T of them (bottom-right alignment, as lab 4's causal_mask(T, S)), so query i
// sees keys j <= S - T + i.
std::size_t query_position(std::size_t i, std::size_t T, std::size_t S) { return S - T + i; }

// How many key blocks, from the first, hold a key that some query of the block
// [i0, i1) may see: the last query, i1 - 1, sees positions [0, S - T + i1), and
// ceil(that count / block_k) blocks cover them. The last of those blocks may
// be only partly visible (the diagonal tile); every later one is in the
// future of every query in the block, and is skipped.
std::size_t causal_key_blocks(std::size_t i1, std::size_t T, std::size_t S, std::size_t block_k) {
  const std::size_t visible = query_position(i1 - 1, T, S) + 1;  // keys [0, visible)
  return (visible + block_k - 1) / block_k;
}

// ---------------------------------------------------------------- the three passes

// c (m, n) = alpha * a (m, kk) @ b^T + beta * c, with b (n, kk)   [b_transposed]
// c (m, n) = alpha * a (m, kk) @ b   + beta * c, with b (kk, n)
// All row-major and contiguous: a block of rows of a (H, T, d_head) tensor
// is a contiguous matrix, so BLAS reads q, k and v in place, and never
// builds K^T (it walks b's rows instead).
void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t n,
          std::size_t kk, bool b_transposed, float alpha, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(kk), alpha, a,
              static_cast<int>(kk), b, static_cast<int>(b_transposed ? kk : n), beta, c,
              static_cast<int>(n));
}

// The running state of the rows of one query block: what each row knows
// about the key blocks seen so far. o lives in the output tensor itself (its
// rows for this block) and is divided by l once, at the very end.
struct RunningSoftmax {
  float* max;  // (rows,) m_i, the largest score so far
  float* sum;  // (rows,) l_i = sum_j exp(s_ij - m_i)
  float* out;  // (rows, d_head) o_i = sum_j exp(s_ij - m_i) v_j
};

// pass 2, on one tile of scores s (rows, n_keys), in place: s becomes
// p = exp(s - m_new), and each row's running max, sum and output are brought
// to the new max. Rescaling is what makes this exact: o_i and l_i were sums
// of exp(s - m_old); multiplying them by exp(m_old - m_new) turns every term
// into exp(s - m_new), as if m_new had been known from the start.
void update_running_softmax(float* s, std::size_t rows, std::size_t n_keys, std::size_t d_head,
                            RunningSoftmax& state) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* s_row = s + r * n_keys;               // (n_keys,)
    float* o_row = state.out + r * d_head;       // (d_head,)
    const float new_max = std::max(state.max[r], max_of(s_row, n_keys));
    if (new_max == kMinusInf) {
      // Every key seen so far is masked. Shifting by -inf would give
      // exp(-inf - (-inf)) = exp(NaN): keep m = -inf, l = 0, o = 0, and make
      // this block's p all zero so pass 3 adds nothing. A later block with a
      // visible key starts the row; a row that never gets one stays zero.
      std::fill(s_row, s_row + n_keys, 0.0f);
      continue;
    }
    // exp(m_old - m_new) <= 1: 1 when the max did not grow, 0 on the row's
    // first visible block (m_old = -inf), where l and o are still 0 anyway.
    const float correction = std::exp(state.max[r] - new_max);
    state.sum[r] = state.sum[r] * correction + exp_shifted_sum(s_row, new_max, s_row, n_keys);
    if (correction != 1.0f) scale_inplace(o_row, correction, d_head);
    state.max[r] = new_max;
  }
}

// After the last key block: output_i = o_i / l_i. A row that saw no key has
// l_i = 0 and o_i = 0, and stays a zero row.
void normalise_rows(std::size_t rows, std::size_t d_head, RunningSoftmax& state) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float inv_sum = state.sum[r] == 0.0f ? 0.0f : 1.0f / state.sum[r];
    scale_inplace(state.out + r * d_head, inv_sum, d_head);
  }
}

// Sets the scores of future keys of a diagonal tile to -inf: row r is query
// i0 + r, column c is key j0 + c, hidden when j0 + c > S - T + i0 + r.
void mask_future_keys(float* s, std::size_t rows, std::size_t n_keys, std::size_t i0,
                      std::size_t j0, std::size_t T, std::size_t S) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t last_seen = query_position(i0 + r, T, S);  // the last key it may see
    const std::size_t first_hidden = last_seen + 1 > j0 ? last_seen + 1 - j0 : 0;
    for (std::size_t c = first_hidden; c < n_keys; ++c) s[r * n_keys + c] = kMinusInf;
  }
}

// Both public functions: `mask` (T, S) or null; `causal` skips future key
// blocks and masks the diagonal tiles from the indices instead.
Tensor3 tiled_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, const Tensor2* mask,
                        bool causal, std::size_t block_q, std::size_t block_k) {
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  // o accumulates in place in the output: zeros, then rows += p V.
  Tensor3 output = xt::zeros<float>({H, T, d_head});  // (H, T, d_head)
  if (T == 0 || S == 0) return output;                // no query, or no key to see
  // The only scratch memory: one tile of scores and one block's m and l.
  // A block size larger than T or S is simply one block of T or S.
  const std::size_t bq = std::min(block_q, T), bk = std::min(block_k, S);
  std::vector<float> scores(bq * bk);                 // (bq, bk)
  std::vector<float> row_max(bq), row_sum(bq);        // (bq,) each

  for (std::size_t h = 0; h < H; ++h) {
    const float* q_h = q.data() + h * T * d_head;      // (T, d_head)
    const float* k_h = k.data() + h * S * d_head;      // (S, d_head)
    const float* v_h = v.data() + h * S * d_head;      // (S, d_head)
    float* out_h = output.data() + h * T * d_head;     // (T, d_head)

    for (std::size_t i0 = 0; i0 < T; i0 += bq) {
      const std::size_t rows = std::min(bq, T - i0);   // the last block may be shorter
      std::fill(row_max.begin(), row_max.end(), kMinusInf);
      std::fill(row_sum.begin(), row_sum.end(), 0.0f);
      RunningSoftmax state{row_max.data(), row_sum.data(), out_h + i0 * d_head};

      const std::size_t n_blocks =
          causal ? causal_key_blocks(i0 + rows, T, S, bk) : (S + bk - 1) / bk;
      for (std::size_t b = 0; b < n_blocks; ++b) {
        const std::size_t j0 = b * bk;
        const std::size_t n_keys = std::min(bk, S - j0);  // the last block may be shorter
        float* s = scores.data();                          // (rows, n_keys)

        // pass 1: this tile's scores, scaled inside the GEMM, plus the mask.
        gemm(q_h + i0 * d_head, k_h + j0 * d_head, s, rows, n_keys, d_head,
             /*b_transposed=*/true, scale, /*beta=*/0.0f);
        if (mask != nullptr) {
          for (std::size_t r = 0; r < rows; ++r) {
            add_inplace(s + r * n_keys, mask->data() + (i0 + r) * S + j0, n_keys);
          }
        }
        // A causal tile needs a mask only if its last key lies in the future
        // of its first query; tiles wholly in the past are used as they are.
        if (causal && j0 + n_keys - 1 > query_position(i0, T, S)) {
          mask_future_keys(s, rows, n_keys, i0, j0, T, S);
        }

        // pass 2: running max, sum and output rescaled; s becomes p.
        update_running_softmax(s, rows, n_keys, d_head, state);

        // pass 3: o += p V for this block's values.
        gemm(s, v_h + j0 * d_head, state.out, rows, d_head, n_keys,
             /*b_transposed=*/false, 1.0f, /*beta=*/1.0f);
      }
      normalise_rows(rows, d_head, state);
    }
  }
  return output;
}

}  // namespace

Tensor3 attention_tiled(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                        const std::optional<Tensor2>& mask, int block_q, int block_k) {
  check_positive("attention_tiled", "block_q", block_q);
  check_positive("attention_tiled", "block_k", block_k);
  check_shapes("attention_tiled", q, k, v, mask);
  return tiled_attention(q, k, v, mask.has_value() ? &*mask : nullptr, /*causal=*/false,
                         static_cast<std::size_t>(block_q), static_cast<std::size_t>(block_k));
}

Tensor3 attention_tiled_causal(const Tensor3& q, const Tensor3& k, const Tensor3& v, int block_q,
                               int block_k) {
  check_positive("attention_tiled_causal", "block_q", block_q);
  check_positive("attention_tiled_causal", "block_k", block_k);
  check_shapes("attention_tiled_causal", q, k, v, std::nullopt);
  check_causal_lengths("attention_tiled_causal", q.shape(1), k.shape(1));
  return tiled_attention(q, k, v, /*mask=*/nullptr, /*causal=*/true,
                         static_cast<std::size_t>(block_q), static_cast<std::size_t>(block_k));
}

std::size_t causal_tiles_computed(int T, int S, int block_q, int block_k) {
  check_positive("causal_tiles_computed", "T", T);
  check_positive("causal_tiles_computed", "S", S);
  check_positive("causal_tiles_computed", "block_q", block_q);
  check_positive("causal_tiles_computed", "block_k", block_k);
  const std::size_t t = static_cast<std::size_t>(T), s = static_cast<std::size_t>(S);
  check_causal_lengths("causal_tiles_computed", t, s);
  const std::size_t bq = static_cast<std::size_t>(block_q), bk = static_cast<std::size_t>(block_k);
  // The same loop as tiled_attention's, counting instead of computing.
  std::size_t tiles = 0;
  for (std::size_t i0 = 0; i0 < t; i0 += bq) {
    tiles += causal_key_blocks(std::min(i0 + bq, t), t, s, bk);
  }
  return tiles;
}

}  // namespace mha
