// Internal to the grading boundary: what the declaration macros of
// common/grading/remote.h expand to. A lab's remote interface
// (tests/NN_name/remote.cc, in the instructors' repository) includes
// remote.h, never this file.
//
// Here: the messages and the call table, the client stubs (Call, Construct,
// CallConst, CallMutating) and the server handlers (RegisterFunction,
// RegisterConstructor, RegisterConstMethod, RegisterMethod), on the wire
// format of remote_codec.h. Framing, dispatch and process control are in
// remote.cc, remote_channel.cc and remote_process.cc.
#ifndef MHA_COMMON_GRADING_REMOTE_CALLS_H_
#define MHA_COMMON_GRADING_REMOTE_CALLS_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/grading/remote_codec.h"

namespace mha {
namespace remote {

// ---------------------------------------------------------------------------
// Messages and calls.

enum class Kind : std::uint32_t {
  kCall = 1,    // payload: name, then the arguments
  kReturn = 2,  // payload: the result (nothing for void), then a mutated object's state
  kThrow = 3,   // payload: exception type name, message
};

// The other side threw: its payload holds the exception's type name and
// message, and after a non-const method the object's state as it was left.
struct RemoteThrow {
  std::string payload;
  std::string call;
};
// The name an exception crosses under ("std::invalid_argument"; a type the
// protocol does not name crosses as "std::exception").
std::string ExceptionTypeName(const std::exception& e);
// Throws the standard exception described by (type, message) read from `r`.
[[noreturn]] void ThrowTyped(Reader& r, const std::string& call);
// Where a non-const method's handler leaves the object's state when the
// method throws, for the answer to carry back.
std::string& ThrownState();

// The server side: a name -> handler table filled by MHA_REMOTE_* in the
// server build of each lab's remote.cc (static registration), and the loop
// that answers calls on descriptors 3 (in) and 4 (out).
using Handler = std::function<void(Reader& in, Writer& out)>;
bool Register(const std::string& name, Handler handler);
int ServeForever(int in_fd, int out_fd);

// The client side: sends one call and waits for its answer, serving any
// call the other side makes meanwhile (a learner's lab 3 calling lab 2 in
// isolated grading). Throws RemoteThrow, or LearnerProcessError.
std::string Invoke(const std::string& name, const std::string& arguments);

// "attention_batched(const Tensor3& q, ...)" -> "attention_batched";
// "MultiHeadAttention::forward(...)" -> "MultiHeadAttention::forward"; a
// constructor is "Type::Type(...)" on the wire, so "Type::Type".
std::string QualifiedName(const std::string& wire_name);

// The call surface of the lab whose tests run in this (trusted) process: the
// only calls back from the learner's process it answers, by qualified name
// (labs/labs.json "calls", declared by the code common/lab.bzl generates for
// every test binary). Any other call back fails, naming the function. A
// process that declares none answers every registered handler (the toy
// server of common/grading/remote_test.cc).
//
// Every call back made during one call into the learner's process counts
// against that call's limits together: the bytes of their arguments and
// results against the learner's memory limit (MHA_REMOTE_MEMORY_MB), their
// CPU time against the per-call time limit (MHA_REMOTE_CALL_TIMEOUT_S), and
// every read and write against the call's one deadline. Past a limit the
// call back fails and so does the call that made it.
bool DeclareCallSurface(int lab, std::vector<std::string> calls);

namespace internal {

// A handler's arguments, decoded into their value types.
// On the server, pointers inside arguments are rebuilt (DecodeMode::kFresh).
template <class... A>
std::tuple<std::decay_t<A>...> DecodeArguments(Reader& in) {
  CurrentDecodeMode() = DecodeMode::kFresh;
  std::tuple<std::decay_t<A>...> args{Blank<std::decay_t<A>>()...};
  std::apply([&in](auto&... a) { (remote::Decode(in, a), ...); }, args);
  if (!in.AtEnd()) throw ProtocolError("extra bytes after the arguments");
  return args;
}

template <class... A>
std::string EncodeArguments(const A&... args) {
  Writer w;
  (remote::Encode(w, args), ...);
  return std::move(w.bytes());
}

// A result, on the client: objects in it keep their own pointers (see DecodeMode).
template <class R>
R DecodeResult(Reader& r) {
  CurrentDecodeMode() = DecodeMode::kUpdate;
  std::decay_t<R> result = Blank<std::decay_t<R>>();
  remote::Decode(r, result);
  return result;
}

template <class C>
C DecodeObject(Reader& r) {
  C object = Access::Blank<C>();
  CurrentDecodeMode() = DecodeMode::kFresh;
  remote::Decode(r, object);
  return object;
}

}  // namespace internal

// Client stubs (MHA_REMOTE_CLIENT).

template <class R, class... A>
R Call(const std::string& name, const A&... args) {
  std::string reply;
  try {
    reply = Invoke(name, internal::EncodeArguments(args...));
  } catch (const RemoteThrow& t) {
    Reader r(t.payload);
    ThrowTyped(r, t.call);
  }
  Reader r(reply);
  if constexpr (std::is_void_v<R>) {
    if (!r.AtEnd()) throw LearnerProcessError("the answer to " + name + " has extra bytes");
  } else {
    R result = internal::DecodeResult<R>(r);
    if (!r.AtEnd()) throw LearnerProcessError("the answer to " + name + " has extra bytes");
    return result;
  }
}

template <class C, class... A>
C Construct(const std::string& name, const A&... args) {
  return Call<C>(name, args...);
}

template <class R, class C, class... A>
R CallConst(const std::string& name, const C& self, const A&... args) {
  return Call<R>(name, self, args...);
}

// A non-const method: the object's new state comes back after the result.
template <class R, class C, class... A>
R CallMutating(const std::string& name, C& self, const A&... args) {
  auto take_state = [&](Reader& r) {
    CurrentDecodeMode() = DecodeMode::kUpdate;
    C updated = self;
    remote::Decode(r, updated);
    if (!r.AtEnd()) throw LearnerProcessError("the answer to " + name + " has extra bytes");
    self = std::move(updated);
  };
  std::string reply;
  try {
    reply = Invoke(name, internal::EncodeArguments(self, args...));
  } catch (const RemoteThrow& t) {
    // The method threw: the object keeps whatever the method did before that.
    Reader r(t.payload);
    std::string type, message;
    Reader probe = r;
    remote::Decode(probe, type);
    remote::Decode(probe, message);
    if (!probe.AtEnd()) take_state(probe);
    ThrowTyped(r, t.call);
  }
  Reader r(reply);
  auto finish = [&] { take_state(r); };
  if constexpr (std::is_void_v<R>) {
    finish();
  } else {
    R result = internal::DecodeResult<R>(r);
    finish();
    return result;
  }
}

// Server handlers (MHA_REMOTE_SERVER).

template <class R, class... A>
bool RegisterFunction(const std::string& name, R (*fn)(A...)) {
  return Register(name, [fn](Reader& in, Writer& out) {
    auto args = internal::DecodeArguments<A...>(in);
    if constexpr (std::is_void_v<R>) {
      std::apply(fn, args);
    } else {
      remote::Encode(out, std::apply(fn, args));
    }
  });
}

template <class C, class... A>
bool RegisterConstructor(const std::string& name, void (*)(A...)) {
  return Register(name, [](Reader& in, Writer& out) {
    auto args = internal::DecodeArguments<A...>(in);
    const C object = std::make_from_tuple<C>(args);
    remote::Encode(out, object);
  });
}

template <class C, class R, class... A>
bool RegisterConstMethod(const std::string& name, R (C::*method)(A...) const) {
  return Register(name, [method](Reader& in, Writer& out) {
    const C object = internal::DecodeObject<C>(in);
    auto args = internal::DecodeArguments<A...>(in);
    auto call = [&](auto&... a) -> R { return (object.*method)(a...); };
    if constexpr (std::is_void_v<R>) {
      std::apply(call, args);
    } else {
      remote::Encode(out, std::apply(call, args));
    }
  });
}

template <class C, class R, class... A>
bool RegisterMethod(const std::string& name, R (C::*method)(A...)) {
  return Register(name, [method](Reader& in, Writer& out) {
    C object = internal::DecodeObject<C>(in);
    auto args = internal::DecodeArguments<A...>(in);
    auto call = [&](auto&... a) -> R { return (object.*method)(a...); };
    try {
      if constexpr (std::is_void_v<R>) {
        std::apply(call, args);
      } else {
        remote::Encode(out, std::apply(call, args));
      }
    } catch (...) {
      Writer state;
      remote::Encode(state, object);
      ThrownState() = state.bytes();
      throw;
    }
    remote::Encode(out, object);
  });
}

}  // namespace remote
}  // namespace mha

#endif  // MHA_COMMON_GRADING_REMOTE_CALLS_H_
