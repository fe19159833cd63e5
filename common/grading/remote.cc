#include "common/grading/remote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <chrono>
#include <cstdlib>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace mha {
namespace remote {
namespace {

// ---------------------------------------------------------------------------
// Framing: a 16-byte header (magic, kind, payload size), then the payload.

constexpr std::uint32_t kMagic = 0x3141484d;  // "MHA1"
constexpr std::size_t kHeaderBytes = 16;

using Clock = std::chrono::steady_clock;

struct Message {
  Kind kind;
  std::string payload;
};

// Why a channel stopped: the other side closed it, or it did not answer in time.
struct ChannelClosed {};
struct ChannelTimeout {};

int MillisUntil(std::optional<Clock::time_point> deadline) {
  if (!deadline) return -1;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
  return ms.count() < 0 ? 0 : static_cast<int>(std::min<long long>(ms.count(), 1 << 30));
}

class Channel {
 public:
  Channel(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}

  void Send(Kind kind, const std::string& payload,
            std::optional<Clock::time_point> deadline = std::nullopt) {
    Send(kind, payload, std::string_view(), deadline);
  }

  // One message whose payload is `head` then `tail`, written without joining
  // them first (a call's arguments can be a large tensor).
  void Send(Kind kind, std::string_view head, std::string_view tail,
            std::optional<Clock::time_point> deadline) {
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

  Message Receive(std::optional<Clock::time_point> deadline = std::nullopt) {
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

 private:
  void WriteAll(const char* p, std::size_t n, std::optional<Clock::time_point> deadline) {
    Transfer(out_, POLLOUT, p, n, deadline, [](int fd, const char* q, std::size_t k) {
      return write(fd, q, k);
    });
  }

  void ReadAll(char* p, std::size_t n, std::optional<Clock::time_point> deadline) {
    Transfer(in_, POLLIN, p, n, deadline, [](int fd, char* q, std::size_t k) {
      return read(fd, q, k);
    });
  }

  // Moves n bytes with `io` (write or read) on fd, waiting for `events`
  // until the deadline; interrupted and would-block calls are retried.
  template <class Byte, class Io>
  static void Transfer(int fd, short events, Byte* p, std::size_t n,
                       std::optional<Clock::time_point> deadline, Io io) {
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

  int in_, out_;
};

// ---------------------------------------------------------------------------
// The handler table and answering one call.

std::map<std::string, Handler>& Handlers() {
  static auto* handlers = new std::map<std::string, Handler>;
  return *handlers;
}

std::string TypeName(const std::exception& e) {
  // Most derived first: the client rethrows the same standard type.
  if (dynamic_cast<const std::invalid_argument*>(&e)) return "std::invalid_argument";
  if (dynamic_cast<const std::out_of_range*>(&e)) return "std::out_of_range";
  if (dynamic_cast<const std::length_error*>(&e)) return "std::length_error";
  if (dynamic_cast<const std::domain_error*>(&e)) return "std::domain_error";
  if (dynamic_cast<const std::logic_error*>(&e)) return "std::logic_error";
  if (dynamic_cast<const std::range_error*>(&e)) return "std::range_error";
  if (dynamic_cast<const std::overflow_error*>(&e)) return "std::overflow_error";
  if (dynamic_cast<const std::underflow_error*>(&e)) return "std::underflow_error";
  if (dynamic_cast<const std::runtime_error*>(&e)) return "std::runtime_error";
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "std::bad_alloc";
  return "std::exception";
}

// ---------------------------------------------------------------------------
// The call surface and the shared budget of the calls back (trusted side).

struct CallSurface {
  bool declared = false;
  int lab = 0;
  std::vector<std::string> calls;
};

CallSurface& Surface() {
  static auto* surface = new CallSurface;
  return *surface;
}

// Why the learner may not make this call back; empty when it may.
std::string Refusal(const std::string& qualified) {
  const CallSurface& s = Surface();
  if (!s.declared) return "";
  for (const auto& c : s.calls) {
    if (c == qualified) return "";
  }
  const std::string lab = "lab " + std::to_string(s.lab);
  if (s.calls.empty()) {
    return lab + " may not call " + qualified + ": " + lab +
           " calls no function of an earlier lab (its call surface in labs/labs.json is "
           "empty), so " + qualified + " is not available here; compute it in your own file";
  }
  return lab + " may not call " + qualified + ": it is not in " + lab +
         "'s call surface (labs/labs.json), so it is not available here";
}

// What every call back made during one call into the learner's process has
// used so far, against that call's limits (see DeclareCallSurface).
struct CallBackBudget {
  std::uint64_t max_bytes = 0;   // 0: no limit
  double max_seconds = 0;        // 0: no limit
  std::uint64_t bytes = 0;
  double seconds = 0;            // the reference process's time answering them
  int calls = 0;
  std::string exceeded;          // why the budget ran out; empty while it has not

  std::string Check(const std::string& fn) {
    if (!exceeded.empty()) return exceeded;
    const auto mib = [](std::uint64_t b) { return std::to_string(b >> 20); };
    if (max_bytes > 0 && bytes > max_bytes) {
      exceeded = "the learner's " + std::to_string(calls) + " calls back to earlier labs (the " +
                 "last " + fn + ") moved " + mib(bytes) + " MiB together, over the memory " +
                 "limit of " + mib(max_bytes) + " MiB: calls back count against the " +
                 "learner's own limits, added up over one call";
    } else if (max_seconds > 0 && seconds > max_seconds) {
      exceeded = "the learner's " + std::to_string(calls) + " calls back to earlier labs (the " +
                 "last " + fn + ") took " + std::to_string(static_cast<int>(seconds)) +
                 " s together, over the time limit of one call: calls back count "
                 "against the learner's own limits, added up over one call";
    }
    return exceeded;
  }
};

// The trusted side's link to the reference process (defined below).
bool ReferenceConfigured();
struct Relayed {
  Kind kind;
  std::string payload;
};
Relayed RelayToReference(const std::string& payload, std::optional<Clock::time_point> deadline);

// Answers the call in `m` on `ch` before `deadline`.
//
// In a server (`budget` null: the learner's process, or the reference
// process) the call runs here, through the handler table; a process that
// declares a call surface (the reference process) answers only its names.
//
// In the trusted test process (`budget` set) the call is a call back from the
// learner's process, and no code runs on its arguments here: it must be in
// the call surface, it is charged to the budget, and its bytes go unread to
// the reference process of this job (MHA_REFERENCE_ARGV, isolated grading
// only), whose answer, or exception, goes back unread as well. Only the
// call's name is decoded here. Without a reference process (cumulative
// grading: the learner's own earlier labs are linked into its process) no
// call back is answered at all.
void Answer(Channel& ch, const Message& m, std::optional<Clock::time_point> deadline,
            CallBackBudget* budget) {
  Writer out;
  Kind kind = Kind::kReturn;
  std::string relayed;
  bool was_relayed = false;
  ThrownState().clear();
  try {
    Reader in(m.payload);
    std::string name;
    Decode(in, name);
    const std::string fn = QualifiedName(name);
    const std::string refused = Refusal(fn);
    if (!refused.empty()) throw std::logic_error(refused);
    if (budget != nullptr) {
      if (!ReferenceConfigured()) {
        throw std::logic_error(
            "call back to " + fn + " refused: in cumulative grading the learner's own earlier "
            "labs are linked into its process, so nothing answers calls back here");
      }
      ++budget->calls;
      budget->bytes += m.payload.size();
      std::string over = budget->Check(fn);
      if (!over.empty()) throw std::runtime_error(over);
      const auto t0 = Clock::now();
      Relayed answer = RelayToReference(m.payload, deadline);
      budget->seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      budget->bytes += answer.payload.size();
      over = budget->Check(fn);
      if (!over.empty()) throw std::runtime_error(over);
      kind = answer.kind;
      relayed = std::move(answer.payload);
      was_relayed = true;
    } else {
      const auto it = Handlers().find(name);
      if (it == Handlers().end()) throw ProtocolError("no function named " + name);
      it->second(in, out);
    }
  } catch (const std::exception& e) {
    kind = Kind::kThrow;
    was_relayed = false;
    out = Writer();
    Encode(out, TypeName(e));
    Encode(out, std::string(e.what()));
    // A non-const method that threw: the object's state as the method left it.
    out.PutRaw(ThrownState().data(), ThrownState().size());
  } catch (...) {
    kind = Kind::kThrow;
    was_relayed = false;
    out = Writer();
    Encode(out, std::string("unknown"));
    Encode(out, std::string("an exception that is not a std::exception"));
    out.PutRaw(ThrownState().data(), ThrownState().size());
  }
  CallArena().Clear();
  ch.Send(kind, was_relayed ? relayed : out.bytes(), deadline);
}

// Exception messages cross a trust boundary: keep printable text only.
std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n' || c == '\t') {
      out += ' ';
    } else if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// "split_heads(const Tensor2& x, int n_heads)" -> "split_heads".
std::string ShortName(const std::string& name) { return QualifiedName(name); }

// Sends a call and waits for its answer, answering the other side's calls
// meanwhile (charged to `budget` on the trusted side), every read and write
// before `deadline`. Returns the kReturn payload or throws.
std::string CallOver(Channel& ch, const std::string& name, const std::string& arguments,
                     std::optional<Clock::time_point> deadline, CallBackBudget* budget) {
  Writer w;
  Encode(w, name);
  ch.Send(Kind::kCall, w.bytes(), arguments, deadline);
  for (;;) {
    Message m = ch.Receive(deadline);
    if (m.kind == Kind::kCall) {
      Answer(ch, m, deadline, budget);
      continue;
    }
    if (m.kind == Kind::kThrow) throw RemoteThrow{std::move(m.payload), ShortName(name)};
    return std::move(m.payload);
  }
}

// ---------------------------------------------------------------------------
// The server process's link to its parent (set by ServeForever).

Channel* g_parent = nullptr;

// ---------------------------------------------------------------------------
// The trusted side: the learner's process, started on the first call.

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

double EnvSeconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return (end != v && x > 0) ? x : fallback;
}

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

// A process the trusted side starts from the newline-separated argv in the
// environment variable `argv_variable` and talks to on descriptors 3 and 4:
// the learner's process (MHA_REMOTE_ARGV), or the reference process that
// answers the learner's calls back (MHA_REFERENCE_ARGV). Both run as the
// job's one-off user, in its jail and limits (the grader's runner starts them).
class PeerProcess {
 public:
  PeerProcess(const char* argv_variable, const char* who) : argv_variable_(argv_variable),
                                                            who_(who) {}
  ~PeerProcess() { Stop(); }

  bool configured() const { return !EnvOr(argv_variable_, "").empty(); }

  // Sends one call's bytes (its name and arguments, as the learner's process
  // wrote them) to the reference process and returns its answer as bytes; the
  // trusted side reads neither. A reference process that dies or overruns is
  // stopped (the next call back starts a fresh one) and the call back fails.
  Relayed Relay(const std::string& payload, std::optional<Clock::time_point> deadline) {
    if (!running()) Start();
    try {
      channel_->Send(Kind::kCall, payload, deadline);
      Message m = channel_->Receive(deadline);
      if (m.kind == Kind::kCall) throw ProtocolError("the reference process made a call");
      return Relayed{m.kind, std::move(m.payload)};
    } catch (const ChannelTimeout&) {
      Stop();
      throw std::runtime_error("the reference answer to a call back did not come within the "
                               "call's time limit");
    } catch (const ChannelClosed&) {
      throw std::runtime_error("the reference process " + Stop() +
                               " answering a call back (arguments it could not take?)");
    } catch (const ProtocolError& e) {
      Stop();
      throw std::runtime_error(std::string("the reference process sent a malformed answer (") +
                               e.what() + ")");
    }
  }

  std::string Call(const std::string& name, const std::string& arguments) {
    const std::string fn = ShortName(name);
    if (timeouts_ >= max_timeouts_) {
      throw LearnerProcessError("not called: the learner's code already ran past the time "
                                "limit " + std::to_string(timeouts_) + " times in this lab");
    }
    if (!running()) Start();
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
    CallBackBudget budget;
    budget.max_bytes = static_cast<std::uint64_t>(EnvSeconds("MHA_REMOTE_MEMORY_MB", 0)) << 20;
    budget.max_seconds = timeout_s_;
    try {
      std::string reply;
      try {
        reply = CallOver(*channel_, name, arguments, deadline, &budget);
      } catch (const RemoteThrow&) {
        if (budget.exceeded.empty()) throw;
      }
      // Whatever the learner's code made of a refused call back, the call fails.
      if (!budget.exceeded.empty()) throw LearnerProcessError(fn + " failed: " + budget.exceeded);
      return reply;
    } catch (const ChannelTimeout&) {
      ++timeouts_;
      Stop();
      throw LearnerProcessError(fn + " did not return within " + Seconds(timeout_s_) +
                                " s (an endless loop, or far too slow)");
    } catch (const ChannelClosed&) {
      const std::string why = Stop();
      throw LearnerProcessError("the learner's process " + why + " during " + fn);
    } catch (const ProtocolError& e) {
      Stop();
      throw LearnerProcessError("the learner's process sent a malformed answer to " + fn +
                                " (" + e.what() + ")");
    }
  }

 private:
  static std::string Seconds(double s) {
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t;
  }

  bool running() const { return pid_ > 0; }

  void Start() {
    timeout_s_ = EnvSeconds("MHA_REMOTE_CALL_TIMEOUT_S", 10.0);
    max_timeouts_ = static_cast<int>(EnvSeconds("MHA_REMOTE_MAX_TIMEOUTS", 2));
    const std::string spec = EnvOr(argv_variable_, "");
    if (spec.empty()) {
      throw LearnerProcessError(
          std::string(argv_variable_) + " is not set: this test binary calls the lab's code "
          "in another process, which ./lab grade starts");
    }
    // Newline-separated argv, prepared before fork (the child may only exec).
    std::vector<std::string> args;
    std::size_t start = 0;
    while (start <= spec.size()) {
      const std::size_t end = spec.find('\n', start);
      args.push_back(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int down[2], up[2];  // down: us -> learner, up: learner -> us
    if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) {
      throw LearnerProcessError(std::string("cannot create pipes for ") + who_);
    }
    signal(SIGPIPE, SIG_IGN);
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t pid = fork();
    if (pid < 0) throw LearnerProcessError(std::string("cannot start ") + who_ + " (fork failed)");
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

  // Ends the process (if it still runs) and says how it ended.
  std::string Stop() {
    if (!running()) return "was not running";
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

  const char* argv_variable_;
  const char* who_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::unique_ptr<Channel> channel_;
  double timeout_s_ = 10.0;
  int max_timeouts_ = 2;
  int timeouts_ = 0;
};

PeerProcess& Learner() {
  static PeerProcess learner("MHA_REMOTE_ARGV", "the learner's process");
  return learner;
}

PeerProcess& Reference() {
  static PeerProcess reference("MHA_REFERENCE_ARGV", "the reference process");
  return reference;
}

bool ReferenceConfigured() { return Reference().configured(); }

Relayed RelayToReference(const std::string& payload, std::optional<Clock::time_point> deadline) {
  return Reference().Relay(payload, deadline);
}

}  // namespace

// ---------------------------------------------------------------------------

void Reader::Expect(Tag tag) {
  if (pos_ >= size_) throw ProtocolError("message ends early");
  const auto got = static_cast<Tag>(data_[pos_]);
  if (got != tag) {
    throw ProtocolError("expected tag " + std::to_string(static_cast<int>(tag)) + ", got " +
                        std::to_string(static_cast<int>(got)));
  }
  ++pos_;
}

Tag Reader::Peek() const {
  if (pos_ >= size_) throw ProtocolError("message ends early");
  return static_cast<Tag>(data_[pos_]);
}

std::uint64_t Reader::GetU64() {
  std::uint64_t v;
  GetRaw(&v, sizeof v);
  return v;
}

void Reader::GetRaw(void* out, std::size_t n) {
  if (n > size_ - pos_) throw ProtocolError("message ends early");
  if (n == 0) return;  // an empty tensor's data() may be null: memcpy must not see it
  std::memcpy(out, data_ + pos_, n);
  pos_ += n;
}

std::string& ThrownState() {
  static std::string state;
  return state;
}

[[noreturn]] void ThrowTyped(const std::string& type, const std::string& message,
                             const std::string& call) {
  const std::string what = Printable(message);
  if (type == "std::invalid_argument") throw std::invalid_argument(what);
  if (type == "std::out_of_range") throw std::out_of_range(what);
  if (type == "std::length_error") throw std::length_error(what);
  if (type == "std::domain_error") throw std::domain_error(what);
  if (type == "std::logic_error") throw std::logic_error(what);
  if (type == "std::range_error") throw std::range_error(what);
  if (type == "std::overflow_error") throw std::overflow_error(what);
  if (type == "std::underflow_error") throw std::underflow_error(what);
  if (type == "std::runtime_error") throw std::runtime_error(what);
  if (type == "std::bad_alloc") {
    const char* mb = std::getenv("MHA_REMOTE_MEMORY_MB");
    throw LearnerOutOfMemory("ran out of memory in " + call +
                             (mb ? std::string(" (the limit is ") + mb + " MiB)" : ""));
  }
  if (type == "std::exception") throw std::runtime_error(what);
  throw std::runtime_error(call + " threw an exception that is not a std::exception");
}

void ThrowTyped(Reader& r, const std::string& call) {
  std::string type, message;
  try {
    Decode(r, type);
    Decode(r, message);
  } catch (const ProtocolError& e) {
    throw LearnerProcessError("the learner's process sent a malformed exception from " + call);
  }
  ThrowTyped(type, message, call);
}

Arena& CallArena() {
  static Arena arena;
  return arena;
}

DecodeMode& CurrentDecodeMode() {
  static DecodeMode mode = DecodeMode::kFresh;
  return mode;
}

std::string QualifiedName(const std::string& wire_name) {
  return wire_name.substr(0, wire_name.find('('));
}

bool DeclareCallSurface(int lab, std::vector<std::string> calls) {
  CallSurface& s = Surface();
  s.declared = true;
  s.lab = lab;
  s.calls = std::move(calls);
  return true;
}

std::map<std::type_index, ObjectCheck>& ObjectChecks() {
  static auto* checks = new std::map<std::type_index, ObjectCheck>;
  return *checks;
}

bool RegisterObjectCheck(std::type_index type, ObjectCheck check) {
  ObjectChecks()[type] = std::move(check);
  return true;
}

const ObjectCheck* FindObjectCheck(std::type_index type) {
  const auto& checks = ObjectChecks();
  if (checks.empty()) return nullptr;
  const auto it = checks.find(type);
  return it == checks.end() ? nullptr : &it->second;
}

bool Register(const std::string& name, Handler handler) {
  Handlers()[name] = std::move(handler);
  return true;
}

int ServeForever(int in_fd, int out_fd) {
  Channel parent(in_fd, out_fd);
  g_parent = &parent;
  for (;;) {
    Message m;
    try {
      m = parent.Receive();
    } catch (const ChannelClosed&) {
      return 0;  // the trusted side is done with us
    }
    if (m.kind != Kind::kCall) throw ProtocolError("expected a call");
    Answer(parent, m, std::nullopt, nullptr);
  }
}

std::string Invoke(const std::string& name, const std::string& arguments) {
  if (g_parent != nullptr) {
    // In the learner's process: a call back to the trusted side (isolated
    // grading serves earlier labs from the reference solutions there).
    try {
      return CallOver(*g_parent, name, arguments, std::nullopt, nullptr);
    } catch (const ChannelClosed&) {
      std::_Exit(0);  // the trusted side went away: nothing left to answer
    }
  }
  return Learner().Call(name, arguments);
}

}  // namespace remote
}  // namespace mha
