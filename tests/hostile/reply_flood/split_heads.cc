// hostile to the grader: floods its answer channel (descriptor 4) with
// well-formed message headers announcing huge payloads, and its standard
// output with fake success lines, to exhaust the grader's memory or forge
// an answer. The trusted side reads at most one bounded message per call.
#include "labs/01_split_heads/split_heads.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

void Flood() {
  std::vector<char> junk(1 << 20, 'P');
  for (int i = 0; i < 64; ++i) std::puts("[  PASSED  ] 14 tests.");
  const std::uint32_t magic = 0x3141484d, kind = 2;
  const std::uint64_t size = 1ull << 40;
  char header[16];
  std::memcpy(header, &magic, 4);
  std::memcpy(header + 4, &kind, 4);
  std::memcpy(header + 8, &size, 8);
  for (int i = 0; i < 1024; ++i) {
    if (write(4, header, sizeof header) < 0) break;
    if (write(4, junk.data(), junk.size()) < 0) break;
  }
}

}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  Flood();
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  Flood();
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
