// Internal to the grading boundary: the wire format that the calls of
// remote_calls.h (and so the declaration macros of common/grading/remote.h)
// encode their values in. A lab's remote interface (tests/NN_name/remote.cc,
// in the instructors' repository) includes remote.h, never this file.
//
// Here: the protocol's limits and errors, and the encoding: a type tag before
// every value; Writer and Reader; Codec<T> for each type that travels (an
// object's state through MHA_REMOTE_STATE), and the checks of a decoded
// object's state. Messages and calls are in remote_calls.h; framing, dispatch
// and process control in remote.cc, remote_channel.cc and remote_process.cc.
#ifndef MHA_COMMON_GRADING_REMOTE_CODEC_H_
#define MHA_COMMON_GRADING_REMOTE_CODEC_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/tensor.h"

namespace mha {
namespace remote {

// ---------------------------------------------------------------------------
// Limits: every size the protocol accepts is bounded here.

inline constexpr std::uint64_t kMaxMessageBytes = 128ull << 20;  // one message
inline constexpr std::size_t kMaxStringBytes = 4096;              // names, exception messages
inline constexpr std::size_t kMaxTensorRank = 4;

// A malformed message: wrong tag, truncated payload, impossible size.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The learner's process ran out of memory (its allocation failed under its
// address-space limit): a std::bad_alloc, as a direct call would throw,
// that says where and under which limit.
class LearnerOutOfMemory : public std::bad_alloc {
 public:
  explicit LearnerOutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Raised in the trusted process when the learner's process did not answer a
// call: it crashed, ran past its time or memory limit, exited, or broke the
// protocol. The message says which, in a learner's words.
class LearnerProcessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Encoding.

enum class Tag : std::uint8_t {
  kBool = 1,
  kInt = 2,
  kFloat = 3,
  kString = 4,
  kTensor = 5,
  kNone = 6,     // an empty optional or a null pointer
  kSome = 7,     // a present optional or pointer; the value follows
  kSequence = 8,
  kObject = 9,
  kDouble = 10,  // the 8 bytes of an IEEE double (lab 11's RoPE base, lab 13's loss)
};

class Writer {
 public:
  void Put(Tag tag) { buffer_.push_back(static_cast<char>(tag)); }
  void PutU64(std::uint64_t v) { PutRaw(&v, sizeof v); }
  void PutRaw(const void* data, std::size_t n) {
    buffer_.append(static_cast<const char*>(data), n);
  }
  const std::string& bytes() const { return buffer_; }
  std::string& bytes() { return buffer_; }

 private:
  std::string buffer_;
};

class Reader {
 public:
  Reader(const char* data, std::size_t size) : data_(data), size_(size) {}
  explicit Reader(const std::string& s) : Reader(s.data(), s.size()) {}

  void Expect(Tag tag);
  Tag Peek() const;
  std::uint64_t GetU64();
  void GetRaw(void* out, std::size_t n);
  std::size_t remaining() const { return size_ - pos_; }
  bool AtEnd() const { return pos_ == size_; }

 private:
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Decoding an object's state happens in two situations: the server building
// a fresh object for a call, and the client taking back the state a
// non-const method left. Pointers to other objects (a decoder's layer) are
// rebuilt in the first case and kept in the second.
enum class DecodeMode { kFresh, kUpdate };

// Objects rebuilt while decoding one call (a decoder's layer) live here
// until the call has been answered.
class Arena {
 public:
  template <class T>
  T* Make(T value) {
    auto p = std::make_shared<T>(std::move(value));
    objects_.push_back(p);
    return p.get();
  }
  void Clear() { objects_.clear(); }

 private:
  std::vector<std::shared_ptr<void>> objects_;
};
Arena& CallArena();
DecodeMode& CurrentDecodeMode();

// Friend of every lab class with private state (see common/tensor.h).
struct Access {
  template <class T>
  static T Blank() {
    return T();
  }
  // std::tie of the members of T; specialised for each T by MHA_REMOTE_STATE.
  template <class T>
  static auto Fields(T& object);
};

template <class T>
struct HasState : std::false_type {};

namespace internal {
// A value to decode into: lab objects through their private default
// constructor, everything else value-initialised.
template <class T>
T Blank() {
  if constexpr (HasState<T>::value) {
    return Access::Blank<T>();
  } else {
    return T{};
  }
}
}  // namespace internal

template <class T, class Enable = void>
struct Codec;  // static void Encode(Writer&, const T&); static void Decode(Reader&, T&);

template <class T>
void Encode(Writer& w, const T& value) {
  Codec<T>::Encode(w, value);
}
template <class T>
void Decode(Reader& r, T& value) {
  Codec<T>::Decode(r, value);
}

template <>
struct Codec<bool> {
  static void Encode(Writer& w, bool v) {
    w.Put(Tag::kBool);
    w.PutU64(v ? 1 : 0);
  }
  static void Decode(Reader& r, bool& v) {
    r.Expect(Tag::kBool);
    const std::uint64_t x = r.GetU64();
    if (x > 1) throw ProtocolError("bool out of range");
    v = x == 1;
  }
};

// Every integer travels as a 64-bit two's-complement value and must fit the
// receiving type.
template <class T>
struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void Encode(Writer& w, T v) {
    w.Put(Tag::kInt);
    w.PutU64(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  }
  static void Decode(Reader& r, T& v) {
    r.Expect(Tag::kInt);
    const auto x = static_cast<std::int64_t>(r.GetU64());
    if constexpr (std::is_signed_v<T>) {
      if (x < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          x > static_cast<std::int64_t>(std::numeric_limits<T>::max())) {
        throw ProtocolError("integer out of range");
      }
    } else {
      // Unsigned values were sent through int64; reinterpret, then range-check.
      const auto u = static_cast<std::uint64_t>(x);
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw ProtocolError("integer out of range");
      }
    }
    v = static_cast<T>(x);
  }
};

// float and double travel as their bytes, each behind its own tag.
template <class T>
struct Codec<T, std::enable_if_t<std::is_same_v<T, float> || std::is_same_v<T, double>>> {
  static constexpr Tag kTag = std::is_same_v<T, float> ? Tag::kFloat : Tag::kDouble;
  static void Encode(Writer& w, T v) {
    w.Put(kTag);
    w.PutRaw(&v, sizeof v);
  }
  static void Decode(Reader& r, T& v) {
    r.Expect(kTag);
    r.GetRaw(&v, sizeof v);
  }
};

template <>
struct Codec<std::string> {
  static void Encode(Writer& w, const std::string& s) {
    const std::size_t n = std::min(s.size(), kMaxStringBytes);
    w.Put(Tag::kString);
    w.PutU64(n);
    w.PutRaw(s.data(), n);
  }
  static void Decode(Reader& r, std::string& s) {
    r.Expect(Tag::kString);
    const std::uint64_t n = r.GetU64();
    if (n > kMaxStringBytes || n > r.remaining()) throw ProtocolError("string too long");
    s.resize(static_cast<std::size_t>(n));
    r.GetRaw(s.data(), s.size());
  }
};

template <std::size_t N>
struct Codec<xt::xtensor<float, N>> {
  static_assert(N >= 1 && N <= kMaxTensorRank, "tensor rank");
  static void Encode(Writer& w, const xt::xtensor<float, N>& t) {
    w.Put(Tag::kTensor);
    w.PutU64(N);
    for (std::size_t i = 0; i < N; ++i) w.PutU64(t.shape(i));
    // xtensor containers are row-major and contiguous.
    w.PutRaw(t.data(), t.size() * sizeof(float));
  }
  static void Decode(Reader& r, xt::xtensor<float, N>& t) {
    r.Expect(Tag::kTensor);
    if (r.GetU64() != N) throw ProtocolError("tensor rank mismatch");
    std::array<std::size_t, N> shape;
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < N; ++i) {
      const std::uint64_t d = r.GetU64();
      if (d > kMaxMessageBytes) throw ProtocolError("tensor dimension too large");
      shape[i] = static_cast<std::size_t>(d);
      count *= d;  // no overflow: each factor <= 2^27 and the product is checked below
      if (count > kMaxMessageBytes) throw ProtocolError("tensor too large");
    }
    if (count * sizeof(float) > r.remaining()) throw ProtocolError("tensor data truncated");
    t = xt::xtensor<float, N>::from_shape(shape);
    r.GetRaw(t.data(), static_cast<std::size_t>(count) * sizeof(float));
  }
};

template <class T>
struct Codec<std::optional<T>> {
  static void Encode(Writer& w, const std::optional<T>& v) {
    if (!v) {
      w.Put(Tag::kNone);
      return;
    }
    w.Put(Tag::kSome);
    remote::Encode(w, *v);
  }
  static void Decode(Reader& r, std::optional<T>& v) {
    if (r.Peek() == Tag::kNone) {
      r.Expect(Tag::kNone);
      v.reset();
      return;
    }
    r.Expect(Tag::kSome);
    T value = internal::Blank<T>();
    remote::Decode(r, value);
    v = std::move(value);
  }
};

template <class T>
struct Codec<std::vector<T>> {
  static void Encode(Writer& w, const std::vector<T>& v) {
    w.Put(Tag::kSequence);
    w.PutU64(v.size());
    for (const auto& e : v) remote::Encode(w, static_cast<const T&>(e));
  }
  static void Decode(Reader& r, std::vector<T>& v) {
    r.Expect(Tag::kSequence);
    const std::uint64_t n = r.GetU64();
    if (n > r.remaining()) throw ProtocolError("sequence longer than the message");
    v.clear();
    v.reserve(static_cast<std::size_t>(n));
    for (std::uint64_t i = 0; i < n; ++i) {
      T e = internal::Blank<T>();
      remote::Decode(r, e);
      v.push_back(std::move(e));
    }
  }
};

// A pointer to another object (a decoder's layer) travels as that object.
template <class T>
struct Codec<const T*> {
  static void Encode(Writer& w, const T* p) {
    if (p == nullptr) {
      w.Put(Tag::kNone);
      return;
    }
    w.Put(Tag::kSome);
    remote::Encode(w, *p);
  }
  static void Decode(Reader& r, const T*& p) {
    if (r.Peek() == Tag::kNone) {
      r.Expect(Tag::kNone);
      if (CurrentDecodeMode() == DecodeMode::kFresh) p = nullptr;
      return;
    }
    r.Expect(Tag::kSome);
    T value = Access::Blank<T>();
    remote::Decode(r, value);
    if (CurrentDecodeMode() == DecodeMode::kFresh) p = CallArena().Make(std::move(value));
  }
};

// Checks of a decoded object's state (a layer's weights against its sizes, a
// cache's buffers against its capacity): registered in one place, the
// instructors' call_back_checks.cc (beside the hidden tests), which only the reference
// process links, so that no reference code runs on an object the learner
// made inconsistent.
// A check throws std::invalid_argument naming the value and what was expected.
using ObjectCheck = std::function<void(const void* object)>;
bool RegisterObjectCheck(std::type_index type, ObjectCheck check);
const ObjectCheck* FindObjectCheck(std::type_index type);  // nullptr: none registered

template <class T>
bool RegisterObjectCheck(void (*check)(const T&)) {
  return RegisterObjectCheck(std::type_index(typeid(T)),
                             [check](const void* p) { check(*static_cast<const T*>(p)); });
}

// Objects and structs whose members MHA_REMOTE_STATE lists.
template <class T>
struct Codec<T, std::enable_if_t<HasState<T>::value>> {
  static void Encode(Writer& w, const T& object) {
    w.Put(Tag::kObject);
    std::apply([&w](const auto&... field) { (remote::Encode(w, field), ...); },
               Access::Fields(const_cast<T&>(object)));
  }
  static void Decode(Reader& r, T& object) {
    r.Expect(Tag::kObject);
    std::apply([&r](auto&... field) { (remote::Decode(r, field), ...); },
               Access::Fields(object));
    if (const ObjectCheck* check = FindObjectCheck(std::type_index(typeid(T)))) (*check)(&object);
  }
};

}  // namespace remote
}  // namespace mha

#endif  // MHA_COMMON_GRADING_REMOTE_CODEC_H_
