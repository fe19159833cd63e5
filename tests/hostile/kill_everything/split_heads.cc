// hostile: tries to kill the trusted test process (its parent) and every
// process it can signal, and to attach to its parent with ptrace. It runs
// as a user of its own, so it can only signal itself.
#include "labs/01_split_heads/split_heads.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr);
  kill(getppid(), SIGKILL);
  kill(-1, SIGKILL);
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  kill(getppid(), SIGKILL);
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
