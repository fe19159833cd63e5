#include "common/testdata/toy.h"

#include <stdexcept>

namespace mha {
namespace toy {

int add(int a, int b) { return a + b; }
Tensor2 twice(const Tensor2& x) { return x * 2.0f; }
std::vector<bool> flip(const std::vector<bool>& bits) {
  std::vector<bool> out;
  for (bool b : bits) out.push_back(!b);
  return out;
}
std::optional<Tensor2> maybe(const std::optional<Tensor2>& x) { return x; }
std::string shout(const std::string& s) {
  if (s.empty()) throw std::invalid_argument("shout: s is empty");
  return s + "!";
}
void crash() {
  volatile int* p = nullptr;
  *p = 1;
}
void spin() {
  for (volatile int i = 0;; i = i + 1) {
  }
}
void throw_int() { throw 42; }
int call_back(int x) { return helper(x) + 1; }

Counter::Counter(int start) : value_(start) {
  if (start < 0) throw std::invalid_argument("Counter: start=" + std::to_string(start) + " < 0");
}
int Counter::next() { return value_++ + (other ? other->value_ * 100 : 0); }
int Counter::peek() const { return value_; }
void Counter::bump_then_throw() {
  ++value_;
  throw std::out_of_range("bumped");
}

}  // namespace toy
}  // namespace mha
