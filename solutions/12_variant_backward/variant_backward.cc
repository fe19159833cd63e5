// Lab 12: Backward through shared keys and values, the reference solution.
#include "labs/12_variant_backward/variant_backward.h"

#include <stdexcept>
#include <string>

namespace mha {

Tensor2 variant_backward(const Tensor2& x) {  // (T, d) -> (T, d)
  if (x.size() == 0) {
    throw std::invalid_argument("variant_backward: x has shape (" + std::to_string(x.shape(0)) + ", " +
                                std::to_string(x.shape(1)) + "), expected a non-empty tensor");
  }
  return x * 2.0f;
}

}  // namespace mha
