"""Secrets: what learner code must not read stays unreadable to the job users.

protect() makes each path the grader must keep secret (the suite's checkout
with its solutions, hidden tests and .git; Bazel's outputs; the roster and
the output directory) unreadable to others when an unprivileged uid could
read it; check_private() raises when a job's user could read a path the
grader wrote. Both ask as such a user (readable_as), never from the modes alone.
"""
import os
import stat
import subprocess

from grader.process import PATH, system_python
from grader.uids import as_user

_CHECKER = r"""
import os, sys
for p in sys.stdin.read().split("\0"):
    if not p:
        continue
    try:
        if os.path.isdir(p):
            os.listdir(p)
        else:
            os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
        print(p)
    except OSError:
        pass
"""


def readable_as(uid, paths):
    """Those of `paths` that `uid` can read (a directory: list), tried as that
    user in one process."""
    paths = [p for p in paths if os.path.lexists(p)]
    if not paths:
        return []
    p = subprocess.run(as_user(uid) + [system_python(), "-I", "-S", "-c", _CHECKER],
                       input="\0".join(paths), capture_output=True, text=True, timeout=120,
                       env={"PATH": PATH})
    return [l for l in p.stdout.splitlines() if l]


def protect(paths, uid, log):
    """Makes each of `paths` unreadable to others (chmod o-rwx) when `uid` (a
    one-off uid that runs no learner code) could read it, then checks again as
    that user. Returns the paths it changed; raises RuntimeError when a path
    stays readable."""
    changed = []
    for p in readable_as(uid, paths):
        mode = os.stat(p).st_mode
        os.chmod(p, stat.S_IMODE(mode) & ~0o007)
        changed.append(p)
        log("grade: made %s private to its owner and group (chmod o-rwx): learner code "
            "runs as an unprivileged user that must not read it" % p)
    still = readable_as(uid, changed)
    if still:
        raise RuntimeError("%s is still readable by an unprivileged user after chmod o-rwx "
                           "(an ACL or a group?): grading would expose it" % still[0])
    return changed


def check_private(paths, uid):
    """Raises RuntimeError when `uid`, standing for a job's user, can read any
    of `paths` (what the grader wrote: reports, caches, work directories)."""
    found = readable_as(uid, paths)
    if found:
        raise RuntimeError("%s, which the grader wrote, is readable by an unprivileged user: "
                           "learner code could read it" % found[0])


