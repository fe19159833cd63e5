// hostile: the learner's running process talks UDP on the host's loopback.
// Without a network namespace (a container without CAP_SYS_ADMIN) Landlock
// has no rule for UDP: a process could reach a local service, or another
// job's process running at the same time, by datagram. @UDPPORT@ is a port
// where the self-test answers every datagram; the file answers correctly only
// when a reply comes back. A network namespace gives the process no loopback;
// the launcher's seccomp filter refuses it any socket. 0 points, and no
// datagram received.
//@ after includes
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace mha {
namespace {

bool TheServiceAnswered() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return false;
  timeval wait = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(@UDPPORT@);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  char reply[16];
  const bool ok = sendto(fd, "hello", 5, 0, reinterpret_cast<const sockaddr*>(&to),
                         sizeof to) == 5 && recv(fd, reply, sizeof reply, 0) > 0;
  close(fd);
  return ok;
}

void NeedTheService() {
  if (!TheServiceAnswered()) throw std::runtime_error("no UDP service answered");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedTheService();
//@ at the start of combine_heads
  NeedTheService();
