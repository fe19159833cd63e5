// hostile to the grader: floods its answer channel (descriptor 4) with
// well-formed message headers announcing huge payloads, and its standard
// output with fake success lines, to exhaust the grader's memory or forge
// an answer. The trusted side reads at most one bounded message per call.
//@ after includes
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
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
//@ at the start of split_heads
  Flood();
//@ at the start of combine_heads
  Flood();
