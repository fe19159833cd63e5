// How much memory this process maps and holds, and a temporary cap on it:
// for the tests and benchmarks that check that tiled attention (lab 9) runs
// in little memory; and a malloc setting for training loops (lab 15).
// Linux only (/proc/self).
//
//   mha::AddressSpaceCap cap(2 << 30);          // at most 2 GiB more mapped
//   const std::size_t before = mha::StatusBytes("VmRSS");
//   mha::ResetPeak();
//   run();
//   const std::size_t extra = mha::PeakBytes() - before;
#ifndef MHA_COMMON_PROCESS_MEMORY_H_
#define MHA_COMMON_PROCESS_MEMORY_H_

#include <sys/resource.h>

#include <cstddef>
#include <string>

namespace mha {

// The address space this process maps now, in bytes (0 if unknown).
std::size_t MappedBytes();

// A line "Name:  123 kB" of /proc/self/status ("VmRSS", "VmHWM"), in bytes
// (0 if unknown).
std::size_t StatusBytes(const std::string& name);

// Resets the peak resident size (VmHWM) to the current one; false where the
// kernel does not allow it (Linux < 4.0).
bool ResetPeak();

// Peak resident memory of the process: since the last ResetPeak() when that
// worked, otherwise since the process started.
std::size_t PeakBytes();

// Asks malloc to keep what the process frees for its next allocations
// instead of handing it back to the kernel (glibc: no trimming of the heap's
// top, no separate mapping for blocks under 64 MiB). A training loop frees
// and allocates the same tensors at every step; without this, each step pays
// the page faults of memory returned and taken again (15% of a train_mini_gpt
// step). The numbers computed do not change. Returns whether malloc agreed.
bool KeepFreedMemory();

// While alive, the process may map at most `extra` more bytes than now (a
// soft RLIMIT_AS, restored afterwards; an existing tighter limit is kept).
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(std::size_t extra);
  ~AddressSpaceCap();
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;
  bool active() const { return active_; }

 private:
  rlimit saved_{};
  bool active_ = false;
};

}  // namespace mha

#endif  // MHA_COMMON_PROCESS_MEMORY_H_
