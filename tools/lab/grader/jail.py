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
SPEC_JSON's "landlock": true runs the command instead with no namespace: the
limits, the job's uid, no new privileges, then a Landlock domain (landlock())
in which it may read and execute only /usr, the libraries and `ro`, write
only `rw` and /dev/null, reach no TCP port (ABI 4+) and no abstract socket or
process outside the domain (ABI 6+); every other file, /autograder's
included, is refused whatever its modes.

SPEC_JSON's "learner": true starts a learner's (or the job's reference)
process instead (learner_jail.py, which runs this under the process's
namespaces and limits): chroot into "root" (when given), the job's uid with
no groups and no new privileges, then, with "landlock", a Landlock domain
that may read and execute only "read", write nothing, and reach no TCP port
(ABI 4+) and no abstract socket or process outside it (ABI 6+); then exec.

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


# Landlock (linux/landlock.h): syscalls 444-446, the rights of ABI 1-5.
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH, LANDLOCK_RULE_NET_PORT = 1, 2
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def landlock_abi():
    """The kernel's Landlock ABI version, 0 when it has none (or a seccomp
    filter, Docker's, refuses the call)."""
    v = _syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                 ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return v if v > 0 else 0


def _fs_rights(abi):
    """Every file-system right of `abi`: all handled, so all refused unless granted."""
    rights = (1 << 13) - 1                   # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= 1 << 13                    # refer
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock(read, write):
    """Restricts this process and what it starts, for good: read and execute
    beneath `read`, everything beneath `write`; no TCP; no abstract socket or
    signal out of the domain. Raises OSError when the kernel refuses."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(38, "Landlock is not available")
    fs = _fs_rights(abi)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = _syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                  ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        _check(-1, "landlock_create_ruleset")
    file_rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (fs & (FS_TRUNCATE | FS_IOCTL_DEV))
    try:
        for paths, rights in ((read, FS_EXECUTE | FS_READ_FILE | FS_READ_DIR), (write, fs)):
            for p in paths:
                try:
                    pfd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue                 # not on this machine: nothing to allow
                try:
                    allowed = rights if os.path.isdir(p) else rights & file_rights
                    rule = _PathBeneath(allowed, pfd)
                    if _syscall(ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_int(fd),
                                ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                        _check(-1, "landlock_add_rule %s" % p)
                finally:
                    os.close(pfd)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        if _syscall(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(fd),
                    ctypes.c_uint32(0)) != 0:
            _check(-1, "landlock_restrict_self")
    finally:
        os.close(fd)


SYSTEM_READ = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
               "/etc/ld.so.cache", "/etc/alternatives"]


def _landlocked_child(spec):
    """The command with no namespace: limits, the job's uid, then Landlock."""
    os.chdir(spec["cwd"])
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    uid = spec["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    landlock(SYSTEM_READ + list(spec["ro"]), list(spec["rw"]) + ["/dev/null"])
    os.umask(0o077)
    _exec(spec)


def _learner(spec):
    """A learner's process: its jail, the job's uid, Landlock, then exec."""
    if spec["root"]:
        os.chroot(spec["root"])
        os.chdir("/")
    uid = spec["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if spec["landlock"]:
        landlock(list(spec["read"]), [])
    else:
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    argv = spec["argv"]
    os.execve(argv[0], argv, spec["env"])


def _exec(spec):
    env = spec["env"]
    argv = spec["argv"]
    exe = argv[0]
    if "/" not in exe:
        for d in env.get("PATH", "/usr/bin:/bin").split(":"):
            if os.access(os.path.join(d, exe), os.X_OK):
                exe = os.path.join(d, exe)
                break
    os.execve(exe, argv, env)


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
    if spec.get("learner"):
        try:
            _learner(spec)
        except BaseException as e:  # never run outside its jail
            os.write(2, ("jail: %s\n" % e).encode())
        os._exit(126)
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
