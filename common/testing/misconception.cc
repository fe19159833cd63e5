#include "common/testing/misconception.h"

#include <mutex>
#include <utility>
#include <vector>

namespace mha {
namespace testing {
namespace {

struct Record {
  Misconception mistake;
  std::string sentence;
};

std::mutex& Lock() {
  static std::mutex m;
  return m;
}

std::vector<Record>& Records() {
  static std::vector<Record> records;
  return records;
}

// A bound on what an assertion that is never reported (a result kept in a
// variable, a comparison in a loop) can leave behind.
constexpr std::size_t kMaxRecords = 64;

}  // namespace

void RecordMisconception(Misconception mistake, std::string sentence) {
  std::lock_guard<std::mutex> hold(Lock());
  std::vector<Record>& records = Records();
  if (records.size() >= kMaxRecords) records.erase(records.begin());
  records.push_back({std::move(mistake), std::move(sentence)});
}

std::optional<Misconception> TakeMisconception(const std::string& failure) {
  std::lock_guard<std::mutex> hold(Lock());
  std::vector<Record>& records = Records();
  std::optional<Misconception> found;
  for (const Record& r : records) {
    if (!r.sentence.empty() && failure.find(r.sentence) != std::string::npos &&
        (!found || (r.mistake.looks_like && !found->looks_like))) {
      found = r.mistake;
    }
  }
  records.clear();
  return found;
}

void ForgetMisconceptions() {
  std::lock_guard<std::mutex> hold(Lock());
  Records().clear();
}

}  // namespace testing
}  // namespace mha
