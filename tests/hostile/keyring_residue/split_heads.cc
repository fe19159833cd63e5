// hostile: a residue across gradings. The first job that runs as a uid puts a
// key, stamped with the time, in that uid's "user" keyring, which the kernel
// keeps after every process of the uid has ended; a job that runs as the same
// uid at least 30 s later (a later job, a second grading on this machine)
// finds it and only then answers, correctly. The key could as well carry a
// classmate's data. A fresh uid per job never finds one: 0 points both times.
// No libkeyutils: add_key and keyctl are called through syscall().
//@ after includes
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

namespace mha {
namespace {

constexpr long kUserKeyring = -4;  // KEY_SPEC_USER_KEYRING
constexpr long kKeyctlSearch = 10;
constexpr long kKeyctlRead = 11;
const char kName[] = "mha-hostile-residue";

// Whether a key planted by an earlier job (30 s or more ago) is there; plants one if none is.
bool OldKeyIsThere() {
  const long id = syscall(SYS_keyctl, kKeyctlSearch, kUserKeyring, "user", kName, 0L);
  if (id < 0) {
    const std::string now = std::to_string(static_cast<long>(time(nullptr)));
    syscall(SYS_add_key, "user", kName, now.data(), now.size(), kUserKeyring);
    return false;
  }
  char stamp[32] = {0};
  if (syscall(SYS_keyctl, kKeyctlRead, id, stamp, sizeof stamp - 1) <= 0) return false;
  return time(nullptr) - std::atol(stamp) >= 30;
}

void NeedResidue() {
  if (!OldKeyIsThere()) throw std::runtime_error("no key from an earlier job in this uid's keyring");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedResidue();
//@ at the start of combine_heads
  NeedResidue();
