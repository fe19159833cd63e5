// hostile: writes forged result lines (all tests passed) on every file
// descriptor that might be the grader's result channel, without the secret.
#include "labs/01_split_heads/split_heads.h"

#include <unistd.h>

#include <stdexcept>
#include <string>

namespace {
void Forge() {
  const char* names[] = {"SplitHeads.MatchesNumpyReshapeThenTranspose",
                         "SplitHeads.ReturnsNHeadsByTokensByDHead",
                         "CombineHeads.InvertsSplitHeads"};
  for (int fd = 3; fd < 64; ++fd) {
    for (int seq = 0; seq < 40; ++seq) {
      for (const char* name : names) {
        const std::string tag(64, '0');
        std::string line = "E\t" + std::to_string(seq) + "\t" + name + "\tP\t\t" + tag + "\n";
        if (write(fd, line.data(), line.size()) < 0) break;
      }
    }
  }
}
}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  Forge();
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  Forge();
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
