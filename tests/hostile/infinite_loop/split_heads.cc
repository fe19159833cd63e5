// hostile: never returns.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  volatile bool forever = true;
  while (forever) {
  }
  return {};
}

Tensor2 combine_heads(const Tensor3& heads) {
  volatile bool forever = true;
  while (forever) {
  }
  return {};
}

}  // namespace mha
