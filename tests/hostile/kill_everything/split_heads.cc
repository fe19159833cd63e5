// hostile: tries to kill the trusted test process (its parent) and every
// process it can signal, and to attach to its parent with ptrace. It runs
// as a user of its own, so it can only signal itself.
//@ after includes
#include <signal.h>
#include <sys/ptrace.h>
#include <unistd.h>
//@ at the start of split_heads
  ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr);
  kill(getppid(), SIGKILL);
  kill(-1, SIGKILL);
//@ at the start of combine_heads
  kill(getppid(), SIGKILL);
