"""A job's System V IPC objects: found, removed as the job's own uid, checked gone.

Where the learner's process has no IPC namespace of its own (a container
without CAP_SYS_ADMIN, as Gradescope's and Docker's by default), a shared
memory segment, message queue or semaphore set it makes outlives it, and a
later job could find it. So every object a job's uid created or owns is
removed when the job ends (sandbox.kill_job), and what a crashed grading
left is removed when the next one starts (remove_stale).

The kernel lets an object's creator or owner remove it, and anybody with
CAP_SYS_ADMIN; root without that capability may not remove another uid's
segment. The creator cannot be changed (IPC_SET hands on the owner only), so
the removal runs as the creator, the job's own uid (ipcrm under setpriv),
which works with or without the capability. Then the objects are listed
again: any that is still there raises IpcCleanupError, which stops the
grading with a message naming it (fail closed: a grade that a later job's
residue could change is no grade).
"""
import os

from grader import process
from reports import messages
from grader.uids import as_user, uid_busy, uid_range

SYSVIPC = "/proc/sysvipc"
_KINDS = {"shm": ("shmid", "-m", "shared memory segment"),
          "msg": ("msqid", "-q", "message queue"),
          "sem": ("semid", "-s", "semaphore set")}


class GradingStopped(RuntimeError):
    """A fault that must stop the whole grading, not cost one lab: grade.grade_all
    lets it through, and ./lab grade prints it."""


class IpcCleanupError(GradingStopped):
    pass


def sysvipc_objects(sysvipc=SYSVIPC):
    """(kind, id, cuid, uid) of every System V shared memory segment, message
    queue and semaphore set of this IPC namespace, read from /proc/sysvipc."""
    for kind, (id_column, _, _) in _KINDS.items():
        try:
            with open(os.path.join(sysvipc, kind)) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        head = lines[0].split()
        try:
            at_id, at_uid, at_cuid = head.index(id_column), head.index("uid"), head.index("cuid")
        except ValueError:
            continue
        for line in lines[1:]:
            cols = line.split()
            try:
                yield kind, int(cols[at_id]), int(cols[at_cuid]), int(cols[at_uid])
            except (IndexError, ValueError):
                continue


def objects_of(uid, sysvipc=SYSVIPC):
    """[(kind, id)] of the objects `uid` created or owns (the owner may be
    handed on with IPC_SET; the creator may not)."""
    return [(kind, ident) for kind, ident, cuid, owner in sysvipc_objects(sysvipc)
            if uid in (owner, cuid)]


def objects_in_range(first, count, sysvipc=SYSVIPC):
    """[(kind, id, uid)] of the objects that a one-off uid of
    first..first+count-1 created or owns (uid: the creator when it is one,
    else the owner): what a job of an earlier grading left."""
    found = []
    for kind, ident, cuid, owner in sysvipc_objects(sysvipc):
        for u in (cuid, owner):
            if first <= u < first + count:
                found.append((kind, ident, u))
                break
    return found


def _named(objects):
    return ", ".join("%s %d" % (_KINDS[kind][2], ident) for kind, ident in objects)


def remove_as(uid, objects, sysvipc=SYSVIPC):
    """Removes `objects` [(kind, id)] as `uid`, their creator or owner; raises
    IpcCleanupError naming those that are still there afterwards."""
    if not objects:
        return 0
    argv = ["ipcrm"]
    for kind, ident in objects:
        argv += [_KINDS[kind][1], str(ident)]
    res = process.run(as_user(uid) + argv, cwd="/", timeout=30)
    # Still there: the same object (its id, and `uid` its creator or owner).
    left = [o for o in objects if o in set(objects_of(uid, sysvipc))]
    if left:
        raise IpcCleanupError(
            "grading stopped: the System V IPC objects of job uid %d (%s) could not be removed "
            "(ipcrm as that uid: %s), and a later job could read them. Remove them (ipcrm %s, "
            "as root with CAP_SYS_ADMIN or as uid %d), then grade again" % (
                uid, _named(left), messages.printable(res.output or "exit %s" % res.returncode,
                                                      200),
                " ".join("%s %d" % (_KINDS[k][1], i) for k, i in left), uid))
    return len(objects)


def remove_job_objects(uid, sysvipc=SYSVIPC):
    """Removes every object of a job's `uid` (objects_of); how many."""
    return remove_as(uid, objects_of(uid, sysvipc), sysvipc)


def remove_stale(sysvipc=SYSVIPC):
    """Removes the objects of every one-off uid (uids.uid_range) whose job is
    over (no process runs as it), each as that uid; how many."""
    first, count = uid_range()
    by_uid = {}
    for kind, ident, u in objects_in_range(first, count, sysvipc):
        if not uid_busy(u):
            by_uid.setdefault(u, []).append((kind, ident))
    return sum(remove_as(u, objects, sysvipc) for u, objects in sorted(by_uid.items()))
