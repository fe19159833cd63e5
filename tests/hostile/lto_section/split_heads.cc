// hostile: carries link-time-optimisation sections (.gnu.lto_*), spelled
// with token pasting so that no text scan sees "asm". With the linker plugin
// such bytecode is compiled during the link, where a test binary might be
// visible. Here: objcheck refuses the object, and the link never loads the
// plugin (-fno-use-linker-plugin) and runs as the build user anyway.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

#define MHA_GLUE(a, b) a##b
MHA_GLUE(__as, m__)(".section .gnu.lto_.oracle,\"\",@progbits\n"
                    ".ascii \"would-be LTO bytecode that embeds and runs a test binary\"\n"
                    ".previous");

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
