// Streams each finished test's verdict to the file named by $MHA_RESULTS_FILE,
// one JSON object per line, as the test ends:
//
//   {"name":"Suite.Test","passed":false,"ms":3,"message":"..."}
//
// Linked into the grader's test binaries (the <test>_remote targets of
// common/lab.bzl), which run in the trusted process: the learner's code runs
// in another process and never sees this file. Writing as tests finish means
// the verdicts of finished tests survive if the whole run is stopped at its
// time limit.
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
    if (part.failed() && message_.size() < 16384) {
      if (!message_.empty()) message_ += "\n";
      message_ += part.message();
    }
  }

  void OnTestStart(const ::testing::TestInfo&) override { message_.clear(); }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    std::fprintf(f_, "{\"name\":%s,\"passed\":%s,\"ms\":%lld,\"message\":%s}\n",
                 JsonString(name).c_str(), info.result()->Passed() ? "true" : "false",
                 static_cast<long long>(info.result()->elapsed_time()),
                 JsonString(message_).c_str());
    std::fflush(f_);
  }

 private:
  std::FILE* f_;
  std::string message_;
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
}  // namespace mha
