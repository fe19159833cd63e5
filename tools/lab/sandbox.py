"""Where learner code is compiled, linked and run: an unprivileged user, limits, a jail.

The wall is ownership and file modes, not mounts. When the grader runs as
root (the default, and Gradescope's case):

  * every step that touches a learner's file (compiler, assembler, linker,
    the learner's process) runs as a user of its own: a numeric uid/gid that
    no account owns (SLOT_UID_BASE + slot), with no supplementary groups, so
    it reads only what "others" may read;
  * what must stay secret (the suite's checkout with its solutions, hidden
    tests and .git; the grader's caches and reports; the roster) is made
    unreadable to others by protect(), which then checks it as that user;
  * the learner's process is also chrooted into a directory holding only its
    own binary and the shared libraries it needs, with no writable path;
  * where the kernel allows it, it also gets new network, IPC and UTS
    namespaces (no network); in an unprivileged container it does not, and
    the report says so;
  * everything runs under wall-clock and rlimit bounds (limits.py), and every
    process of the slot's uid is killed after each step.

Without root none of the user separation is possible: learner code runs as
you, under limits only. That is fine for a learner grading their own work,
and the report says "isolation: limits only".

Every tool used here is Debian's: prlimit, setpriv and unshare (util-linux),
chroot and env (coreutils).
"""
import os
import shutil
import signal
import stat
import subprocess
import time

import limits

SLOT_UID_BASE = int(os.environ.get("MHA_SANDBOX_UID_BASE", "61000"))
_PATH = "/usr/local/bin:/usr/bin:/bin"


class Isolation:
    """What this machine allows, found once by probe()."""

    def __init__(self, root, setuid, chroot, namespaces):
        self.root = root
        self.setuid = setuid
        self.chroot = chroot
        self.namespaces = namespaces

    def describe(self):
        if not self.setuid:
            return {"summary": "limits only (not root: learner code runs as you)",
                    "separate_user": False, "chroot": False, "namespaces": False, "limits": True}
        parts = ["separate user"]
        if self.chroot:
            parts.append("chroot")
        parts.append("namespaces (no network)" if self.namespaces else
                     "no namespaces (the kernel refused them)")
        parts.append("limits")
        return {"summary": ", ".join(parts), "separate_user": True, "chroot": self.chroot,
                "namespaces": self.namespaces, "limits": True}


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


def probe(scratch):
    """Finds which layers work here. `scratch` is a private directory to try a jail in."""
    root = os.geteuid() == 0
    if not root:
        return Isolation(False, False, False, False)
    uid = SLOT_UID_BASE
    setuid = _quiet(_as_slot_user(uid) + ["true"])
    jail = os.path.join(scratch, "probe-jail")
    shutil.rmtree(jail, ignore_errors=True)
    os.makedirs(jail)
    chroot_ok = False
    if setuid:
        # A static-free check: chroot needs no binary inside to report success
        # or failure of the chroot call itself; "--skip-chdir" is not needed.
        true_bin = shutil.which("true")
        libroot = prepare_libroot(jail, [true_bin])
        shutil.copy(true_bin, os.path.join(libroot, "probe"))
        chroot_ok = _quiet(_chroot_as_slot_user(uid, libroot) + ["/probe"])
    namespaces = _quiet(["unshare", "--net", "--ipc", "--uts", "true"])
    shutil.rmtree(jail, ignore_errors=True)
    return Isolation(True, setuid, chroot_ok, namespaces)


def slot_uid(slot):
    return SLOT_UID_BASE + slot


# ---------------------------------------------------------------------------
# Secrets: unreadable to the slot users.

def _readable_as(uid, path):
    return _quiet(_as_slot_user(uid) + ["test", "-r", path])


def protect(paths, iso, log):
    """Makes each of `paths` unreadable to others (chmod o-rwx) when a slot user
    could read it, then checks again as that user. Returns the paths it changed;
    raises RuntimeError when a path stays readable."""
    if not iso.setuid:
        return []
    changed = []
    uid = slot_uid(0)
    for p in paths:
        if not os.path.exists(p):
            continue
        if _readable_as(uid, p):
            mode = os.stat(p).st_mode
            os.chmod(p, stat.S_IMODE(mode) & ~0o007)
            changed.append(p)
            log("grade: made %s private to its owner and group (chmod o-rwx): learner code "
                "runs as an unprivileged user that must not read it" % p)
        if _readable_as(uid, p):
            raise RuntimeError("%s is still readable by an unprivileged user after chmod o-rwx "
                               "(an ACL or a group?): grading would expose it" % p)
    return changed


# ---------------------------------------------------------------------------
# Running a command as a slot user, with limits.

def _prlimit(memory_mb, cpu_s, file_mb, nproc, nofile):
    return ["prlimit", "--as=%d" % (memory_mb << 20), "--cpu=%d" % cpu_s,
            "--fsize=%d" % (file_mb << 20), "--nproc=%d" % nproc, "--nofile=%d" % nofile,
            "--core=0", "--"]


def build_argv(argv, iso, slot, env):
    """argv of a compiler or linker command as the slot's user (no jail: it needs /usr)."""
    out = []
    if iso.namespaces:
        out += ["unshare", "--net", "--ipc", "--uts"]
    out += _prlimit(limits.COMPILE_MEMORY_MB, limits.COMPILE_CPU_SECONDS,
                    limits.COMPILE_FILE_MB, limits.COMPILE_PROCESSES, 256)
    if iso.setuid:
        out += _as_slot_user(slot_uid(slot))
    out += ["env", "-i"] + ["%s=%s" % kv for kv in sorted(env.items())] + argv
    return out


def learner_argv(jail, iso, slot, memory_mb):
    """argv that starts a learner's process (the binary /server inside `jail`).
    The trusted test process runs it (MHA_REMOTE_ARGV) for each fresh process."""
    env = ["OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "PATH=/"]
    out = []
    if iso.namespaces:
        out += [shutil.which("unshare"), "--net", "--ipc", "--uts"]
    out += [shutil.which("prlimit")] + _prlimit(memory_mb, limits.RUN_CPU_SECONDS, 0,
                                                limits.RUN_PROCESSES, limits.RUN_OPEN_FILES)[1:]
    out += [shutil.which("env"), "-i"] + env
    if iso.setuid and iso.chroot:
        out += _chroot_as_slot_user(slot_uid(slot), jail, shutil.which("chroot")) + ["/server"]
    elif iso.setuid:
        out += _as_slot_user(slot_uid(slot), shutil.which("setpriv")) + [
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


def kill_slot(iso, slot):
    """Kills every process of the slot's user (what a learner's process left behind)
    and removes what it wrote in the shared temporary directories."""
    if not iso.setuid:
        return
    uid = slot_uid(slot)
    for _ in range(3):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.stat("/proc/" + entry).st_uid == uid:
                    pids.append(int(entry))
            except OSError:
                pass
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
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


def give_to_slot(path, iso, slot):
    """A directory only the slot's user may use (for its build outputs)."""
    os.makedirs(path, exist_ok=True)
    if iso.setuid:
        os.chown(path, slot_uid(slot), slot_uid(slot))
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
