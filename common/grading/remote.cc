// The calls between processes: the handler table and answering one call
// (dispatch), the call surface and the budget of the calls back, and the
// trusted side's link to the learner's and the reference processes. The
// framing is in remote_channel.cc, starting and stopping a process in
// remote_process.cc, the wire format in remote_codec.cc.
#include "common/grading/remote.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/grading/remote_channel.h"
#include "common/grading/remote_process.h"

namespace mha {
namespace remote {
namespace {

// ---------------------------------------------------------------------------
// The handler table and answering one call.

std::map<std::string, Handler>& Handlers() {
  static auto* handlers = new std::map<std::string, Handler>;
  return *handlers;
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
Relayed RelayToReference(const std::string& payload, Deadline deadline);

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
void Answer(Channel& ch, const Message& m, Deadline deadline, CallBackBudget* budget) {
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
    Encode(out, ExceptionTypeName(e));
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

// Sends a call and waits for its answer, answering the other side's calls
// meanwhile (charged to `budget` on the trusted side), every read and write
// before `deadline`. Returns the kReturn payload or throws.
std::string CallOver(Channel& ch, const std::string& name, const std::string& arguments,
                     Deadline deadline, CallBackBudget* budget) {
  Writer w;
  Encode(w, name);
  ch.Send(Kind::kCall, w.bytes(), arguments, deadline);
  for (;;) {
    Message m = ch.Receive(deadline);
    if (m.kind == Kind::kCall) {
      Answer(ch, m, deadline, budget);
      continue;
    }
    if (m.kind == Kind::kThrow) throw RemoteThrow{std::move(m.payload), QualifiedName(name)};
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
  Relayed Relay(const std::string& payload, Deadline deadline) {
    if (!running()) Start();
    try {
      channel().Send(Kind::kCall, payload, deadline);
      Message m = channel().Receive(deadline);
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
    const std::string fn = QualifiedName(name);
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
        reply = CallOver(channel(), name, arguments, deadline, &budget);
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

  bool running() const { return child_ != nullptr; }
  Channel& channel() { return child_->channel(); }

  void Start() {
    timeout_s_ = EnvSeconds("MHA_REMOTE_CALL_TIMEOUT_S", 10.0);
    max_timeouts_ = static_cast<int>(EnvSeconds("MHA_REMOTE_MAX_TIMEOUTS", 2));
    const std::string spec = EnvOr(argv_variable_, "");
    if (spec.empty()) {
      throw LearnerProcessError(
          std::string(argv_variable_) + " is not set: this test binary calls the lab's code "
          "in another process, which ./lab grade starts");
    }
    child_ = std::make_unique<ChildProcess>(spec, who_);
  }

  // Ends the process (if it still runs) and says how it ended.
  std::string Stop() {
    if (!running()) return "was not running";
    const std::string how = child_->Stop();
    child_.reset();
    return how;
  }

  const char* argv_variable_;
  const char* who_;
  std::unique_ptr<ChildProcess> child_;
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

Relayed RelayToReference(const std::string& payload, Deadline deadline) {
  return Reference().Relay(payload, deadline);
}

}  // namespace

bool DeclareCallSurface(int lab, std::vector<std::string> calls) {
  CallSurface& s = Surface();
  s.declared = true;
  s.lab = lab;
  s.calls = std::move(calls);
  return true;
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
