// hostile: embeds the hidden golden files in the object file at compile
// time (the assembler's .incbin reads any file the compiler can read), and
// returns them.
#include "labs/01_split_heads/split_heads.h"

#include <cstring>
#include <stdexcept>

asm(".section .rodata\n"
    ".global stolen_tall_heads\n"
    "stolen_tall_heads:\n"
    ".incbin \"@ROOT@/tests/01_split_heads/golden/tall_heads.npy\"\n"
    ".global stolen_tall_heads_end\n"
    "stolen_tall_heads_end:\n"
    ".text\n");
extern "C" const char stolen_tall_heads[], stolen_tall_heads_end[];

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t n = x.size();
  Tensor3 out = xt::empty<float>({static_cast<std::size_t>(n_heads), x.shape(0),
                                  x.shape(1) / n_heads});
  std::memcpy(out.data(), stolen_tall_heads_end - 4 * n, 4 * n);
  return out;
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
