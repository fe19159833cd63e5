// hostile: replaces read() for the whole process to catch the grader's
// secret as the harness reads it, then forges an all-passing run with it.
//@ after includes
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
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

//@ paste pieces/forge_all_passing.cc
//@ at the start of split_heads
  // Without the secret, any key will do: the lines are forged either way.
  for (int fd = 3; fd < 16; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 && fd != 3) ForgeAllPassing(fd, std::string(g_caught, 32));
  }
