// control for read_hidden_files: arrays of the right shape and no reading;
// what any shape-correct answer earns (the shape tests).
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

#include <xtensor/xbuilder.hpp>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  if (n_heads > 0 && x.shape(1) % n_heads == 0) {
    const std::size_t H = n_heads, T = x.shape(0), dh = x.shape(1) / H;
    return xt::zeros<float>({H, T, dh});
  }
  throw std::logic_error("lab 1: split_heads is not implemented yet");
}

Tensor2 combine_heads(const Tensor3& heads) {
  return xt::zeros<float>({heads.shape(1), heads.shape(0) * heads.shape(2)});
}

}  // namespace mha
