// hostile: writes forged result lines (all tests passed) on every file
// descriptor that might be the grader's result channel, without the secret.
//@ after includes
#include <unistd.h>

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
//@ at the start of split_heads
  Forge();
//@ at the start of combine_heads
  Forge();
