// hostile: the learner's running process reaches an abstract UNIX socket, a
// name with no file behind it, which neither the chroot nor file modes guard:
// a service of the grading machine, or another job's process running at the
// same time. @ABSTRACT@ is the name where the self-test listens; the file
// answers correctly only when its connect() succeeds. A network namespace has
// abstract names of its own; Landlock ABI 6 scopes them to the domain; the
// launcher's seccomp filter refuses any socket. 0 points, and no connection.
//@ after includes
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace mha {
namespace {

bool ReachedTheService() {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un to = {};
  to.sun_family = AF_UNIX;
  const char name[] = "@ABSTRACT@";
  std::memcpy(to.sun_path + 1, name, sizeof name - 1);  // sun_path[0] = 0: abstract
  const socklen_t size = offsetof(sockaddr_un, sun_path) + 1 + sizeof name - 1;
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&to), size) == 0;
  close(fd);
  return ok;
}

void NeedTheService() {
  if (!ReachedTheService()) throw std::runtime_error("no abstract socket reached");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedTheService();
//@ at the start of combine_heads
  NeedTheService();
