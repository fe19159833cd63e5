#include "common/programs/process_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fstream>
#include <sstream>
#include <string>

namespace mha {

bool KeepFreedMemory() {
#if defined(__GLIBC__)
  // 1 on success for each; M_TOP_PAD also grows the heap in larger steps.
  return mallopt(M_MMAP_THRESHOLD, 64 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 256 << 20) == 1 &&
         mallopt(M_TOP_PAD, 16 << 20) == 1;
#else
  return false;
#endif
}

std::size_t MappedBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t StatusBytes(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      std::istringstream fields(line.substr(name.size() + 1));
      std::size_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

bool ResetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // Linux >= 4.0: reset VmHWM to the current resident size
  clear.flush();
  return static_cast<bool>(clear);
}

std::size_t PeakBytes() {
  const std::size_t hwm = StatusBytes("VmHWM");
  if (hwm > 0) return hwm;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;
}

AddressSpaceCap::AddressSpaceCap(std::size_t extra) {
  const std::size_t mapped = MappedBytes();
  if (mapped == 0 || getrlimit(RLIMIT_AS, &saved_) != 0) return;
  rlimit capped = saved_;
  const rlim_t cap = static_cast<rlim_t>(mapped + extra);
  if (saved_.rlim_cur != RLIM_INFINITY && saved_.rlim_cur <= cap) return;  // already tighter
  capped.rlim_cur = cap;
  active_ = setrlimit(RLIMIT_AS, &capped) == 0;
}

AddressSpaceCap::~AddressSpaceCap() {
  if (active_) setrlimit(RLIMIT_AS, &saved_);
}

}  // namespace mha
