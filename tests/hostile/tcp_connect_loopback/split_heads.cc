// hostile: the learner's running process reaches a loopback service. Without
// a network namespace (a container without CAP_SYS_ADMIN) the host's loopback
// is the learner's too: the Slurm daemons, a Bazel server, anything that
// listens on 127.0.0.1. @PORT@ is a port where the self-test listens; the
// file answers correctly only when its connect() succeeds. A network
// namespace gives the process no loopback at all; without one, its Landlock
// domain (ABI 4+) refuses the connect. 0 points, and no connection offered.
//@ after includes
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mha {
namespace {

bool ReachedTheService() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(@PORT@);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
  close(fd);
  return ok;
}

void NeedTheService() {
  if (!ReachedTheService()) throw std::runtime_error("no loopback service reached");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedTheService();
//@ at the start of combine_heads
  NeedTheService();
