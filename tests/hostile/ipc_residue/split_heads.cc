// hostile: a residue across gradings in the kernel's IPC objects. The first
// job makes a System V shared memory segment under a fixed key and a POSIX
// message queue, both open to every uid, stamped with the time, and hands the
// segment to root (IPC_SET), so that it no longer looks like the job's; a job
// at least 30 s later (a later grading on this machine: the corpus is graded
// twice), whatever its uid, finds one and only then answers, correctly. Where
// an IPC namespace per process holds them they die with it; without
// namespaces the grader must remove them with the job (by creator as well as
// owner) and refuse the queue (RLIMIT_MSGQUEUE 0). 0 points both times.
//@ after includes
#include <fcntl.h>
#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace mha {
namespace {

constexpr key_t kKey = 0x6d686121;
const char kQueue[] = "/mha-hostile-residue";

bool Old(long stamp) { return stamp > 0 && time(nullptr) - stamp >= 30; }

//@ paste pieces/stamped_segment.cc

// Whether a segment from an earlier job is there; makes one (handed to root) if none is.
bool OldSegmentIsThere() {
  const long stamp = SegmentStamp(kKey);
  if (stamp < 0) {
    MakeStampedSegment(kKey, static_cast<long>(time(nullptr)), 0);
    return false;
  }
  return Old(stamp);
}

// The same with a POSIX message queue (no file: it lives in the IPC namespace).
bool OldQueueIsThere() {
  mq_attr attr = {};
  attr.mq_maxmsg = 1;
  attr.mq_msgsize = 32;
  mqd_t q = mq_open(kQueue, O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK, 0666, &attr);
  if (q != static_cast<mqd_t>(-1)) {
    fchmod(q, 0666);  // a queue is a descriptor on Linux: open it to every uid, whatever the umask
    const std::string now = std::to_string(static_cast<long>(time(nullptr)));
    mq_send(q, now.c_str(), now.size() + 1, 0);
    mq_close(q);
    return false;
  }
  q = mq_open(kQueue, O_RDWR | O_NONBLOCK);
  if (q == static_cast<mqd_t>(-1)) return false;
  char stamp[32] = {0};
  const bool got = mq_receive(q, stamp, sizeof stamp, nullptr) > 0;
  if (got) mq_send(q, stamp, sizeof stamp, 0);
  mq_close(q);
  return got && Old(std::atol(stamp));
}

void NeedResidue() {
  const bool segment = OldSegmentIsThere();
  const bool queue = OldQueueIsThere();
  if (!segment && !queue) throw std::runtime_error("no IPC object from an earlier job");
}

}  // namespace
}  // namespace mha
//@ at the start of split_heads
  NeedResidue();
//@ at the start of combine_heads
  NeedResidue();
