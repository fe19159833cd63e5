// hostile: lab 9 with no attention code of its own. Every call is handed to
// lab 2's attention_batched, 256 query rows at a time, so that no single call
// back forms the (T, S) score matrix that lab 9's memory limit forbids. Lab
// 9's call surface is empty: in isolated mode lab 2 is not served to it, in
// cumulative mode (the learner's own lab 2) the object is rejected.
//@ after includes
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <xtensor/xview.hpp>

#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace {

//@ paste pieces/check_blocks.cc

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
}  // namespace mha
//@ instead of attention_tiled
Tensor3 attention_tiled(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                        const std::optional<Tensor2>& mask, int block_q, int block_k) {
  CheckBlocks(block_q, block_k);
  return Chunks(q, k, v, false, mask);
}
//@ instead of attention_tiled_causal
Tensor3 attention_tiled_causal(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               int block_q, int block_k) {
  CheckBlocks(block_q, block_k);
  if (k.shape(1) < q.shape(1)) {
    throw std::invalid_argument("S=" + std::to_string(k.shape(1)) + " < T=" +
                                std::to_string(q.shape(1)));
  }
  return Chunks(q, k, v, true, std::nullopt);
}
