// hostile: the per-uid process count used up. Forks until fork() fails (the
// learner's limit on processes of its uid), every child sleeping for ever in a
// session of its own, then fails. Under a uid shared by later jobs those would
// start with no process left to fork; a one-off uid per job and the job's pid
// namespace keep the count to this job.
#include "labs/01_split_heads/split_heads.h"

#include <signal.h>
#include <unistd.h>

#include <stdexcept>

namespace mha {
namespace {

void UseUpProcesses() {
  for (int i = 0; i < 100000; ++i) {
    const pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      setsid();
      signal(SIGHUP, SIG_IGN);
      for (;;) pause();
    }
  }
  throw std::runtime_error("the uid's process count is used up");
}

}  // namespace

Tensor3 split_heads(const Tensor2&, int) { UseUpProcesses(); return {}; }

Tensor2 combine_heads(const Tensor3&) { UseUpProcesses(); return {}; }

}  // namespace mha
