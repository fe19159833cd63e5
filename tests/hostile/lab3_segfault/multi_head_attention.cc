// hostile: lab 3's constructor crashes the process. In isolated mode, labs 4
// and 7 (which use lab 3) are graded with the reference lab 3 and must keep
// their points.
#include "labs/03_output_projection/multi_head_attention.h"

#include <stdexcept>

namespace mha {

MultiHeadAttention::MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed) {
  volatile int* p = nullptr;
  *p = d_model;
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  throw std::logic_error("lab 3: MultiHeadAttention::attend is not implemented yet");
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  throw std::logic_error("lab 3: MultiHeadAttention::forward is not implemented yet");
}

std::size_t MultiHeadAttention::parameter_count() const {
  throw std::logic_error("lab 3: MultiHeadAttention::parameter_count is not implemented yet");
}

}  // namespace mha
