"""The ledger of one-off uids: every job runs as a uid no job ran as before.

claim_uid() draws a uid from a large range (MHA_SANDBOX_UID_BASE and
MHA_SANDBOX_UID_COUNT) and records the claim for good in a machine-wide
ledger (CLAIMS, one file per uid, created with O_EXCL), so that no later job,
no later grading and no concurrent grader on this machine ever runs as it
again: per-uid kernel state (the "user" keyring, the process count, files
left in /tmp) cannot reach another job. processes_of() finds what such a uid
left running (sandbox.kill_job kills it).
"""
import os
import random
import threading
import time

# One-off uids: a range no account uses. A base set by hand (to keep two
# graders' ranges apart, as the self-test's users do) gets 1,000 uids unless
# MHA_SANDBOX_UID_COUNT says otherwise.
DEFAULT_UID_BASE = 1500000000
DEFAULT_UID_COUNT = 1000000
# The ledger of claimed uids: machine-wide, whatever MHA_GRADE_DIR says, so
# that concurrent graders never pick the same uid.
CLAIMS = "/var/lib/mha-grade/uids"


def uid_range():
    """(first uid, count) of the one-off uids, from the environment."""
    base_s = os.environ.get("MHA_SANDBOX_UID_BASE", "")
    count_s = os.environ.get("MHA_SANDBOX_UID_COUNT", "")
    try:
        base = int(base_s) if base_s else DEFAULT_UID_BASE
        count = int(count_s) if count_s else (1000 if base_s else DEFAULT_UID_COUNT)
    except ValueError:
        raise RuntimeError("MHA_SANDBOX_UID_BASE=%r and MHA_SANDBOX_UID_COUNT=%r must be whole "
                           "numbers (a uid range no account uses)" % (base_s, count_s))
    if base < 1000 or count < 1 or base + count > 4294967294:
        raise RuntimeError("MHA_SANDBOX_UID_BASE=%d and MHA_SANDBOX_UID_COUNT=%d: the uids must "
                           "lie between 1000 and 4294967294 (a range no account uses)"
                           % (base, count))
    return base, count


_claim_lock = threading.Lock()
_rng = random.SystemRandom()
_claimed = []           # every uid this process claimed, in order


def claimed():
    """The uids this process has claimed so far."""
    with _claim_lock:
        return list(_claimed)


def processes_of(uids, zombies=True):
    """{pid: uid} of the processes whose uid is in `uids` (with `zombies`,
    also those that ended and wait for their parent to reap them)."""
    uids = set(uids)
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                u = os.stat("/proc/" + entry).st_uid
                if u in uids and not zombies:
                    with open("/proc/%s/stat" % entry) as f:
                        if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                            continue
            except (OSError, IndexError):
                continue
            if u in uids:
                found[int(entry)] = u
    return found


def uid_busy(uid):
    """Whether a process runs as `uid` (an account or another grader's old scheme)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat("/proc/" + entry).st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def claim_uid():
    """A uid no job on this machine ran as before, recorded as used for good."""
    base, count = uid_range()
    os.makedirs(CLAIMS, mode=0o700, exist_ok=True)
    with _claim_lock:
        tries = [base + _rng.randrange(count) for _ in range(32)]
        for attempt in range(2):
            for uid in tries:
                try:
                    fd = os.open(os.path.join(CLAIMS, str(uid)),
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    continue
                os.write(fd, ("%d %d\n" % (os.getpid(), time.time())).encode())
                os.close(fd)
                if uid_busy(uid):   # claimed now, so never tried again
                    continue
                _claimed.append(uid)
                return uid
            # A crowded range: look for what is left.
            used = set(os.listdir(CLAIMS))
            tries = [u for u in range(base, base + count) if str(u) not in used]
            _rng.shuffle(tries)
            tries = tries[:64]
    raise RuntimeError("every one-off uid of %d..%d has been used (claims in %s): set "
                       "MHA_SANDBOX_UID_BASE and MHA_SANDBOX_UID_COUNT to a fresh range that no "
                       "account uses" % (base, base + count - 1, CLAIMS))



def as_user(uid, setpriv="setpriv"):
    """argv prefix: what follows runs as `uid` (user and group), with no
    supplementary groups and no way to gain privileges."""
    return [setpriv, "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "--no-new-privs"]
