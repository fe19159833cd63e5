#include "common/grading.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if !defined(__x86_64__)
#include <unistd.h>
#endif

namespace mha {
namespace grading {
namespace {

// ---------------------------------------------------------------------------
// State captured before any static constructor runs. Plain arrays and
// integers only: at that point no C++ object of this file is constructed.
constexpr std::size_t kSecretBytes = 32;
unsigned char g_secret[kSecretBytes];
bool g_active = false;
int g_out_fd = -1;
char g_filter[16384];
unsigned long g_seq = 0;

// System calls made directly, so that code linked into the same process
// cannot intercept them by defining read/write/close itself.
#if defined(__x86_64__)
long Sys3(long n, long a, long b, long c) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
long SysRead(int fd, void* buf, std::size_t n) { return Sys3(0, fd, reinterpret_cast<long>(buf), static_cast<long>(n)); }
long SysWrite(int fd, const void* buf, std::size_t n) { return Sys3(1, fd, reinterpret_cast<long>(buf), static_cast<long>(n)); }
long SysClose(int fd) { return Sys3(3, fd, 0, 0); }
constexpr long kEintr = -4;
#else
long SysRead(int fd, void* buf, std::size_t n) { return ::read(fd, buf, n); }
long SysWrite(int fd, const void* buf, std::size_t n) { return ::write(fd, buf, n); }
long SysClose(int fd) { return ::close(fd); }
constexpr long kEintr = -1;
#endif

bool ParseInt(const char*& p, int* out) {
  if (*p < '0' || *p > '9') return false;
  long v = 0;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + (*p - '0');
    if (v > 1 << 20) return false;
    ++p;
  }
  *out = static_cast<int>(v);
  return true;
}

bool StartsWith(const char* s, const char* prefix) {
  while (*prefix) {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// Runs from .preinit_array: after the C library is ready, before the
// constructors of every shared library and of this executable.
void Preinit(int argc, char** argv, char** envp) {
  int rfd = -1, wfd = -1;
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (StartsWith(*e, "MHA_GRADING=")) {
      const char* p = *e + 12;
      if (!ParseInt(p, &rfd) || *p++ != ':' || !ParseInt(p, &wfd) || *p != '\0') {
        rfd = wfd = -1;
      }
    }
  }
  if (rfd < 0 || wfd < 0) return;
  std::size_t got = 0;
  while (got < kSecretBytes) {
    const long n = SysRead(rfd, g_secret + got, kSecretBytes - got);
    if (n == kEintr) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  SysClose(rfd);
  if (got != kSecretBytes) return;
  for (int i = 1; i < argc && argv != nullptr && argv[i] != nullptr; ++i) {
    if (StartsWith(argv[i], "--gtest_filter=")) {
      const char* v = argv[i] + 15;
      std::size_t n = 0;
      while (v[n] != '\0' && n + 1 < sizeof(g_filter)) {
        g_filter[n] = v[n];
        ++n;
      }
      g_filter[n] = '\0';
    }
  }
  g_out_fd = wfd;
  g_active = true;
}

__attribute__((section(".preinit_array"), used)) void (*g_preinit_entry)(int, char**, char**) =
    &Preinit;

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4) and HMAC (RFC 2104), self-contained.
struct Sha256 {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block[64];
  std::size_t used = 0;
  std::uint64_t bits = 0;

  static std::uint32_t Rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void Compress() {
    static const std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
             (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
                  hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          hh + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }

  void Update(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      block[used++] = p[i];
      bits += 8;
      if (used == 64) {
        Compress();
        used = 0;
      }
    }
  }

  void Final(unsigned char out[32]) {
    const std::uint64_t total = bits;
    const unsigned char one = 0x80, zero = 0;
    Update(&one, 1);
    while (used != 56) Update(&zero, 1);
    for (int i = 7; i >= 0; --i) {
      const unsigned char b = static_cast<unsigned char>(total >> (8 * i));
      Update(&b, 1);
    }
    for (int i = 0; i < 8; ++i) {
      out[4 * i] = static_cast<unsigned char>(h[i] >> 24);
      out[4 * i + 1] = static_cast<unsigned char>(h[i] >> 16);
      out[4 * i + 2] = static_cast<unsigned char>(h[i] >> 8);
      out[4 * i + 3] = static_cast<unsigned char>(h[i]);
    }
  }
};

void Hmac(const unsigned char* key, std::size_t key_len, const unsigned char* msg,
          std::size_t msg_len, unsigned char out[32]) {
  unsigned char k[64] = {0};
  if (key_len > 64) {
    Sha256 kh;
    kh.Update(key, key_len);
    kh.Final(k);
  } else {
    for (std::size_t i = 0; i < key_len; ++i) k[i] = key[i];
  }
  unsigned char pad[64];
  for (int i = 0; i < 64; ++i) pad[i] = k[i] ^ 0x36;
  Sha256 inner;
  inner.Update(pad, 64);
  inner.Update(msg, msg_len);
  unsigned char inner_hash[32];
  inner.Final(inner_hash);
  for (int i = 0; i < 64; ++i) pad[i] = k[i] ^ 0x5c;
  Sha256 outer;
  outer.Update(pad, 64);
  outer.Update(inner_hash, 32);
  outer.Final(out);
}

const char kHex[] = "0123456789abcdef";

std::string Hex(const unsigned char* p, std::size_t n) {
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = kHex[p[i] >> 4];
    s[2 * i + 1] = kHex[p[i] & 15];
  }
  return s;
}

std::string Escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

std::string FloatBits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  unsigned char b[4] = {static_cast<unsigned char>(u >> 24), static_cast<unsigned char>(u >> 16),
                        static_cast<unsigned char>(u >> 8), static_cast<unsigned char>(u)};
  return Hex(b, 4);
}

}  // namespace

bool Active() { return g_active; }

const std::string& FilterFromGrader() {
  static const std::string filter(g_filter);
  return filter;
}

std::string HmacSha256Hex(const std::string& key, const std::string& message) {
  unsigned char out[32];
  Hmac(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out);
  return Hex(out, 32);
}

void Send(const std::string& kind, const std::vector<std::string>& fields) {
  if (!g_active) return;
  std::string line = Escape(kind) + "\t" + std::to_string(g_seq++);
  for (const std::string& f : fields) line += "\t" + Escape(f);
  unsigned char tag[32];
  Hmac(g_secret, kSecretBytes, reinterpret_cast<const unsigned char*>(line.data()), line.size(),
       tag);
  line += "\t" + Hex(tag, 32) + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const long n = SysWrite(g_out_fd, p, left);
    if (n == kEintr) continue;
    if (n <= 0) return;  // the grader went away: nothing to report to
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::string CurrentTestName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  return std::string(info->test_suite_name()) + "." + info->name();
}

void RecordLoad(const std::string& path) { Send("L", {CurrentTestName(), path}); }

void RecordComparison(const std::string& golden, const std::vector<std::size_t>& shape,
                      const float* data, float atol, float rtol,
                      const std::vector<std::string>& axis_names,
                      const std::vector<std::pair<std::string, std::string>>& mistakes) {
  std::string dims;
  std::size_t n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? "," : "") + std::to_string(shape[i]);
    n *= shape[i];
  }
  std::vector<std::string> fields = {CurrentTestName(), golden, dims, FloatBits(atol),
                                     FloatBits(rtol), std::to_string(axis_names.size())};
  for (const std::string& a : axis_names) fields.push_back(a);
  fields.push_back(std::to_string(mistakes.size()));
  for (const auto& m : mistakes) {
    fields.push_back(m.first);
    fields.push_back(m.second);
  }
  // float32 little-endian bytes, as in a .npy file with dtype '<f4'.
  std::string hex;
  hex.reserve(8 * n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, data + i, sizeof u);
    const unsigned char b[4] = {static_cast<unsigned char>(u), static_cast<unsigned char>(u >> 8),
                                static_cast<unsigned char>(u >> 16),
                                static_cast<unsigned char>(u >> 24)};
    hex += Hex(b, 4);
  }
  fields.push_back(hex);
  Send("G", fields);
}

}  // namespace grading
}  // namespace mha
