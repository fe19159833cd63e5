// Lab 2: batched attention. This is the file you edit.
// Read docs/02_batched_attention.md first; the header labs/02_batched_attention/attention.h says what each function must do.
// Check your work with:  bazel test //labs/02_batched_attention/...
#include "labs/02_batched_attention/attention.h"

#include <stdexcept>

namespace mha {

Tensor2 softmax_rows(const Tensor2& scores) {
  // TODO: subtract each row's max before exp (no overflow); an all -inf row
  // becomes a row of zeros, never NaN.
  throw std::logic_error(
      "lab 2: softmax_rows is not implemented yet, see docs/02_batched_attention.md");
}

AttentionResult attention_loop(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               const std::optional<Tensor2>& mask) {
  // TODO: check the shapes (throw std::invalid_argument naming them, e.g.
  // "mask has shape (5, 4), expected (4, 5)"), then for each head h:
  // scores = q[h] @ k[h]^T / sqrt(d_head) (+ mask),
  // weights = softmax_rows(scores), output = weights @ v[h].
  throw std::logic_error(
      "lab 2: attention_loop is not implemented yet, see docs/02_batched_attention.md");
}

AttentionResult attention_batched(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask) {
  // TODO: the same checks and numbers as attention_loop, with all heads
  // contracted at once (no loop over h): see docs/02_batched_attention.md.
  throw std::logic_error(
      "lab 2: attention_batched is not implemented yet, see docs/02_batched_attention.md");
}

}  // namespace mha
