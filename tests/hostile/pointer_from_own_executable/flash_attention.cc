// hostile: lab 9 (whose call surface is empty) in cumulative grading, with
// the learner's own lab 2 submitted. It names no earlier lab's function, so
// no scan of its object sees a call: it reads its own executable's symbol
// table (/proc/self/exe), finds lab 2's attention_batched there and calls it
// through a pointer. Cumulative grading now links only the earlier labs its
// call surface reaches (none for lab 9), and the learner's executable has
// no symbol table: there is nothing to find.
//@ after includes
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace {

using Batched = AttentionResult (*)(const Tensor3&, const Tensor3&, const Tensor3&,
                                    const std::optional<Tensor2>&);

int FirstBase(dl_phdr_info* info, std::size_t, void* out) {
  *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;  // the executable comes first
  return 1;
}

Batched FindBatched() {
  std::ifstream f("/proc/self/exe", std::ios::binary);
  const std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < sizeof(Elf64_Ehdr)) return nullptr;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, b.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strs;
    std::memcpy(&strs, b.data() + eh.e_shoff + sh.sh_link * sizeof(Elf64_Shdr), sizeof strs);
    for (std::size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym s;
      std::memcpy(&s, b.data() + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof s);
      const char* name = b.data() + strs.sh_offset + s.st_name;
      if (s.st_value != 0 && std::strstr(name, "17attention_batched") != nullptr) {
        std::uintptr_t base = 0;
        dl_iterate_phdr(FirstBase, &base);
        return reinterpret_cast<Batched>(base + s.st_value);
      }
    }
  }
  return nullptr;
}

Tensor3 ThroughPointer(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                       const std::optional<Tensor2>& mask) {
  const Batched batched = FindBatched();
  if (batched == nullptr) {
    throw std::runtime_error("found no attention_batched in my own executable");
  }
  return batched(q, k, v, mask).output;
}

}  // namespace
}  // namespace mha
//@ at the start of attention_tiled
  (void)block_q, (void)block_k;
  return ThroughPointer(q, k, v, mask);
