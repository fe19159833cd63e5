#include "common/grading/remote_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace mha {
namespace remote {
namespace {

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV, a bad memory access";
    case SIGBUS: return "SIGBUS, a bad memory access";
    case SIGFPE: return "SIGFPE, an arithmetic error such as an integer division by zero";
    case SIGABRT: return "SIGABRT, an abort (an uncaught exception or a failed assert)";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGXCPU: return "SIGXCPU, its CPU time limit";
    case SIGXFSZ: return "SIGXFSZ, its file size limit";
    case SIGKILL: return "SIGKILL, its memory or CPU limit, or the grader stopping it";
    default: return "signal " + std::to_string(sig);
  }
}

// "a\nb\nc" -> {"a", "b", "c"}.
std::vector<std::string> SplitLines(const std::string& spec) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t end = spec.find('\n', start);
    args.push_back(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& spec, const std::string& who) {
  // The argv is prepared before fork (the child may only exec).
  std::vector<std::string> args = SplitLines(spec);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int down[2], up[2];  // down: us -> child, up: child -> us
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) {
    throw LearnerProcessError("cannot create pipes for " + who);
  }
  signal(SIGPIPE, SIG_IGN);
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t pid = fork();
  if (pid < 0) throw LearnerProcessError("cannot start " + who + " (fork failed)");
  if (pid == 0) {
    // Child: descriptors 0-2 on /dev/null, 3 = calls in, 4 = answers out.
    setsid();
    signal(SIGPIPE, SIG_DFL);  // ignored signals would stay ignored across exec
    const int in = fcntl(down[0], F_DUPFD, 10), out = fcntl(up[1], F_DUPFD, 10);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    dup2(in, 3);
    dup2(out, 4);
    if (syscall(SYS_close_range, 5u, ~0u, 0u) != 0) {
      for (int fd = 5; fd < 65536; ++fd) close(fd);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(devnull);
  close(down[0]);
  close(up[1]);
  fcntl(down[1], F_SETFL, O_NONBLOCK);
  fcntl(up[0], F_SETFL, O_NONBLOCK);
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
  channel_ = std::make_unique<Channel>(from_child_, to_child_);
}

std::string ChildProcess::Stop() {
  if (pid_ <= 0) return "was not running";
  close(to_child_);
  close(from_child_);
  channel_.reset();
  int status = 0;
  // Give a process that is exiting by itself a moment, then kill it.
  pid_t done = 0;
  for (int i = 0; i < 20 && done == 0; ++i) {
    done = waitpid(pid_, &status, WNOHANG);
    if (done == 0) usleep(5000);
  }
  if (done == 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  if (done == 0) return "stopped answering";
  if (WIFSIGNALED(status)) return "was killed by " + SignalName(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return "could not be started (exit status 127)";
  }
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status)) + " instead of answering";
  }
  return "ended";
}

}  // namespace remote
}  // namespace mha
