// Internal to the grading boundary (remote.cc): starting and stopping the
// processes the trusted side talks to (the learner's process, the reference
// process). Who may run them, as which user and under which limits, is the
// grader's runner's business (tools/lab/grader/, in the instructors'
// repository); this only forks, execs, and reaps.
#ifndef MHA_COMMON_GRADING_REMOTE_PROCESS_H_
#define MHA_COMMON_GRADING_REMOTE_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/grading/remote_channel.h"

namespace mha {
namespace remote {

// A child process on a Channel: its descriptors 0-2 on /dev/null, 3 its
// calls in, 4 its answers out, in a session of its own.
class ChildProcess {
 public:
  // Starts the program whose argv is the newline-separated words of `spec`;
  // `who` names it in the LearnerProcessError thrown when it cannot.
  ChildProcess(const std::string& spec, const std::string& who);
  ~ChildProcess() { Stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  Channel& channel() { return *channel_; }

  // Closes the pipes, gives a child that is exiting by itself a moment,
  // then kills its session, and says how it ended ("was killed by SIGSEGV,
  // a bad memory access"); "was not running" the second time.
  std::string Stop();

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::unique_ptr<Channel> channel_;
};

}  // namespace remote
}  // namespace mha

#endif  // MHA_COMMON_GRADING_REMOTE_PROCESS_H_
