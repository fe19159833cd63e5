#include "common/grading/remote_channel.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace mha {
namespace remote {
namespace {

constexpr std::uint32_t kMagic = 0x3141484d;  // "MHA1"
constexpr std::size_t kHeaderBytes = 16;

int MillisUntil(Deadline deadline) {
  if (!deadline) return -1;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
  return ms.count() < 0 ? 0 : static_cast<int>(std::min<long long>(ms.count(), 1 << 30));
}

// Moves n bytes with `io` (write or read) on fd, waiting for `events`
// until the deadline; interrupted and would-block calls are retried.
template <class Byte, class Io>
void Transfer(int fd, short events, Byte* p, std::size_t n, Deadline deadline, Io io) {
  while (n > 0) {
    pollfd pfd{fd, events, 0};
    const int ready = poll(&pfd, 1, MillisUntil(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) throw ChannelTimeout{};
    if (ready < 0) throw ChannelClosed{};
    const ssize_t done = io(fd, p, n);
    if (done < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (done <= 0) throw ChannelClosed{};
    p += done;
    n -= static_cast<std::size_t>(done);
  }
}

}  // namespace

void Channel::Send(Kind kind, std::string_view head, std::string_view tail, Deadline deadline) {
  const std::uint64_t n = head.size() + tail.size();
  if (n > kMaxMessageBytes) {
    throw ProtocolError("message of " + std::to_string(n) + " bytes exceeds " +
                        std::to_string(kMaxMessageBytes));
  }
  char header[kHeaderBytes];
  const std::uint32_t magic = kMagic, k = static_cast<std::uint32_t>(kind);
  std::memcpy(header, &magic, 4);
  std::memcpy(header + 4, &k, 4);
  std::memcpy(header + 8, &n, 8);
  WriteAll(header, kHeaderBytes, deadline);
  WriteAll(head.data(), head.size(), deadline);
  WriteAll(tail.data(), tail.size(), deadline);
}

Message Channel::Receive(Deadline deadline) {
  char header[kHeaderBytes];
  ReadAll(header, kHeaderBytes, deadline);
  std::uint32_t magic, kind;
  std::uint64_t n;
  std::memcpy(&magic, header, 4);
  std::memcpy(&kind, header + 4, 4);
  std::memcpy(&n, header + 8, 8);
  if (magic != kMagic) throw ProtocolError("bad message header");
  if (kind < 1 || kind > 3) throw ProtocolError("unknown message kind " + std::to_string(kind));
  if (n > kMaxMessageBytes) {
    throw ProtocolError("message of " + std::to_string(n) + " bytes exceeds the limit of " +
                        std::to_string(kMaxMessageBytes));
  }
  Message m{static_cast<Kind>(kind), std::string(static_cast<std::size_t>(n), '\0')};
  ReadAll(m.payload.data(), m.payload.size(), deadline);
  return m;
}

void Channel::WriteAll(const char* p, std::size_t n, Deadline deadline) {
  Transfer(out_, POLLOUT, p, n, deadline,
           [](int fd, const char* q, std::size_t k) { return write(fd, q, k); });
}

void Channel::ReadAll(char* p, std::size_t n, Deadline deadline) {
  Transfer(in_, POLLIN, p, n, deadline,
           [](int fd, char* q, std::size_t k) { return read(fd, q, k); });
}

}  // namespace remote
}  // namespace mha
