// hostile: allocates (and touches) memory until something stops it.
#include "labs/01_split_heads/split_heads.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace {
[[noreturn]] void Hog() {
  std::vector<char*> blocks;
  for (;;) {
    char* p = new char[64 << 20];
    std::memset(p, 1, 64 << 20);
    blocks.push_back(p);
  }
}
}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) { Hog(); }

Tensor2 combine_heads(const Tensor3& heads) { Hog(); }

}  // namespace mha
