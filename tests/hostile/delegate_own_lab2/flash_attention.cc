// hostile: lab 9 hands every call to the learner's OWN lab 2 (cumulative
// grading links the learner's earlier labs), 256 query rows at a time: the
// first thing a tired learner tries. Lab 9's call surface is empty, so the
// linked object is rejected, naming attention_batched.
#include "labs/09_flash_attention/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace {

constexpr int kChunk = 256;

void CheckBlocks(int block_q, int block_k) {
  if (block_q < 1) throw std::invalid_argument("block_q=" + std::to_string(block_q) + " must be >= 1");
  if (block_k < 1) throw std::invalid_argument("block_k=" + std::to_string(block_k) + " must be >= 1");
}

// Rows [i0, i1) of the queries against every key, by lab 2.
Tensor3 Chunks(const Tensor3& q, const Tensor3& k, const Tensor3& v, bool causal,
               const std::optional<Tensor2>& mask) {
  const int T = static_cast<int>(q.shape(1)), S = static_cast<int>(k.shape(1));
  Tensor3 out = xt::zeros<float>({q.shape(0), q.shape(1), v.shape(2)});  // (H, T, d_head)
  for (int i0 = 0; i0 < T; i0 += kChunk) {
    const int i1 = std::min(T, i0 + kChunk);
    Tensor3 qc = xt::view(q, xt::all(), xt::range(i0, i1), xt::all());
    std::optional<Tensor2> m;
    if (mask) m = Tensor2(xt::view(*mask, xt::range(i0, i1), xt::all()));
    if (causal) {
      Tensor2 cm = xt::zeros<float>({static_cast<std::size_t>(i1 - i0), static_cast<std::size_t>(S)});
      for (int i = i0; i < i1; ++i)
        for (int j = S - T + i + 1; j < S; ++j) cm(i - i0, j) = -std::numeric_limits<float>::infinity();
      m = cm;
    }
    const AttentionResult r = attention_batched(qc, k, v, m);
    xt::view(out, xt::all(), xt::range(i0, i1), xt::all()) = r.output;
  }
  return out;
}

}  // namespace

Tensor3 attention_tiled(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                        const std::optional<Tensor2>& mask, int block_q, int block_k) {
  CheckBlocks(block_q, block_k);
  return Chunks(q, k, v, false, mask);
}

Tensor3 attention_tiled_causal(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               int block_q, int block_k) {
  CheckBlocks(block_q, block_k);
  if (k.shape(1) < q.shape(1)) {
    throw std::invalid_argument("S=" + std::to_string(k.shape(1)) + " < T=" +
                                std::to_string(q.shape(1)));
  }
  return Chunks(q, k, v, true, std::nullopt);
}

std::size_t causal_tiles_computed(int T, int S, int block_q, int block_k) {
  throw std::logic_error("lab 9: causal_tiles_computed is not implemented yet");
}

}  // namespace mha
