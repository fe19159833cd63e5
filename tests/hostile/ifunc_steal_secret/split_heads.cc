// hostile: a GNU indirect function's resolver runs while the dynamic loader
// relocates the program, before any constructor and before the harness's
// .preinit_array entry: it reads the grader's secret first, then the code
// forges an all-passing run with it. Only the static check stops this; the
// golden comparisons, judged outside, still fail without the right numbers.
//@ after includes
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

//@ paste pieces/forge_all_passing.cc
//@ at the start of split_heads
  if (g_have || Steal() != 0) ForgeAllPassing(g_out, std::string(g_secret, 32));
//@ at the start of combine_heads
  if (g_have) ForgeAllPassing(g_out, std::string(g_secret, 32));
