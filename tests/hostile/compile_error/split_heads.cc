// hostile: does not compile.
#include "labs/01_split_heads/split_heads.h"

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  return this_name_does_not_exist(x, n_heads);
}

}  // namespace mha
