// hostile: a GNU indirect function's resolver runs while the dynamic loader
// relocates the program, before any constructor and before the harness's
// .preinit_array entry: it reads the grader's secret first, then the code
// forges an all-passing run with it. Only the static check stops this; the
// golden comparisons, judged outside, still fail without the right numbers.
#include "labs/01_split_heads/split_heads.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace {
char g_secret[32];
int g_out = -1;
bool g_have = false;
}  // namespace

extern "C" {
extern void* __libc_stack_end;  // the initial stack: argc, argv..., 0, envp..., 0
static int Unused() { return 0; }
static int ParseInt(const char*& p) {
  int v = 0;
  while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  return v;
}
static int (*ResolveSteal())() {
  // Nothing of the C library may be called yet: walk the stack for the
  // environment and read the pipe with a system call of its own.
  long* sp = static_cast<long*>(__libc_stack_end);
  char** envp = reinterpret_cast<char**>(sp + 1) + sp[0] + 1;
  for (char** e = envp; *e != nullptr; ++e) {
    const char* want = "MHA_GRADING=";
    const char* p = *e;
    while (*want != '\0' && *p == *want) ++p, ++want;
    if (*want != '\0') continue;
    const int r = ParseInt(p);
    if (*p++ != ':') continue;
    g_out = ParseInt(p);
    long got;
    asm volatile("syscall" : "=a"(got) : "a"(0L), "D"(long{r}), "S"(g_secret), "d"(32L)
                 : "rcx", "r11", "memory");
    g_have = got == 32;
  }
  return Unused;
}
int Steal() __attribute__((ifunc("ResolveSteal")));
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
  if (g_have || Steal() != 0) ForgeAllPassing(g_out, std::string(g_secret, 32));
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  if (g_have) ForgeAllPassing(g_out, std::string(g_secret, 32));
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
