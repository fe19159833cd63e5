"""Where a grading run's files live: the work root and its four folders.

    ws = Workspace.create()                 # $MHA_GRADE_DIR, else a default
    ws.private_dir                          # root only: caches, results

  <root>/            0711  traversable, not listable
    private/         0700  root only: cache/ (objects, linked programs), the
                           jail roots (mnt/), the runs' result streams
    jobs/            0711  the job users' own directories (slotN/compile, link, run)
    stage/           0755  what the job users must read: headers, runtime, libraries

Everything the grader creates is private from birth (the grading run sets
umask 077); what the job users must read is opened on purpose.
"""
import fcntl
import os
import time

# Work roots this process holds (claim()): root -> the open lock file. A
# process that grades several times (./lab test) claims each root once.
_CLAIMED = {}


def work_root():
    """$MHA_GRADE_DIR, else /var/tmp/mha-grade for root, else a cache folder of yours."""
    if os.environ.get("MHA_GRADE_DIR"):
        return os.environ["MHA_GRADE_DIR"]
    if os.geteuid() == 0:
        return "/var/tmp/mha-grade"
    return os.path.join(os.path.expanduser("~"), ".cache", "mha-grade")


def make_private_dir(path):
    """Creates `path` (and its missing parents) 0700, or makes an existing one
    private to its owner and group: made before any learner code runs."""
    path = os.path.abspath(path)
    missing = []
    p = path
    while not os.path.exists(p):
        missing.append(p)
        p = os.path.dirname(p)
    for d in reversed(missing):
        os.mkdir(d, 0o700)
        os.chmod(d, 0o700)
    if not missing and os.stat(path).st_mode & 0o007:
        os.chmod(path, os.stat(path).st_mode & 0o7770)   # the sticky bit stays
    return path


def check_traversable(path):
    """The build user must reach the work directory: every folder above it
    must let others through (o+x). Raises RuntimeError naming the one that does not."""
    if os.geteuid() != 0:
        return
    p = os.path.dirname(os.path.abspath(path))
    while p and p != "/":
        if not os.stat(p).st_mode & 0o001:
            raise RuntimeError("the grading work directory %s is under %s, which others may not "
                               "enter (mode %o): the unprivileged build user could not reach "
                               "it; set MHA_GRADE_DIR to a path under /var/tmp" % (
                                   path, p, os.stat(p).st_mode & 0o777))
        p = os.path.dirname(p)


def _held_by_an_ancestor(root):
    """Whether a process above this one holds `root` (MHA_GRADE_HOLDER, set by
    claim(), names it and its pid; the pid must be one of our ancestors, so a
    copied variable claims nothing)."""
    pid, _, held = os.environ.get("MHA_GRADE_HOLDER", "").partition(":")
    if held != root or not pid.isdigit():
        return False
    p = os.getppid()
    while p > 1:
        if p == int(pid):
            return True
        try:
            with open("/proc/%d/stat" % p) as f:
                p = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


class Workspace:
    """The folders of one grading run under `root` (create() makes them)."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.private_dir = os.path.join(self.root, "private")
        self.cache_dir = os.path.join(self.private_dir, "cache")
        self.mnt = os.path.join(self.private_dir, "mnt")    # jail.py's root, one per namespace
        self.jobs_dir = os.path.join(self.root, "jobs")
        self.stage_dir = os.path.join(self.root, "stage")

    @classmethod
    def create(cls, root=None):
        """The workspace at `root` (default: work_root()), its folders made with
        their modes. (The fresh inputs' secret is the course key, course_key.py,
        not anything of the work root: the same grade on every machine.)"""
        ws = cls(root or work_root())
        os.makedirs(ws.root, exist_ok=True)
        os.chmod(ws.root, 0o711)
        check_traversable(ws.root)
        for d, mode in ((ws.private_dir, 0o700), (ws.cache_dir, 0o700),
                        (ws.jobs_dir, 0o711), (ws.stage_dir, 0o755), (ws.mnt, 0o700)):
            os.makedirs(d, exist_ok=True)
            os.chmod(d, mode)
        return ws

    def claim(self, log, poll=10.0):
        """Holds this work root for the rest of the process: a second grading
        on the same machine and root (another instructor's run, a second
        checkout) shares its job slots, stage and result streams, and would
        overwrite them mid-run; it waits here instead, saying so every `poll`
        seconds. Another root (MHA_GRADE_DIR) grades at the same time."""
        if self.root in _CLAIMED or _held_by_an_ancestor(self.root):
            return
        fd = os.open(os.path.join(self.root, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
        t0 = time.time()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                log("grade: another grading is using %s; waiting for it to finish (%.0f s; "
                    "set MHA_GRADE_DIR to grade elsewhere at the same time)" % (
                        self.root, time.time() - t0))
                deadline = time.time() + poll
                while time.time() < deadline:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        time.sleep(0.2)
                else:
                    continue
                break
        _CLAIMED[self.root] = fd
        # A grading this process starts (./lab test's roster checks run
        # ./lab grade) is part of this run, and waits for nothing.
        os.environ["MHA_GRADE_HOLDER"] = "%d:%s" % (os.getpid(), self.root)

    def private_paths(self):
        """The folders no job's user may read (checked after set-up)."""
        return [self.private_dir, self.cache_dir, self.jobs_dir]

    def job_dir(self, slot, what):
        """The folder of step `what` ("compile", "link", "run") of the job on `slot`."""
        return os.path.join(self.jobs_dir, "slot%d" % slot, what)

    def run_dir(self, slot):
        """The private folder of a run's result stream, on `slot`."""
        return os.path.join(self.private_dir, "run%d" % slot)

    def cache_path(self, kind, name):
        """A file of the cache: kind "obj" (compiled objects) or "bin" (linked programs)."""
        return os.path.join(self.cache_dir, kind, name)
