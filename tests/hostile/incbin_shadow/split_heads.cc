// hostile: embeds /etc/shadow and a file of the suite in the object at
// compile time (.incbin, spelled with token pasting), and returns them in an
// exception message, which reaches the report. The assembler runs as the
// build user, which may read neither.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#define MHA_GLUE(a, b) a##b
MHA_GLUE(__as, m__)(".section .rodata\n"
                    ".global stolen_shadow\nstolen_shadow:\n"
                    ".incb" "in \"/etc/shadow\"\n"
                    ".byte 0\n"
                    ".global stolen_canary\nstolen_canary:\n"
                    ".incb" "in \"@CANARY@\"\n"
                    ".byte 0\n.previous");
extern "C" const char stolen_shadow[];
extern "C" const char stolen_canary[];

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  throw std::invalid_argument(std::string("shadow: ") + stolen_shadow);
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  throw std::invalid_argument(std::string("canary: ") + stolen_canary);
}

}  // namespace mha
