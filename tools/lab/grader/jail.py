"""Runs one build command (compiler, assembler, linker, nm, readelf) in a jail.

    /usr/bin/python3 -I -S jail.py SPEC_JSON

Run as root by sandbox.build_argv when the kernel allows mount namespaces.
SPEC_JSON: {"mnt": an empty root-owned directory, "ro": [paths], "rw": [paths],
"uid": N, "cwd": dir, "env": {..}, "rlimits": {"AS": bytes, ...},
"cgroup": cgroup.procs path or "", "argv": [...]}.

  1. new mount, pid, IPC, network and UTS namespaces (unshare);
  2. fork: the child is PID 1 of the new pid namespace, so that when it ends
     the kernel kills every process the command left behind, zombies
     included; the parent waits and exits with the child's status;
  3. the child mounts a tmpfs at "mnt" and binds into it only `ro` (read-only,
     nosuid, nodev: /usr, /etc/alternatives, the staged headers and runtime) and `rw` (the job's
     own directory), at their own paths, plus /dev/null, a private /tmp and
     /etc/ld.so.cache; the roster, other submissions, the checkout and every
     report are simply not there;
  4. chroot, then the limits, then the job's one-off uid with no groups and
     no way to gain privileges, then exec.

Where mount namespaces are refused (a container without CAP_SYS_ADMIN, as
Gradescope's) but the kernel has Landlock (Linux 5.13+, no privilege needed),
SPEC_JSON's "landlock": true and "launcher" (the compiled launch.cc) run the
command instead with no namespace: the limits and the umask here, then the
launcher, which drops to the job's uid with no new privileges and enters a
Landlock domain in which the command may read and execute only /usr, the
libraries and `ro`, write only `rw` and /dev/null, reach no TCP port (ABI 4+)
and no abstract socket or process outside the domain (ABI 6+); every other
file, /autograder's included, is refused whatever its modes. (The learner's
own process is started by the launcher directly: learner_jail.py.)

Only the standard library (ctypes for the system calls Python 3.11 lacks).
"""
import ctypes
import json
import os
import resource
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def _mount(src, dst, fstype, flags, data=None):
    _check(_libc.mount(src and src.encode(), dst.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()),
           "mount %s on %s" % (src, dst))


def _bind(mnt, path, readonly):
    target = mnt + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(path, target, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (MS_RDONLY | MS_NODEV if readonly else MS_NODEV)
    _mount(None, target, None, flags)


# Landlock's first system call, to ask the kernel's ABI (launch.cc does the rest).
SYS_LANDLOCK_CREATE_RULESET = 444
LANDLOCK_CREATE_RULESET_VERSION = 1
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def landlock_abi():
    """The kernel's Landlock ABI version, 0 when it has none (or a seccomp
    filter, Docker's, refuses the call)."""
    v = _syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                 ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return v if v > 0 else 0


SYSTEM_READ = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
               "/etc/ld.so.cache", "/etc/alternatives"]


def _landlocked_child(spec):
    """The command with no namespace: its directory, limits and umask here,
    then the launcher (launch.cc): the job's uid, no new privileges, Landlock."""
    os.chdir(spec["cwd"])
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    os.umask(0o077)
    argv = [spec["launcher"], "uid=%d" % spec["uid"], "landlock=1"]
    argv += ["read=" + p for p in SYSTEM_READ + list(spec["ro"])]
    argv += ["write=" + p for p in list(spec["rw"]) + ["/dev/null"]]
    os.execve(spec["launcher"], argv + ["--", _resolve(spec)] + spec["argv"][1:], spec["env"])


def _resolve(spec):
    """The command's program, looked up in the spec's PATH when it has no '/'."""
    exe = spec["argv"][0]
    if "/" not in exe:
        for d in spec["env"].get("PATH", "/usr/bin:/bin").split(":"):
            if os.access(os.path.join(d, exe), os.X_OK):
                return os.path.join(d, exe)
    return exe


def _exec(spec):
    os.execve(_resolve(spec), spec["argv"], spec["env"])


def _child(spec):
    mnt = spec["mnt"]
    os.umask(0o022)             # the jail's skeleton: traversable by the job's user
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("mha-jail", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    os.makedirs(mnt + "/tmp", exist_ok=True)
    _mount("mha-tmp", mnt + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = "/" + name
        if os.path.islink(p):
            os.symlink(os.readlink(p), mnt + p)
        elif os.path.isdir(p):
            _bind(mnt, p, True)
    # /etc/alternatives: Debian reaches OpenBLAS and cblas.h through it.
    for p in ["/usr", "/etc/ld.so.cache", "/etc/alternatives"] + list(spec["ro"]):
        if os.path.exists(p):
            _bind(mnt, p, True)
    for p in spec["rw"]:
        _bind(mnt, p, False)
    os.makedirs(mnt + "/dev", exist_ok=True)
    _bind(mnt, "/dev/null", False)
    # The tmpfs root itself read-only: the job writes only its directory and /tmp.
    _mount(None, mnt, None, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_RDONLY)
    os.chroot(mnt)
    os.chdir(spec["cwd"])
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    uid = spec["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.umask(0o077)             # what the job writes is its own
    _exec(spec)


def main():
    spec = json.loads(sys.argv[1])
    if spec.get("cgroup"):
        with open(spec["cgroup"], "w") as f:
            f.write(str(os.getpid()))
    if spec.get("landlock"):
        try:
            _landlocked_child(spec)
        except BaseException as e:  # never run unjailed
            os.write(2, ("jail: %s\n" % e).encode())
        os._exit(126)
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET |
                         CLONE_NEWUTS), "unshare")
    pid = os.fork()
    if pid == 0:
        try:
            _libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
            _child(spec)
        except BaseException as e:  # the jail could not be made: say so, never run unjailed
            os.write(2, ("jail: %s\n" % e).encode())
        os._exit(126)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
