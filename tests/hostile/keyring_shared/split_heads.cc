// hostile: a residue across jobs and gradings that a fresh uid does not stop.
// The kernel's keyrings are found by name across uids: a keyring named
// "mha-hostile-shared", opened to every uid (possessor, user, group and other:
// every right) and linked into the job's "user" keyring, outlives every
// process of the uid, and a later job of any other uid joins it by name
// (JOIN_SESSION_KEYRING) and reads the key in it. The first job leaves its
// uid and the time; a later one that finds a key another uid left 30 s or
// more earlier answers, correctly. It could as well carry a classmate's
// answers to the golden cases. The learner's process may not touch the
// keyrings at all (the launcher's seccomp filter): 0 points both times.
// No libkeyutils: add_key and keyctl are called through syscall().
//@ after includes
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <string>

namespace mha {
namespace {

constexpr long kUserKeyring = -4;        // KEY_SPEC_USER_KEYRING
constexpr long kKeyctlJoin = 1;          // KEYCTL_JOIN_SESSION_KEYRING
constexpr long kKeyctlSetPerm = 5;
constexpr long kKeyctlLink = 8;
constexpr long kKeyctlSearch = 10;
constexpr long kKeyctlRead = 11;
constexpr long kEveryRight = 0x3f3f3f3f;  // possessor, user, group, other: all
const char kRing[] = "mha-hostile-shared";

// The key another uid left, "uid time", or "" (then one is left for later jobs).
// Joining a ring that no uid has made yet makes it, under that name.
std::string SharedKey() {
  const long ring = syscall(SYS_keyctl, kKeyctlJoin, kRing);
  if (ring < 0) return "";
  const long key = syscall(SYS_keyctl, kKeyctlSearch, ring, "user", "left", 0L);
  if (key >= 0) {
    char text[64] = {0};
    if (syscall(SYS_keyctl, kKeyctlRead, key, text, sizeof text - 1) > 0) return text;
    return "";
  }
  // None yet: this job leaves one, in a ring that outlives it.
  syscall(SYS_keyctl, kKeyctlSetPerm, ring, kEveryRight);
  syscall(SYS_keyctl, kKeyctlLink, ring, kUserKeyring);
  const std::string left = std::to_string(static_cast<long>(getuid())) + " " +
                           std::to_string(static_cast<long>(time(nullptr)));
  const long made = syscall(SYS_add_key, "user", "left", left.data(), left.size(), ring);
  if (made >= 0) syscall(SYS_keyctl, kKeyctlSetPerm, made, kEveryRight);
  return "";
}

void NeedResidue() {
  const std::string found = SharedKey();
  const std::size_t space = found.find(' ');
  if (space == std::string::npos ||
      std::atol(found.c_str()) == static_cast<long>(getuid()) ||
      time(nullptr) - std::atol(found.c_str() + space + 1) < 30) {
    throw std::runtime_error("no keyring left by another uid");
  }
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedResidue();
//@ at the start of combine_heads
  NeedResidue();
