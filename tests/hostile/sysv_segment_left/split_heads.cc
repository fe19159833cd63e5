// hostile: a residue across gradings that only its own job's uid can remove.
// The first job makes a System V shared memory segment under a fixed key, open
// to every uid, writes its own uid in it, and hands the segment to nobody
// (IPC_SET): its owner is then neither the job's uid nor root, and root
// without CAP_SYS_ADMIN (a Docker or Gradescope container) may not remove it;
// its creator, the job's uid, still may. A later job, whatever its uid, that
// finds a segment written by another uid answers, correctly. Where an IPC
// namespace per process holds it, it dies with it; without one the grader
// must remove it as the job's uid, check that it is gone, and stop if it is
// not. 0 points both times.
//@ after includes
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace mha {
namespace {

constexpr key_t kKey = 0x6d686122;

//@ paste pieces/stamped_segment.cc

// Whether a segment another uid wrote is there; makes one (given away) if none is.
bool SegmentOfAnotherJob() {
  const long writer = SegmentStamp(kKey);
  if (writer < 0) {
    MakeStampedSegment(kKey, static_cast<long>(getuid()), 65534);
    return false;
  }
  return writer > 0 && writer != static_cast<long>(getuid());
}

void NeedResidue() {
  if (!SegmentOfAnotherJob()) throw std::runtime_error("no segment from another job");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedResidue();
//@ at the start of combine_heads
  NeedResidue();
