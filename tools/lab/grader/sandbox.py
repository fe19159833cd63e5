"""Where learner code is compiled, linked and run: a one-off user, namespaces, limits, jails.

The wall is a fresh identity per job, namespaces where the kernel has them,
and ownership and file modes everywhere. When the grader runs as root (the
default, and Gradescope's case):

  * every job (one lab of one submission) gets a uid of its own, used once:
    claim_uid() draws it from a large range (MHA_SANDBOX_UID_BASE and
    MHA_SANDBOX_UID_COUNT) and records the claim in a machine-wide ledger
    (CLAIMS, one file per uid, created with O_EXCL), so that no later job, no
    later grading and no concurrent grader on this machine ever runs as it
    again: per-uid kernel state (the "user" keyring, the process count, files
    left in /tmp) cannot reach another job. That uid has no account and no
    supplementary groups, so it reads only what "others" may read;
  * what must stay secret (the suite's checkout with its solutions, hidden
    tests and .git; the grader's caches and reports; the roster and the
    output directory) is made unreadable to others by protect(), and every
    path the grader writes is checked as such a user (check_private());
  * the compiler, assembler, linker, nm and readelf run in a jail (jail.py):
    new mount, pid, IPC, network and UTS namespaces, a tmpfs root holding only
    /usr, the staged headers and runtime (read-only) and the job's own
    directory; where mount namespaces are refused they run as the job's uid
    with the file system's modes as the wall;
  * the learner's process is chrooted into a directory holding only its own
    binary and the shared libraries it needs, with no writable path, in new
    pid, IPC, network and UTS namespaces;
  * a pid namespace per process (its init's end kills every process left,
    zombies included) and, where cgroup v2 offers memory, pids and cpu, a
    cgroup per job with its own limits, killed as a whole at the end;
  * everything runs under wall-clock and rlimit bounds (limits.py), and every
    process of the job's uid is killed at the end of the job.

Each layer is probed; describe() names the ones missing on this machine
(an unprivileged container has no namespaces and no cgroup of its own).
Without root none of the user separation is possible: learner code runs as
you, under limits only, and the report says "isolation: limits only".

Every tool used here is Debian's: prlimit, setpriv and unshare (util-linux),
chroot and env (coreutils), /usr/bin/python3 for jail.py.
"""
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

import limits

_PATH = "/usr/local/bin:/usr/bin:/bin"
_HERE = os.path.dirname(os.path.abspath(__file__))
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


def _uid_busy(uid):
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
                if _uid_busy(uid):   # claimed now, so never tried again
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


class Isolation:
    """What this machine allows, found once by probe()."""

    def __init__(self, root, setuid, chroot, namespaces, pidns=False, jail=False, cgroup=None,
                 missing=None, probe_uid=None):
        self.root = root
        self.setuid = setuid
        self.chroot = chroot
        self.namespaces = namespaces
        self.pidns = pidns
        self.jail = jail              # build steps in a mount namespace (jail.py)
        self.cgroup = cgroup          # the grader's cgroup v2 directory, or None
        self.missing = missing or {}  # layer: why it is missing
        self.probe_uid = probe_uid    # a one-off uid for the self-checks (runs no learner code)

    def describe(self):
        if not self.setuid:
            return {"summary": "limits only (not root: learner code runs as you)",
                    "separate_user": False, "chroot": False, "namespaces": False, "limits": True,
                    "fresh_uid_per_job": False, "pid_namespace": False, "jailed_compiler": False,
                    "cgroup": False, "missing": {"separate user": "not root"}}
        parts = ["fresh user per job"]
        if self.chroot:
            parts.append("chroot")
        parts.append("namespaces (pid, ipc, no network)" if self.namespaces and self.pidns else
                     "namespaces (ipc, no network)" if self.namespaces else
                     "no namespaces (the kernel refused them)")
        parts.append("jailed compiler" if self.jail else
                     "compiler unjailed (file modes only)")
        parts.append("cgroup per job" if self.cgroup else "no cgroup")
        parts.append("limits")
        return {"summary": ", ".join(parts), "separate_user": True, "chroot": self.chroot,
                "namespaces": self.namespaces, "limits": True, "fresh_uid_per_job": True,
                "pid_namespace": self.pidns, "jailed_compiler": self.jail,
                "cgroup": bool(self.cgroup), "missing": dict(self.missing)}


def _quiet(argv, **kw):
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20, **kw).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _as_slot_user(uid, setpriv="setpriv"):
    """argv prefix: what follows runs as `uid` (user and group), with no
    supplementary groups and no way to gain privileges."""
    return [setpriv, "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "--no-new-privs"]


def _chroot_as_slot_user(uid, jail, chroot="chroot"):
    """argv prefix: what follows runs as `uid` with `jail` as its root."""
    return [chroot, "--userspec=%d:%d" % (uid, uid), "--groups=%d" % uid, jail]


def _jail_python():
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def probe(scratch):
    """Finds which layers work here. `scratch` is a private directory to try a jail in."""
    root = os.geteuid() == 0
    if not root:
        return Isolation(False, False, False, False)
    missing = {}
    uid = claim_uid()
    setuid = _quiet(_as_slot_user(uid) + ["true"])
    jail = os.path.join(scratch, "probe-jail")
    shutil.rmtree(jail, ignore_errors=True)
    os.makedirs(jail)
    chroot_ok = False
    if setuid:
        # chroot needs no binary inside to report the chroot call's own failure.
        true_bin = shutil.which("true")
        libroot = prepare_libroot(jail, [true_bin])
        shutil.copy(true_bin, os.path.join(libroot, "probe"))
        chroot_ok = _quiet(_chroot_as_slot_user(uid, libroot) + ["/probe"])
        if not chroot_ok:
            missing["chroot"] = "chroot was refused (no CAP_SYS_CHROOT?)"
    namespaces = _quiet(["unshare", "--net", "--ipc", "--uts", "true"])
    if not namespaces:
        missing["namespaces"] = "unshare --net --ipc --uts was refused (no CAP_SYS_ADMIN?)"
    pidns = _quiet(["unshare", "--pid", "--fork", "--kill-child", "true"])
    if not pidns:
        missing["pid namespace"] = ("unshare --pid was refused: leftover processes are killed "
                                    "by uid instead")
    jail_ok = False
    if setuid:
        mnt = os.path.join(scratch, "mnt")
        os.makedirs(mnt, mode=0o700, exist_ok=True)
        work = os.path.join(scratch, "probe-work")
        os.makedirs(work, exist_ok=True)
        os.chown(work, uid, uid)
        os.chmod(work, 0o700)
        spec = {"mnt": mnt, "ro": [], "rw": [work], "uid": uid, "cwd": work,
                "env": {"PATH": "/usr/bin:/bin"}, "rlimits": {}, "cgroup": "",
                "argv": ["sh", "-c", "test -x /usr/bin/g++ && ! test -e %s" % scratch.rstrip("/")
                         + "/seed_secret && touch ok"]}
        jail_ok = _quiet([_jail_python(), "-I", "-S", os.path.join(_HERE, "jail.py"),
                          json.dumps(spec)]) and os.path.exists(os.path.join(work, "ok"))
        shutil.rmtree(work, ignore_errors=True)
        if not jail_ok:
            missing["jailed compiler"] = ("no mount namespace (unshare --mount refused): the "
                                          "compiler sees the file system, guarded by its modes")
    cg, why = _probe_cgroup(scratch)
    if not cg:
        missing["cgroup"] = why
    shutil.rmtree(jail, ignore_errors=True)
    return Isolation(True, setuid, chroot_ok, namespaces, pidns, jail_ok, cg, missing, uid)


# ---------------------------------------------------------------------------
# cgroup v2: a cgroup per job, with its own memory, pids and cpu limits.

_CG_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
_CG_NEEDED = ("memory", "pids", "cpu")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _probe_cgroup(scratch):
    """(the grader's parent cgroup for jobs, "") where cgroup v2 has memory, pids
    and cpu and a child can be made, filled, limited and killed; else (None, why)."""
    for root in _CG_ROOTS:
        if os.path.exists(os.path.join(root, "cgroup.controllers")):
            break
    else:
        return None, "no cgroup v2 file system (/sys/fs/cgroup is v1 or absent)"
    with open(os.path.join(root, "cgroup.controllers")) as f:
        have = f.read().split()
    lacking = [c for c in _CG_NEEDED if c not in have]
    if lacking:
        return None, ("cgroup v2 lacks the %s controller%s here (held by cgroup v1 or not "
                      "delegated): per-job memory, pids and cpu limits are rlimits only"
                      % ("/".join(lacking), "s" if len(lacking) > 1 else ""))
    parent = os.path.join(root, "mha-grade-%d" % os.getpid())
    try:
        # Processes may not live in a cgroup that hands controllers to children
        # (except the root): the jobs' parent hangs off the root.
        _write(os.path.join(root, "cgroup.subtree_control"), "+memory +pids +cpu")
        os.makedirs(parent, exist_ok=True)
        _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +pids +cpu")
        test = cgroup_for_job(parent, "probe", 64 << 20, 8)
        ok = _quiet(["/bin/sh", "-c", 'echo $$ > "$0" && exec true',
                     os.path.join(test, "cgroup.procs")])
        kill_cgroup(test)
        if not ok:
            raise OSError("a process could not join it")
        return parent, ""
    except OSError as e:
        try:
            os.rmdir(parent)
        except OSError:
            pass
        return None, "cgroup v2 is read-only or refuses a child here (%s)" % e


def cgroup_for_job(parent, name, memory_bytes, pids):
    d = os.path.join(parent, "job-%s" % name)
    os.makedirs(d, exist_ok=True)
    _write(os.path.join(d, "memory.max"), str(memory_bytes))
    try:
        _write(os.path.join(d, "memory.swap.max"), "0")
    except OSError:
        pass
    _write(os.path.join(d, "pids.max"), str(pids))
    _write(os.path.join(d, "cpu.weight"), "100")
    return d


def kill_cgroup(d):
    """Kills every process of cgroup `d` and removes it."""
    if not d or not os.path.isdir(d):
        return
    for _ in range(50):
        try:
            _write(os.path.join(d, "cgroup.kill"), "1")
        except OSError:                 # before Linux 5.14: one by one
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except OSError:
                            pass
            except OSError:
                return
        try:
            os.rmdir(d)
            return
        except OSError:
            time.sleep(0.02)


def remove_cgroup_parent(parent):
    if parent and os.path.isdir(parent):
        for e in os.listdir(parent):
            if e.startswith("job-"):
                kill_cgroup(os.path.join(parent, e))
        try:
            os.rmdir(parent)
        except OSError:
            pass


# ---------------------------------------------------------------------------
# Secrets: unreadable to the job users.

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
    p = subprocess.run(_as_slot_user(uid) + [_jail_python(), "-I", "-S", "-c", _CHECKER],
                       input="\0".join(paths), capture_output=True, text=True, timeout=120,
                       env={"PATH": _PATH})
    return [l for l in p.stdout.splitlines() if l]


def _readable_as(uid, path):
    return bool(readable_as(uid, [path]))


def protect(paths, iso, log):
    """Makes each of `paths` unreadable to others (chmod o-rwx) when a job user
    could read it, then checks again as that user. Returns the paths it changed;
    raises RuntimeError when a path stays readable."""
    if not iso.setuid:
        return []
    changed = []
    uid = iso.probe_uid
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


def check_private(paths, iso):
    """Raises RuntimeError when a job's user can read any of `paths` (what the
    grader wrote: reports, caches, work directories)."""
    if not iso.setuid:
        return
    found = readable_as(iso.probe_uid, paths)
    if found:
        raise RuntimeError("%s, which the grader wrote, is readable by an unprivileged user: "
                           "learner code could read it" % found[0])


# ---------------------------------------------------------------------------
# Running a command as a slot user, with limits.

def _prlimit(memory_mb, cpu_s, file_mb, nproc, nofile):
    return ["prlimit", "--as=%d" % (memory_mb << 20), "--cpu=%d" % cpu_s,
            "--fsize=%d" % (file_mb << 20), "--nproc=%d" % nproc, "--nofile=%d" % nofile,
            "--core=0", "--"]


class Job:
    """One job's identity: a one-off uid, the slot (work directory) it runs in,
    and its cgroup where cgroup v2 allows one."""

    def __init__(self, iso, slot, mnt):
        self.slot = slot
        self.mnt = mnt                      # an empty directory for jail.py's root
        self._iso = iso
        self._uid = None
        self.cgroup = None

    @property
    def uid(self):
        """Claimed when first needed: a job served from the caches (or a lab not
        submitted) uses none."""
        if self._uid is None and self._iso.setuid:
            self._uid = claim_uid()
            if self._iso.cgroup:
                try:
                    self.cgroup = cgroup_for_job(self._iso.cgroup, str(self._uid),
                                                 limits.JOB_MEMORY_MB << 20, limits.JOB_PROCESSES)
                except OSError:
                    self.cgroup = None
        return self._uid

    def started(self):
        return self._uid is not None

    def procs(self):
        return os.path.join(self.cgroup, "cgroup.procs") if self.cgroup else ""


def in_cgroup(job):
    """argv prefix: what follows runs in the job's cgroup (when it has one)."""
    if not job.cgroup:
        return []
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', job.procs()]


def build_argv(argv, iso, job, env, ro=(), rw=()):
    """argv of a compiler or linker command as the job's user: in jail.py's
    mount namespace where the kernel allows it (only `ro`, `rw`, /usr and a
    private /tmp visible), else with the whole file system visible, guarded by
    its modes."""
    rl = {"AS": limits.COMPILE_MEMORY_MB << 20, "CPU": limits.COMPILE_CPU_SECONDS,
          "FSIZE": limits.COMPILE_FILE_MB << 20, "NPROC": limits.COMPILE_PROCESSES,
          "NOFILE": 256, "CORE": 0}
    uid = job.uid                       # claims it (and the job's cgroup) if not yet done
    if iso.setuid and iso.jail:
        spec = {"mnt": job.mnt, "ro": list(ro), "rw": list(rw), "uid": uid,
                "cwd": rw[0] if rw else "/", "env": env, "rlimits": rl,
                "cgroup": job.procs(), "argv": list(argv)}
        return [_jail_python(), "-I", "-S", os.path.join(_HERE, "jail.py"), json.dumps(spec)]
    out = in_cgroup(job)
    if iso.namespaces:
        out += ["unshare", "--net", "--ipc", "--uts"]
        if iso.pidns:
            out += ["--pid", "--fork", "--kill-child"]
    out += _prlimit(limits.COMPILE_MEMORY_MB, limits.COMPILE_CPU_SECONDS,
                    limits.COMPILE_FILE_MB, limits.COMPILE_PROCESSES, 256)
    if iso.setuid:
        out += _as_slot_user(uid)
    out += ["env", "-i"] + ["%s=%s" % kv for kv in sorted(env.items())] + list(argv)
    return out


def learner_argv(jail, iso, job, memory_mb):
    """argv that starts a learner's process (the binary /server inside `jail`).
    The trusted test process runs it (MHA_REMOTE_ARGV) for each fresh process:
    its own pid namespace, so that its end kills whatever it forked."""
    env = ["OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "PATH=/"]
    out = []
    if iso.namespaces:
        out += [shutil.which("unshare"), "--net", "--ipc", "--uts"]
        if iso.pidns:
            out += ["--pid", "--fork", "--kill-child"]
    out += [shutil.which("prlimit")] + _prlimit(memory_mb, limits.RUN_CPU_SECONDS, 0,
                                                limits.RUN_PROCESSES, limits.RUN_OPEN_FILES)[1:]
    out += [shutil.which("env"), "-i"] + env
    if iso.setuid and iso.chroot:
        out += _chroot_as_slot_user(job.uid, jail, shutil.which("chroot")) + ["/server"]
    elif iso.setuid:
        out += _as_slot_user(job.uid, shutil.which("setpriv")) + [
            os.path.join(jail, "server")]
    else:
        out += [os.path.join(jail, "server")]
    return out


class Result:
    def __init__(self, returncode, output, timed_out, seconds):
        self.returncode = returncode
        self.output = output
        self.timed_out = timed_out
        self.seconds = seconds


def run(argv, cwd, timeout, keep_output=64 << 10, env=None):
    """Runs argv in its own process group; kills the group at the timeout.
    Keeps the last `keep_output` bytes of stdout+stderr."""
    t0 = time.time()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True,
                         env=env if env is not None else {"PATH": _PATH})
    out = bytearray()
    timed_out = False
    try:
        # Read in chunks so a flood of output cannot grow this process.
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        deadline = t0 + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                timed_out = True
                break
            if not sel.select(timeout=min(left, 1.0)):
                if p.poll() is not None:
                    break
                continue
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
            if len(out) > keep_output:
                del out[:len(out) - keep_output]
        sel.close()
    finally:
        if timed_out or p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        p.stdout.close()
    return Result(p.returncode, out.decode("utf-8", "replace"), timed_out, time.time() - t0)


def kill_job(iso, job, final=False):
    """Kills every process of the job's user (what a learner's process left
    behind) and removes what it wrote in the shared temporary directories;
    `final`: the job is over, its cgroup goes too."""
    if not iso.setuid or not job.started():
        return
    uid = job.uid
    for attempt in range(5):
        pids = list(processes_of([uid], zombies=False))   # a zombie cannot be killed
        if not pids:
            break
        if attempt == 0:
            # As the uid itself, kill(-1) reaches all of its processes at once,
            # even ones forking as fast as they can (where no pid namespace did).
            _quiet(_as_slot_user(uid) + ["kill", "-KILL", "-1"])
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    if final:
        kill_cgroup(job.cgroup)
        job.cgroup = None
    for tmp in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            entries = os.listdir(tmp)
        except OSError:
            continue
        for e in entries:
            p = os.path.join(tmp, e)
            try:
                if os.lstat(p).st_uid == uid:
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        os.unlink(p)
            except OSError:
                pass


def give_to_job(path, iso, job):
    """A directory only the job's user may use (for its build outputs)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if iso.setuid:
        os.chown(path, job.uid, job.uid)
    os.chmod(path, 0o700)


def prepare_libroot(directory, binaries):
    """Copies the shared libraries `binaries` need (per ldd) into directory/libroot,
    under their usual paths: the read-only part of a learner's jail."""
    libroot = os.path.join(directory, "libroot")
    os.makedirs(libroot, exist_ok=True)
    for b in binaries:
        out = subprocess.run(["ldd", b], capture_output=True, text=True).stdout
        for line in out.splitlines():
            for token in line.split():
                if token.startswith("/") and os.path.exists(token):
                    dest = os.path.join(libroot, token.lstrip("/"))
                    if not os.path.exists(dest):
                        os.makedirs(os.path.dirname(dest), exist_ok=True)
                        shutil.copy2(os.path.realpath(token), dest)
    for dirpath, dirnames, filenames in os.walk(libroot):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o755)
    return libroot


def make_jail(libroot, server, jail):
    """A learner's jail: hard links to the libraries, a copy of its binary, all
    owned by root and read-only to the learner."""
    shutil.rmtree(jail, ignore_errors=True)
    shutil.copytree(libroot, jail, copy_function=os.link)
    shutil.copy(server, os.path.join(jail, "server"))
    os.chmod(os.path.join(jail, "server"), 0o755)
    os.chmod(jail, 0o755)
