// Calling a lab's functions in another process.
//
// When the grader runs a hidden test, the test (GoogleTest, every assertion,
// every golden comparison) runs in a trusted process that never executes the
// learner's code. The lab's header is implemented there by a *client*: each
// function sends its arguments (and, for a method, the object's state) down a
// pipe to a separate *server* process that links the learner's code, runs
// the real function, and sends back the result, or the exception's type and
// message. The server runs as an unprivileged user with time, memory and
// file limits; it has nothing to sign with and no verdict to forge: all it
// can do is answer calls, and an answer is only data.
//
// The learner's process may call back the earlier labs of its call surface
// (isolated grading). The trusted process never runs code on those calls'
// arguments, which the learner shaped: it checks the call's name against the
// surface and its budget, then relays the bytes unread to a *reference
// process* of the job (MHA_REFERENCE_ARGV: the reference solutions and a
// check of every argument, as the job's user in a jail of its own) and its
// answer back. Without a reference process (cumulative grading) no call back
// is answered.
//
// Each lab declares its remote interface once, in tests/NN_name/remote.cc (in
// the instructors' repository),
// with the macros at the end of this file. That file is compiled twice: with
// MHA_REMOTE_CLIENT it defines the header's functions as forwarding stubs;
// with MHA_REMOTE_SERVER it registers handlers that call the real ones.
//
//   MHA_REMOTE_STATE(MultiHeadAttention, d_model, n_heads, d_head, W_Q, W_K, W_V, W_O)
//   MHA_REMOTE_CONSTRUCTOR(MultiHeadAttention, (int d_model, int n_heads, std::uint64_t seed),
//                          (d_model, n_heads, seed))
//   MHA_REMOTE_CONST_METHOD(MultiHeadAttention, Tensor2, forward,
//                           (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
//   MHA_REMOTE_FUNCTION(Tensor3, split_heads, (const Tensor2& x, int n_heads), (x, n_heads))
//
// An object's state is its data members, listed by MHA_REMOTE_STATE (private
// ones through the `friend struct remote::Access;` of the class). A method
// call sends the state, the server rebuilds the object from it, calls the
// method, and a non-const method sends the new state back.
//
// Two kinds of member keep something of the caller's, which a copy in another
// process cannot: a constructor that keeps a pointer to one of its arguments
// (a decoder's layer) and a const method that returns a reference to a member
// (a decoder's cache). Their own macros make the client do what a direct call
// would: point the member at the caller's argument, and refresh the client's
// own member from the answer and return a reference to it.
//
//   MHA_REMOTE_POINTER_CONSTRUCTOR(GqaDecoder,
//                                  (const GroupedQueryAttention& layer, int capacity),
//                                  (layer, capacity), layer_, layer)
//   MHA_REMOTE_REFERENCE_METHOD(GqaDecoder, const KVCache&, cache, (), (), cache_)
//
// The wire format is deliberately strict: every message has a fixed header
// with its kind and payload size (at most kMaxMessageBytes), every value is
// preceded by a type tag, tensor shapes are checked against the bytes that
// remain, and anything unexpected is a ProtocolError, never a crash.
//
// The calls and the handlers these macros expand to are in remote_calls.h,
// the wire format under them in remote_codec.h (both internal).
#ifndef MHA_COMMON_REMOTE_H_
#define MHA_COMMON_REMOTE_H_

#include <tuple>
#include <type_traits>

#include "common/grading/remote_calls.h"

// ---------------------------------------------------------------------------
// The declaration macros, used at namespace mha scope in tests/NN_name/remote.cc
// (in the instructors' repository).

#define MHA_REMOTE_CAT2(a, b) a##b
#define MHA_REMOTE_CAT(a, b) MHA_REMOTE_CAT2(a, b)
#define MHA_REMOTE_UNIQUE(prefix) MHA_REMOTE_CAT(prefix, __LINE__)

// MHA_REMOTE_MEMBERS(a, b, c) -> o.a, o.b, o.c (up to 16 members).
#define MHA_REMOTE_M1(a) o.a
#define MHA_REMOTE_M2(a, ...) o.a, MHA_REMOTE_M1(__VA_ARGS__)
#define MHA_REMOTE_M3(a, ...) o.a, MHA_REMOTE_M2(__VA_ARGS__)
#define MHA_REMOTE_M4(a, ...) o.a, MHA_REMOTE_M3(__VA_ARGS__)
#define MHA_REMOTE_M5(a, ...) o.a, MHA_REMOTE_M4(__VA_ARGS__)
#define MHA_REMOTE_M6(a, ...) o.a, MHA_REMOTE_M5(__VA_ARGS__)
#define MHA_REMOTE_M7(a, ...) o.a, MHA_REMOTE_M6(__VA_ARGS__)
#define MHA_REMOTE_M8(a, ...) o.a, MHA_REMOTE_M7(__VA_ARGS__)
#define MHA_REMOTE_M9(a, ...) o.a, MHA_REMOTE_M8(__VA_ARGS__)
#define MHA_REMOTE_M10(a, ...) o.a, MHA_REMOTE_M9(__VA_ARGS__)
#define MHA_REMOTE_M11(a, ...) o.a, MHA_REMOTE_M10(__VA_ARGS__)
#define MHA_REMOTE_M12(a, ...) o.a, MHA_REMOTE_M11(__VA_ARGS__)
#define MHA_REMOTE_M13(a, ...) o.a, MHA_REMOTE_M12(__VA_ARGS__)
#define MHA_REMOTE_M14(a, ...) o.a, MHA_REMOTE_M13(__VA_ARGS__)
#define MHA_REMOTE_M15(a, ...) o.a, MHA_REMOTE_M14(__VA_ARGS__)
#define MHA_REMOTE_M16(a, ...) o.a, MHA_REMOTE_M15(__VA_ARGS__)
#define MHA_REMOTE_COUNT(...) \
  MHA_REMOTE_COUNT_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define MHA_REMOTE_COUNT_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, \
                          a16, n, ...)                                                       \
  n
#define MHA_REMOTE_MEMBERS(...) \
  MHA_REMOTE_CAT(MHA_REMOTE_M, MHA_REMOTE_COUNT(__VA_ARGS__))(__VA_ARGS__)

// The members that make up a Type's state (both sides need it).
#define MHA_REMOTE_STATE(Type, ...)                                  \
  template <>                                                        \
  inline auto remote::Access::Fields<Type>(Type & o) {               \
    return std::tie(MHA_REMOTE_MEMBERS(__VA_ARGS__));                \
  }                                                                  \
  template <>                                                        \
  struct remote::HasState<Type> : std::true_type {};

#if defined(MHA_REMOTE_CLIENT) && defined(MHA_REMOTE_SERVER)
#error "compile remote.cc as the client or as the server, not both"
#elif defined(MHA_REMOTE_CLIENT)

#define MHA_REMOTE_FUNCTION(Ret, name, params, args)                                        \
  Ret name params {                                                                         \
    return ::mha::remote::Call<Ret>(#name #params MHA_REMOTE_ARGS_TAIL args);                  \
  }
#define MHA_REMOTE_CONSTRUCTOR(Type, params, args)                                          \
  Type::Type params                                                                         \
      : Type(::mha::remote::Construct<Type>(#Type "::" #Type #params MHA_REMOTE_ARGS_TAIL args)) {}
#define MHA_REMOTE_CONST_METHOD(Type, Ret, name, params, args)                              \
  Ret Type::name params const {                                                             \
    return ::mha::remote::CallConst<Ret>(#Type "::" #name #params,                          \
                                         *this MHA_REMOTE_ARGS_TAIL args);                  \
  }
#define MHA_REMOTE_METHOD(Type, Ret, name, params, args)                                    \
  Ret Type::name params {                                                                   \
    return ::mha::remote::CallMutating<Ret>(#Type "::" #name #params,                       \
                                            *this MHA_REMOTE_ARGS_TAIL args);               \
  }
#define MHA_REMOTE_POINTER_CONSTRUCTOR(Type, params, args, member, arg)                     \
  Type::Type params                                                                         \
      : Type(::mha::remote::Construct<Type>(#Type "::" #Type #params MHA_REMOTE_ARGS_TAIL args)) { \
    member = &arg;                                                                          \
  }
#define MHA_REMOTE_REFERENCE_METHOD(Type, Ret, name, params, args, member)                  \
  Ret Type::name params const {                                                             \
    const_cast<Type*>(this)->member = ::mha::remote::CallConst<std::decay_t<Ret>>(          \
        #Type "::" #name #params, *this MHA_REMOTE_ARGS_TAIL args);                         \
    return member;                                                                          \
  }

#elif defined(MHA_REMOTE_SERVER)

#define MHA_REMOTE_FUNCTION(Ret, name, params, args)                    \
  static const bool MHA_REMOTE_UNIQUE(mha_remote_registered_) =        \
      ::mha::remote::RegisterFunction(#name #params, static_cast<Ret(*) params>(&name));
#define MHA_REMOTE_CONSTRUCTOR(Type, params, args)                      \
  static const bool MHA_REMOTE_UNIQUE(mha_remote_registered_) =        \
      ::mha::remote::RegisterConstructor<Type>(#Type "::" #Type #params, \
                                               static_cast<void(*) params>(nullptr));
#define MHA_REMOTE_CONST_METHOD(Type, Ret, name, params, args)          \
  static const bool MHA_REMOTE_UNIQUE(mha_remote_registered_) =        \
      ::mha::remote::RegisterConstMethod(                              \
          #Type "::" #name #params, static_cast<Ret (Type::*) params const>(&Type::name));
#define MHA_REMOTE_METHOD(Type, Ret, name, params, args)                \
  static const bool MHA_REMOTE_UNIQUE(mha_remote_registered_) =        \
      ::mha::remote::RegisterMethod(#Type "::" #name #params,          \
                                    static_cast<Ret (Type::*) params>(&Type::name));
#define MHA_REMOTE_POINTER_CONSTRUCTOR(Type, params, args, member, arg) \
  MHA_REMOTE_CONSTRUCTOR(Type, params, args)
#define MHA_REMOTE_REFERENCE_METHOD(Type, Ret, name, params, args, member) \
  MHA_REMOTE_CONST_METHOD(Type, Ret, name, params, args)

#endif

// (a, b) -> , a, b   and   () -> (nothing): the arguments after *this.
#define MHA_REMOTE_ARGS_TAIL(...) __VA_OPT__(, ) __VA_ARGS__


#endif  // MHA_COMMON_REMOTE_H_
