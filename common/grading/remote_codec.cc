#include "common/grading/remote_codec.h"

#include <cstring>
#include <map>
#include <string>

namespace mha {
namespace remote {

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

Arena& CallArena() {
  static Arena arena;
  return arena;
}

DecodeMode& CurrentDecodeMode() {
  static DecodeMode mode = DecodeMode::kFresh;
  return mode;
}

namespace {

std::map<std::type_index, ObjectCheck>& ObjectChecks() {
  static auto* checks = new std::map<std::type_index, ObjectCheck>;
  return *checks;
}

}  // namespace

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

}  // namespace remote
}  // namespace mha
