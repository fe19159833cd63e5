"""The learner's process: the folder it is jailed in, and the command that starts it.

A learner's jail (make_jail) holds its executable (/server) and hard links
to the shared libraries it needs (prepare_libroot), all owned by root and
read-only to it. learner_argv() is the command the trusted test process runs
for each fresh learner process (MHA_REMOTE_ARGV), and for the job's
reference process (MHA_REFERENCE_ARGV):

  * new pid, IPC, network and UTS namespaces where the kernel allows them;
  * its limits (prlimit) and a clean environment;
  * then the launcher (launch.cc, compiled once per work root by
    build_launcher), as root until it drops: chroot into the jail, the job's
    one-off uid with no groups and no new privileges, and, where the kernel
    has Landlock, a Landlock domain in which it may read and execute only its
    jail (or, without chroot, its jail and the system's libraries), write
    nothing and, with Landlock ABI 4 or later, neither bind nor connect a TCP
    socket; and, where the kernel takes seccomp filters, a filter that
    refuses every socket, the kernel's keyrings, System V IPC, io_uring and
    tracing (launch.cc's kRefused); then exec /server.

So with or without namespaces, the learner's running process reaches no
loopback service (the Slurm daemons, a Bazel server), no UDP port and no
keyring another job could find, and reads no file outside its jail, whatever
the file modes say.
"""
import hashlib
import os
import shutil
import subprocess

from grader import jail as jail_mod
from grader import process

LAUNCH_CC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.cc")
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PATH": "/"}


def build_launcher(directory):
    """The launcher (launch.cc) compiled into `directory` (root's own: the
    grader's private folder), once per version of its source."""
    with open(LAUNCH_CC, "rb") as f:
        tag = hashlib.sha256(f.read()).hexdigest()[:12]
    exe = os.path.join(directory, "launch-" + tag)
    if not os.path.exists(exe):
        tmp = "%s.%d" % (exe, os.getpid())
        p = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", LAUNCH_CC, "-o",
                            tmp], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("could not compile %s: %s" % (LAUNCH_CC, p.stderr[-400:]))
        os.chmod(tmp, 0o700)
        os.replace(tmp, exe)
    return exe


def prlimit(memory_mb, cpu_s, file_mb, nproc, nofile):
    # --msgqueue=0: the uid may create no POSIX message queue, which would
    # outlive the job where no IPC namespace holds it (the queues have no
    # file to remove unless /dev/mqueue is mounted).
    return ["prlimit", "--as=%d" % (memory_mb << 20), "--cpu=%d" % cpu_s,
            "--fsize=%d" % (file_mb << 20), "--nproc=%d" % nproc, "--nofile=%d" % nofile,
            "--core=0", "--msgqueue=0", "--"]


def launch(launcher, jail, uid, chroot, landlock, argv=None, seccomp=False):
    """The command that starts `argv` (default: the binary /server in `jail`)
    through the launcher, as root until it drops to `uid`; `seccomp`: under
    the launcher's filter (kRefused)."""
    argv = argv or ["/server" if chroot else os.path.join(jail, "server")]
    read = ["/"] if chroot else jail_mod.SYSTEM_READ + [jail]
    return ([launcher, "root=" + (jail if chroot else ""), "uid=%d" % uid,
             "landlock=%d" % bool(landlock), "seccomp=%d" % bool(seccomp)] +
            ["read=" + p for p in read] + ["--"] + list(argv))


def learner_argv(jail, iso, job, memory_mb, run_limits):
    """argv that starts a learner's process (the binary /server inside `jail`).
    `run_limits`: (cpu seconds, processes, open files)."""
    cpu_s, nproc, nofile = run_limits
    out = []
    if iso.namespaces:
        out += [shutil.which("unshare"), "--net", "--ipc", "--uts"]
        if iso.pidns:
            out += ["--pid", "--fork", "--kill-child"]
    out += [shutil.which("prlimit")] + prlimit(memory_mb, cpu_s, 0, nproc, nofile)[1:]
    out += [shutil.which("env"), "-i"] + ["%s=%s" % kv for kv in sorted(ENV.items())]
    if not iso.setuid:
        return out + [os.path.join(jail, "server")]
    return out + launch(iso.launcher, jail, job.uid, iso.chroot, iso.learner_landlock,
                        seccomp=iso.seccomp)


def probe_landlock(launcher, uid, jail, chroot):
    """Whether a learner's process can be started here in a Landlock domain:
    jail.py's learner mode, in `jail` (a prepared libroot holding probe, a
    copy of `true`; chrooted into it if `chroot`), as `uid`. The kernel's
    Landlock ABI, 0 if not (MHA_SANDBOX_NO_LANDLOCK=1: as a kernel without)."""
    abi = jail_mod.landlock_abi()
    if abi < 1 or os.environ.get("MHA_SANDBOX_NO_LANDLOCK"):
        return 0
    probe = "/probe" if chroot else os.path.join(jail, "probe")
    return abi if process.quiet(launch(launcher, jail, uid, chroot, True, [probe])) else 0


def probe_seccomp(launcher, uid, jail, chroot):
    """Whether the launcher's seccomp filter can be installed here (a kernel
    built without it, or a container's own filter, may refuse it): the probe
    in `jail` (as probe_landlock) must run under it."""
    probe = "/probe" if chroot else os.path.join(jail, "probe")
    return process.quiet(launch(launcher, jail, uid, chroot, False, [probe], seccomp=True))


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
