"""Runs one untrusted test process with limits, outside Bazel's test runner.

The strongest isolation this machine allows is used, chosen once by a probe:

  namespaces  new mount, PID, network, IPC and UTS namespaces (a user
              namespace too when not root); the process is chrooted into an
              in-memory root that holds /usr, /etc and the /lib links
              read-only, its own binary, its own input files and a private
              /tmp: no checkout, no solution, no golden it is not given, no
              other lab, no network. As root it also runs as the user
              nobody; either way under a process limit (fork bombs).
  chroot      (no namespaces, but root: e.g. an unprivileged container) a
              chroot jail on disk with copies of the shared libraries the
              binary needs, as nobody.
  plain       (neither) rlimits only, in a scratch directory; reported as
              reduced isolation.

Always: an address-space limit, a core-size limit of 0, a file-size limit,
a per-test and a per-run wall-clock limit, and a clean environment. The
process's exit status, output and files are never trusted for points: the
verdicts come over the authenticated channel (protocol.py).
"""
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time

import protocol
import workspace

NOBODY = 65534
OUTPUT_KEEP = 16 << 10
FILE_LIMIT = 64 << 20
NPROC = 64

_NS_SCRIPT = r'''
set -e
S="$1"; shift
R="$S/root"
mount --make-rprivate /
mount -t tmpfs -o size=512m,mode=0755 mha-jail "$R"
cd "$R"
mkdir usr etc tmp work dev jail
for d in usr etc; do
  mount --bind "/$d" "$d"; mount -o remount,bind,ro,nosuid,nodev "$d"
done
for l in bin lib lib32 lib64 libx32 sbin; do
  if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$l"
  elif [ -d "/$l" ]; then mkdir "$l"; mount --bind "/$l" "$l"; mount -o remount,bind,ro,nosuid,nodev "$l"
  fi
done
for d in null zero urandom random; do
  touch "dev/$d"; mount --bind "/dev/$d" "dev/$d"
done
cp "$S/test" jail/test
chmod 0755 jail/test
cp -R "$S/work/." work/
chmod -R a+rX work
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev mha-tmp tmp
mount -o remount,ro,bind "$R"
cd /
exec /usr/bin/prlimit --core=0 --fsize=$MHA_FSIZE --nofile=256 --as=$MHA_AS --cpu=$MHA_CPU $MHA_NPROC_FLAG \
  /usr/sbin/chroot "$R" $MHA_SETPRIV /usr/bin/env -C /work -- "$@"
'''


class RunResult:
    def __init__(self):
        self.events = []
        self.rejected = 0
        self.lost = 0
        self.returncode = None
        self.timed_out = False      # killed by the grader's wall-clock limit
        self.timeout_s = 0
        self.output = ""
        self.seconds = 0.0
        self.overflow = False

    def signal_name(self):
        rc = self.returncode
        sig = None
        if rc is not None and rc < 0:
            sig = -rc
        elif rc is not None and rc > 128:
            sig = rc - 128
        if sig is None:
            return None
        try:
            return signal.Signals(sig).name
        except ValueError:
            return "signal %d" % sig


# ---------------------------------------------------------------------------
# Strategy probe

_STRATEGY = None


def _is_root():
    return os.geteuid() == 0


def strategy():
    """The isolation used on this machine: "namespaces", "chroot" or "plain"."""
    global _STRATEGY
    if _STRATEGY is None:
        forced = os.environ.get("MHA_GRADE_SANDBOX")
        for s in ([forced] if forced else ["namespaces", "chroot", "plain"]):
            try:
                res = run("/usr/bin/true", {}, [], test_timeout=30, total_timeout=30,
                          memory_mb=256, secret=None, strategy_name=s)
                if res.returncode == 0:
                    _STRATEGY = s
                    break
            except OSError:
                continue
        else:
            _STRATEGY = "plain"
    return _STRATEGY


def describe_strategy(name=None):
    name = name or strategy()
    return {
        "namespaces": "full: private filesystem view, no network, private /tmp, own PID space" +
                      (", user nobody" if _is_root() else ""),
        "chroot": "chroot jail as user nobody; network and /tmp are not private",
        "plain": "reduced: resource limits only; the test process can read this machine's files",
    }[name]


# ---------------------------------------------------------------------------
# Staging


def _stage(binary, files, plain):
    if plain:  # must be reachable by the user nobody
        stage = tempfile.mkdtemp(prefix="mha-run-")
    else:
        os.makedirs(workspace.RUNS, exist_ok=True)
        stage = tempfile.mkdtemp(prefix="run-", dir=workspace.RUNS)
    os.chmod(stage, 0o711)
    shutil.copyfile(binary, os.path.join(stage, "test"))
    os.chmod(os.path.join(stage, "test"), 0o755)
    work = os.path.join(stage, "work")
    os.makedirs(work)
    for rel, src in sorted(files.items()):
        dst = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
    for dirpath, dirnames, filenames in os.walk(work):
        os.chmod(dirpath, 0o755)
        for fn in filenames:
            os.chmod(os.path.join(dirpath, fn), 0o644)
    os.makedirs(os.path.join(stage, "root"))
    return stage


_LIBS = {}


def _ldconfig_map():
    if not _LIBS:
        out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
        for line in out.splitlines()[1:]:
            if "=>" in line and "x86-64" in line or "=>" in line and "64bit" in line:
                name = line.strip().split(" ", 1)[0]
                path = line.split("=>", 1)[1].strip()
                _LIBS.setdefault(name, path)
    return _LIBS


def _needed(path):
    out = subprocess.run(["readelf", "-d", "-l", "-W", path], capture_output=True,
                         text=True).stdout
    needed, interp = [], None
    for line in out.splitlines():
        if "(NEEDED)" in line and "[" in line:
            needed.append(line.split("[", 1)[1].split("]", 1)[0])
        if "Requesting program interpreter:" in line:
            interp = line.split(":", 1)[1].strip().rstrip("]")
    return needed, interp


def _populate_chroot(root, binary):
    """Copies the binary's shared libraries (resolved by the trusted ldconfig/readelf) into root."""
    libs = _ldconfig_map()
    todo, seen = [binary], set()
    needed_all, interp = [], None
    while todo:
        p = todo.pop()
        n, i = _needed(p)
        interp = interp or i
        for name in n:
            if name in seen:
                continue
            seen.add(name)
            src = libs.get(name)
            if src:
                needed_all.append((name, os.path.realpath(src)))
                todo.append(os.path.realpath(src))
    libdir = os.path.join(root, "lib")
    os.makedirs(libdir, exist_ok=True)
    for name, src in needed_all:
        shutil.copyfile(src, os.path.join(libdir, name))
        os.chmod(os.path.join(libdir, name), 0o755)
    if interp:
        dst = os.path.join(root, interp.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.realpath(interp), dst)
        os.chmod(dst, 0o755)
    os.makedirs(os.path.join(root, "jail"), exist_ok=True)
    shutil.copyfile(os.path.join(os.path.dirname(root), "test"), os.path.join(root, "jail", "test"))
    os.chmod(os.path.join(root, "jail", "test"), 0o755)
    shutil.copytree(os.path.join(os.path.dirname(root), "work"), os.path.join(root, "work"))
    os.makedirs(os.path.join(root, "tmp"))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o1777 if dirpath.endswith("/tmp") else 0o755)


def _own_processes():
    """How many processes this user runs (RLIMIT_NPROC counts them all)."""
    uid, n = os.getuid(), 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                n += os.stat("/proc/" + pid).st_uid == uid
            except OSError:
                pass
    return n


def _limits(memory_mb, cpu_s, as_root):
    nproc = NPROC if as_root else _own_processes() + 256

    def apply():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    return apply


# ---------------------------------------------------------------------------
# Running


def run(binary, files, args, test_timeout, total_timeout, memory_mb, secret,
        strategy_name=None):
    """Runs `binary args` sandboxed with `files` ({relative path: source}) in its
    working directory. Returns a RunResult; never raises for the child's faults."""
    name = strategy_name or strategy()
    stage = _stage(binary, files, name == "plain")
    res = RunResult()
    secret_r = secret_w = result_r = result_w = None
    proc = None
    try:
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "GTEST_COLOR": "no"}
        pass_fds = []
        if secret is not None:
            secret_r, secret_w = os.pipe()
            result_r, result_w = os.pipe()
            env["MHA_GRADING"] = "%d:%d" % (secret_r, result_w)
            pass_fds = [secret_r, result_w]
        cpu = int(total_timeout) + 5
        root = _is_root()
        preexec = None
        if name == "namespaces":
            ns = ["unshare", "--mount", "--pid", "--net", "--ipc", "--uts", "--fork",
                  "--kill-child"]
            if not root:
                ns[1:1] = ["--user", "--map-root-user"]
            env_ns = dict(env, MHA_AS=str(memory_mb << 20), MHA_CPU=str(cpu),
                          MHA_FSIZE=str(FILE_LIMIT),
                          MHA_NPROC_FLAG="--nproc=%d" % (NPROC if root else _own_processes() + 256),
                          MHA_SETPRIV=("/usr/bin/setpriv --reuid=%d --regid=%d --clear-groups "
                                       "--no-new-privs" % (NOBODY, NOBODY)) if root else "")
            cmd = ns + ["sh", "-c", _NS_SCRIPT, "sh", stage, "/jail/test"] + list(args)
            env = env_ns
            cwd = stage
        elif name == "chroot":
            if not root:
                raise OSError("chroot needs root")
            jail = os.path.join(stage, "root")
            _populate_chroot(jail, binary)
            env["LD_LIBRARY_PATH"] = "/lib"
            limits = _limits(memory_mb, cpu, True)

            def preexec():
                os.chroot(jail)
                os.chdir("/work")
                limits()
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            cmd = ["/jail/test"] + list(args)
            cwd = "/"
        else:
            work = os.path.join(stage, "work")
            limits = _limits(memory_mb, cpu, root)

            def preexec():
                limits()
                if root:
                    os.setgroups([])
                    os.setgid(NOBODY)
                    os.setuid(NOBODY)
            cmd = [os.path.join(stage, "test")] + list(args)
            cwd = work
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                pass_fds=pass_fds, start_new_session=True,
                                preexec_fn=preexec)
        if secret is not None:
            os.close(secret_r)
            os.close(result_w)
            secret_r = result_w = None
            try:
                os.write(secret_w, secret)
            except OSError:
                pass
            os.close(secret_w)
            secret_w = None
        _pump(proc, result_r, secret, res, test_timeout, total_timeout, t0)
        res.seconds = time.monotonic() - t0
    finally:
        for fd in (secret_r, secret_w, result_r, result_w):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if proc is not None and proc.poll() is None:
            _kill(proc)
        _cleanup(stage)
    return res


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def _pump(proc, result_r, secret, res, test_timeout, total_timeout, t0):
    chan = protocol.Channel(secret) if secret is not None else None
    out_fd = proc.stdout.fileno()
    fds = [out_fd] + ([result_r] if result_r is not None else [])
    head, tail = bytearray(), bytearray()
    dropped = False
    test_deadline = t0 + test_timeout
    total_deadline = t0 + total_timeout
    n_events = 0
    while True:
        now = time.monotonic()
        deadline = min(test_deadline, total_deadline)
        if now >= deadline:
            res.timed_out = True
            res.timeout_s = test_timeout if test_deadline <= total_deadline else total_timeout
            _kill(proc)
            break
        if not fds:
            try:
                proc.wait(timeout=deadline - now)
                break
            except subprocess.TimeoutExpired:
                continue
        ready, _, _ = select.select(fds, [], [], deadline - now)
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            if not data:
                fds.remove(fd)
                continue
            if fd == out_fd:
                room = OUTPUT_KEEP - len(head)
                if room > 0:
                    head += data[:room]
                    data = data[room:]
                if data:
                    dropped = True
                    tail += data
                    if len(tail) > OUTPUT_KEEP:
                        del tail[:len(tail) - OUTPUT_KEEP]
            else:
                chan.feed(data)
                if chan.overflow:
                    res.overflow = True
                    _kill(proc)
                    fds = []
                    break
                if len(chan.events) != n_events:
                    n_events = len(chan.events)
                    test_deadline = time.monotonic() + test_timeout
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        _kill(proc)
    res.returncode = proc.returncode
    if chan is not None:
        chan.close()
        res.events, res.rejected, res.lost = chan.events, chan.rejected, chan.lost
    res.output = (bytes(head) + (b"\n...\n" + bytes(tail) if dropped else b"")).decode(
        "utf-8", errors="replace")


def _cleanup(stage):
    root = os.path.join(stage, "root")
    # In the namespaces strategy the tmpfs lived in the child's mount namespace only.
    shutil.rmtree(stage, ignore_errors=True)
    if os.path.exists(root):
        subprocess.run(["umount", "-l", root], capture_output=True)
        shutil.rmtree(stage, ignore_errors=True)
