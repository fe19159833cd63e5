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

// Whether a segment another uid wrote is there; makes one (given away) if none is.
bool SegmentOfAnotherJob() {
  int id = shmget(kKey, 64, 0);
  if (id < 0) {
    id = shmget(kKey, 64, IPC_CREAT | 0666);
    if (id < 0) return false;
    void* p = shmat(id, nullptr, 0);
    if (p == reinterpret_cast<void*>(-1)) return false;
    std::snprintf(static_cast<char*>(p), 64, "%ld", static_cast<long>(getuid()));
    shmdt(p);
    shmid_ds ds;
    if (shmctl(id, IPC_STAT, &ds) == 0) {
      ds.shm_perm.uid = 65534;  // the owner may give it away; its creator stays
      shmctl(id, IPC_SET, &ds);
    }
    return false;
  }
  void* p = shmat(id, nullptr, SHM_RDONLY);
  if (p == reinterpret_cast<void*>(-1)) return false;
  const long writer = std::atol(static_cast<const char*>(p));
  shmdt(p);
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
