// hostile: dereferences a null pointer.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  volatile int* p = nullptr;
  *p = n_heads;
  return {};
}

Tensor2 combine_heads(const Tensor3& heads) {
  volatile int* p = nullptr;
  *p = 1;
  return {};
}

}  // namespace mha
