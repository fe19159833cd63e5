// hostile: a residue across gradings. The first job that runs as a uid puts a
// key, stamped with the time, in that uid's "user" keyring, which the kernel
// keeps after every process of the uid has ended; a job that runs as the same
// uid at least 30 s later (a later job, a second grading on this machine)
// finds it and only then answers, correctly. The key could as well carry a
// classmate's data. A fresh uid per job never finds one: 0 points both times.
// No libkeyutils: add_key and keyctl are called through syscall().
#include "labs/01_split_heads/split_heads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>

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

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  NeedResidue();
  if (n_heads <= 0 || x.shape(1) % static_cast<std::size_t>(n_heads) != 0) {
    throw std::invalid_argument("split_heads: n_heads=" + std::to_string(n_heads) +
                                " must be positive and divide d_model=" +
                                std::to_string(x.shape(1)));
  }
  const std::size_t T = x.shape(0), H = static_cast<std::size_t>(n_heads);
  const std::size_t dh = x.shape(1) / H;
  Tensor3 out = xt::zeros<float>({H, T, dh});  // (H, T, d_head)
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < dh; ++j) out(h, t, j) = x(t, h * dh + j);
  return out;
}

Tensor2 combine_heads(const Tensor3& heads) {
  NeedResidue();
  const std::size_t H = heads.shape(0), T = heads.shape(1), dh = heads.shape(2);
  if (H == 0 || dh == 0) {
    throw std::invalid_argument("combine_heads: n_heads=" + std::to_string(H) +
                                " and d_head=" + std::to_string(dh) + " must both be positive");
  }
  Tensor2 out = xt::zeros<float>({T, H * dh});  // (T, d_model)
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < dh; ++j) out(t, h * dh + j) = heads(h, t, j);
  return out;
}

}  // namespace mha
