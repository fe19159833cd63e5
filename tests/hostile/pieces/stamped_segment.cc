// A System V shared memory segment under a fixed key, open to every uid,
// holding one number: what the IPC residue cases (ipc_residue,
// sysv_segment_left) leave for a later job. Needs <sys/ipc.h>, <sys/shm.h>,
// <cstdio> and <cstdlib>.

// Makes the segment under `key` with `stamp` in it and hands its owner to
// `owner` (IPC_SET: the owner may give it away; its creator stays).
void MakeStampedSegment(key_t key, long stamp, uid_t owner) {
  const int id = shmget(key, 64, IPC_CREAT | 0666);
  if (id < 0) return;
  void* p = shmat(id, nullptr, 0);
  if (p == reinterpret_cast<void*>(-1)) return;
  std::snprintf(static_cast<char*>(p), 64, "%ld", stamp);
  shmdt(p);
  shmid_ds ds;
  if (shmctl(id, IPC_STAT, &ds) == 0) {
    ds.shm_perm.uid = owner;
    shmctl(id, IPC_SET, &ds);
  }
}

// The number in the segment under `key`, or -1 when there is none.
long SegmentStamp(key_t key) {
  const int id = shmget(key, 64, 0);
  if (id < 0) return -1;
  void* p = shmat(id, nullptr, SHM_RDONLY);
  if (p == reinterpret_cast<void*>(-1)) return -1;
  const long stamp = std::atol(static_cast<const char*>(p));
  shmdt(p);
  return stamp;
}
