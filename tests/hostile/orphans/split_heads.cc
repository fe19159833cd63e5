// hostile: orphans and zombies. Every call leaves behind children that
// outlive the learner's process (a double fork into a new session, ignoring
// SIGHUP and SIGTERM, sleeping for ever) and children that exit at once and are
// never waited for (zombies), then fails. Where nothing reaps or kills them
// they hold the uid's process count and a slot for later jobs; the job's pid
// namespace and its one-off uid end them all.
#include "labs/01_split_heads/split_heads.h"

#include <signal.h>
#include <unistd.h>

#include <stdexcept>

namespace mha {
namespace {

void LeaveChildrenBehind() {
  for (int i = 0; i < 4; ++i) {
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        for (;;) pause();
      }
      _exit(0);
    }
  }
  for (int i = 0; i < 4; ++i) {
    if (fork() == 0) _exit(0);  // never waited for: a zombie
  }
  throw std::runtime_error("orphans left behind");
}

}  // namespace

Tensor3 split_heads(const Tensor2&, int) { LeaveChildrenBehind(); return {}; }

Tensor2 combine_heads(const Tensor3&) { LeaveChildrenBehind(); return {}; }

}  // namespace mha
