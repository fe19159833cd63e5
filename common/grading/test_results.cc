// See test_results.h: the listener that streams each verdict.
#include "common/grading/test_results.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace mha {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

class ResultStream : public ::testing::EmptyTestEventListener {
 public:
  explicit ResultStream(std::FILE* f) : f_(f) {}

  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    if (!part.failed()) return;
    // Taken for every failed part, so that no record outlives its failure.
    std::optional<testing::Misconception> named = testing::TakeMisconception(part.message());
    // The first diagnosis of the test, else the first rule it states.
    if (named && (!mistake_ || (named->looks_like && !mistake_->looks_like))) {
      mistake_ = std::move(named);
    }
    if (message_.size() < 16384) {
      if (!message_.empty()) message_ += "\n";
      message_ += part.message();
    }
  }

  void OnTestStart(const ::testing::TestInfo&) override {
    message_.clear();
    mistake_.reset();
    testing::ForgetMisconceptions();
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    const bool passed = info.result()->Passed();
    const std::string line =
        VerdictLine(name, passed, static_cast<long long>(info.result()->elapsed_time()),
                    message_, passed ? std::nullopt : mistake_);
    std::fputs(line.c_str(), f_);
    std::fflush(f_);
  }

 private:
  std::FILE* f_;
  std::string message_;
  std::optional<testing::Misconception> mistake_;
};

const bool registered = [] {
  const char* path = std::getenv("MHA_RESULTS_FILE");
  if (path == nullptr) return false;
  std::FILE* f = std::fopen(path, "a");
  if (f == nullptr) return false;
  ::testing::UnitTest::GetInstance()->listeners().Append(new ResultStream(f));
  return true;
}();

}  // namespace

std::string VerdictLine(const std::string& name, bool passed, long long ms,
                        const std::string& message,
                        const std::optional<testing::Misconception>& mistake) {
  std::string line = "{\"name\":" + JsonString(name) +
                     ",\"passed\":" + (passed ? "true" : "false") +
                     ",\"ms\":" + std::to_string(ms) + ",\"message\":" + JsonString(message);
  if (mistake) {
    line += ",\"mistake\":{\"name\":" + JsonString(mistake->name) +
            ",\"words\":" + JsonString(mistake->words) + ",\"doc\":" + JsonString(mistake->doc) +
            ",\"looks_like\":" + (mistake->looks_like ? "true" : "false") + "}";
  }
  return line + "}\n";
}

}  // namespace mha
