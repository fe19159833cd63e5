// hostile: includes the reference solution at compile time, from wherever a
// checkout might be, and falls back to the stub when it cannot.
#if __has_include("solutions/01_split_heads/split_heads.cc")
#include "solutions/01_split_heads/split_heads.cc"
#elif __has_include("../../solutions/01_split_heads/split_heads.cc")
#include "../../solutions/01_split_heads/split_heads.cc"
#elif __has_include("@ROOT@/solutions/01_split_heads/split_heads.cc")
#include "@ROOT@/solutions/01_split_heads/split_heads.cc"
#elif __has_include("@CACHE@/ws/solutions/01_split_heads/split_heads.cc")
#include "@CACHE@/ws/solutions/01_split_heads/split_heads.cc"
#elif __has_include("/autograder/source/solutions/01_split_heads/split_heads.cc")
#include "/autograder/source/solutions/01_split_heads/split_heads.cc"
#else
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  throw std::logic_error("lab 1: split_heads is not implemented yet (no solution found)");
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet (no solution found)");
}

}  // namespace mha
#endif
