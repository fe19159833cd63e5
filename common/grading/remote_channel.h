// Internal to the grading boundary (remote.cc): the framing of the messages
// that cross a pipe between two processes. Every message is a 16-byte header
// (magic, kind, payload size, at most kMaxMessageBytes) and then its payload;
// every read and write waits at most until the call's deadline.
#ifndef MHA_COMMON_GRADING_REMOTE_CHANNEL_H_
#define MHA_COMMON_GRADING_REMOTE_CHANNEL_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/grading/remote_calls.h"

namespace mha {
namespace remote {

using Clock = std::chrono::steady_clock;
using Deadline = std::optional<Clock::time_point>;  // none: wait as long as it takes

struct Message {
  Kind kind;
  std::string payload;
};

// Why a channel stopped: the other side closed it, or it did not answer in time.
struct ChannelClosed {};
struct ChannelTimeout {};

// Messages in on `in_fd`, out on `out_fd`. Send and Receive throw
// ChannelClosed, ChannelTimeout, or ProtocolError for a malformed header.
class Channel {
 public:
  Channel(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}

  void Send(Kind kind, const std::string& payload, Deadline deadline = std::nullopt) {
    Send(kind, payload, std::string_view(), deadline);
  }

  // One message whose payload is `head` then `tail`, written without joining
  // them first (a call's arguments can be a large tensor).
  void Send(Kind kind, std::string_view head, std::string_view tail, Deadline deadline);

  Message Receive(Deadline deadline = std::nullopt);

 private:
  void WriteAll(const char* p, std::size_t n, Deadline deadline);
  void ReadAll(char* p, std::size_t n, Deadline deadline);

  int in_, out_;
};

}  // namespace remote
}  // namespace mha

#endif  // MHA_COMMON_GRADING_REMOTE_CHANNEL_H_
