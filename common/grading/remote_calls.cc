#include "common/grading/remote_calls.h"

#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

namespace mha {
namespace remote {
namespace {

// The standard exceptions that cross by type, most derived first: the name
// the thrower's side writes (ExceptionTypeName) and the exception the other
// side throws again from it (ThrowTyped). std::bad_alloc crosses by name too
// (as a LearnerOutOfMemory), and anything else as a std::runtime_error.
template <class E>
bool Is(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}
template <class E>
[[noreturn]] void Raise(const std::string& what) {
  throw E(what);
}
struct StandardException {
  const char* name;
  bool (*is)(const std::exception&);
  void (*raise)(const std::string&);
};
constexpr StandardException kStandardExceptions[] = {
    {"std::invalid_argument", Is<std::invalid_argument>, Raise<std::invalid_argument>},
    {"std::out_of_range", Is<std::out_of_range>, Raise<std::out_of_range>},
    {"std::length_error", Is<std::length_error>, Raise<std::length_error>},
    {"std::domain_error", Is<std::domain_error>, Raise<std::domain_error>},
    {"std::logic_error", Is<std::logic_error>, Raise<std::logic_error>},
    {"std::range_error", Is<std::range_error>, Raise<std::range_error>},
    {"std::overflow_error", Is<std::overflow_error>, Raise<std::overflow_error>},
    {"std::underflow_error", Is<std::underflow_error>, Raise<std::underflow_error>},
    {"std::runtime_error", Is<std::runtime_error>, Raise<std::runtime_error>},
};

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

[[noreturn]] void ThrowTyped(const std::string& type, const std::string& message,
                             const std::string& call) {
  const std::string what = Printable(message);
  for (const StandardException& s : kStandardExceptions) {
    if (type == s.name) s.raise(what);
  }
  if (type == "std::bad_alloc") {
    const char* mb = std::getenv("MHA_REMOTE_MEMORY_MB");
    throw LearnerOutOfMemory("ran out of memory in " + call +
                             (mb ? std::string(" (the limit is ") + mb + " MiB)" : ""));
  }
  if (type == "std::exception") throw std::runtime_error(what);
  throw std::runtime_error(call + " threw an exception that is not a std::exception");
}

}  // namespace

std::string ExceptionTypeName(const std::exception& e) {
  for (const StandardException& s : kStandardExceptions) {
    if (s.is(e)) return s.name;
  }
  if (Is<std::bad_alloc>(e)) return "std::bad_alloc";
  return "std::exception";
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

std::string& ThrownState() {
  static std::string state;
  return state;
}

std::string QualifiedName(const std::string& wire_name) {
  return wire_name.substr(0, wire_name.find('('));
}

}  // namespace remote
}  // namespace mha
