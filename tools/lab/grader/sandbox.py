"""Where learner code is compiled, linked and run: a one-off user, namespaces, limits, jails.

The wall is a fresh identity per job, namespaces where the kernel has them,
and ownership and file modes everywhere. When the grader runs as root (the
default, and Gradescope's case):

  * every job (one lab of one submission) gets a uid of its own, used once
    (the ledger of uids.py): per-uid kernel state (the "user" keyring, the
    process count, files left in /tmp) cannot reach another job. That uid has
    no account and no supplementary groups, so it reads only what "others"
    may read;
  * what must stay secret (the suite's checkout with its solutions, hidden
    tests and .git; the grader's caches and reports; the roster and the
    output directory) is made unreadable to others (privacy.py), and every
    path the grader writes is checked as such a user;
  * the compiler, assembler, linker, nm and readelf run in a jail (jail.py):
    new mount, pid, IPC, network and UTS namespaces, a tmpfs root holding only
    /usr, the staged headers and runtime (read-only) and the job's own
    directory; where mount namespaces are refused, in a Landlock domain that
    lets them read only those (jail.py, where the kernel has Landlock), else
    as the job's uid with the file system's modes as the wall (the grading
    machine's own secret places, Gradescope's /autograder, made private
    first: grade.host_secrets); build_wall() names which, and is part of the
    compile cache's key;
  * the learner's process is chrooted into a directory holding only its own
    binary and the shared libraries it needs, with no writable path, in new
    pid, IPC, network and UTS namespaces;
  * a pid namespace per process (its init's end kills every process left,
    zombies included) and, where cgroup v2 offers memory, pids and cpu, a
    cgroup per job with its own limits, killed as a whole at the end
    (cgroups.py);
  * everything runs under wall-clock and rlimit bounds (limits.py; no POSIX
    message queue), and every process of the job's uid is killed at the end
    of the job, with its System V IPC objects (which outlive it where no IPC
    namespace holds them).

Each layer is probed (probe()); the Isolation it returns applies the policy
to every command a job runs (run_build, run_trusted, learner_argv) and
describe() names the layers missing on this machine
(an unprivileged container has no namespaces and no cgroup of its own).
Without root none of the user separation is possible: learner code runs as
you, under limits only, and the report says "isolation: limits only".

Every tool used here is Debian's: prlimit, setpriv and unshare (util-linux),
chroot and env (coreutils), /usr/bin/python3 for jail.py.
"""
import json
import os
import shutil
import signal
import tempfile
import time

import limits
from grader import cgroups
from grader import ipc
from grader import learner_jail
from grader import privacy
from grader import process
from grader.uids import as_user, claim_uid, processes_of

_HERE = os.path.dirname(os.path.abspath(__file__))

class Isolation:
    """What this machine allows (found once by probe()) and the policy that
    follows from it: every command of a job goes through these methods."""

    def __init__(self, root, setuid, chroot, namespaces, pidns=False, jail=False, cgroup=None,
                 missing=None, probe_uid=None, landlock=False, learner_landlock=0,
                 launcher=None, seccomp=False):
        self.root = root
        self.setuid = setuid
        self.chroot = chroot
        self.namespaces = namespaces
        self.pidns = pidns
        self.jail = jail              # build steps in a mount namespace (jail.py)
        self.landlock = landlock      # else in a Landlock domain (jail.py), where the kernel has it
        self.cgroup = cgroup          # the grader's cgroup v2 directory, or None
        self.missing = missing or {}  # layer: why it is missing
        self.probe_uid = probe_uid    # a one-off uid for the self-checks (runs no learner code)
        # The Landlock ABI the learner's (and the reference) process runs
        # under (learner_jail.py), 0 for none; 4 and later refuse TCP too.
        self.learner_landlock = learner_landlock
        self.launcher = launcher      # launch.cc, compiled (learner_jail.build_launcher)
        # The learner's (and the reference) process under the launcher's
        # seccomp filter: no socket, keyring, System V IPC, io_uring or ptrace.
        self.seccomp = seccomp

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
                     "compiler jailed by Landlock (no mount namespace)" if self.landlock else
                     "compiler unjailed (file modes only)")
        parts.append("learner process under Landlock (no TCP)" if self.learner_landlock >= 4
                     else "learner process under Landlock" if self.learner_landlock else
                     "learner process without Landlock")
        parts.append("seccomp (no socket, keyring or System V IPC)" if self.seccomp else
                     "no seccomp")
        parts.append("cgroup per job" if self.cgroup else "no cgroup")
        parts.append("limits")
        return {"summary": ", ".join(parts), "separate_user": True, "chroot": self.chroot,
                "namespaces": self.namespaces, "limits": True, "fresh_uid_per_job": True,
                "pid_namespace": self.pidns, "jailed_compiler": self.jail or self.landlock,
                "compiler_wall": self.build_wall(), "learner_landlock": self.learner_landlock,
                "seccomp": self.seccomp,
                "cgroup": bool(self.cgroup), "missing": dict(self.missing)}


    def build_wall(self):
        """What keeps a build step (compiler, assembler, linker) from the file
        system: "mount namespace", "landlock", "file modes" or "none" (not
        root). Part of every compile cache key (learner_build.py): an object
        built behind a weaker wall (an .incbin of a file it could read) is
        never served to a grading behind a stronger one."""
        if not self.setuid:
            return "none"
        return "mount namespace" if self.jail else "landlock" if self.landlock else "file modes"

    # ------------------------------------------------------------ the policy

    def new_job(self, slot, mnt):
        """A job's identity (its uid is claimed when first needed)."""
        return Job(self, slot, mnt)

    def end_job(self, job):
        """Kills whatever the job left running, its cgroup too: the job is over."""
        kill_job(self, job, final=True)

    def give_to_job(self, path, job):
        """A directory only the job's user may use (for its build outputs)."""
        give_to_job(path, self, job)

    def run_build(self, job, argv, cwd, timeout, ro=()):
        """Runs a build command (compiler, linker, nm, readelf) as the job's user,
        jailed with only `cwd` writable and `ro` readable; then kills what it left."""
        env = {"PATH": "/usr/bin:/bin", "TMPDIR": cwd, "LC_ALL": "C", "HOME": cwd}
        res = process.run(build_argv(argv, self, job, env, ro=ro, rw=[cwd]), cwd=cwd,
                          timeout=timeout)
        kill_job(self, job)
        return res

    def run_trusted(self, job, argv, cwd, timeout, env, memory_mb):
        """Runs a trusted test binary as the grader's user, in the job's cgroup,
        under `memory_mb`; then kills what the learner's processes left."""
        res = process.run(in_cgroup(job) + ["prlimit", "--as=%d" % (memory_mb << 20), "--core=0",
                                            "--"] + list(argv),
                          cwd=cwd, timeout=timeout, env=env)
        kill_job(self, job)
        return res

    def learner_argv(self, jail, job, memory_mb):
        """argv that starts a learner's process (learner_jail.learner_argv)."""
        return learner_jail.learner_argv(jail, self, job, memory_mb, (
            limits.RUN_CPU_SECONDS, limits.RUN_PROCESSES, limits.RUN_OPEN_FILES))

    def protect(self, paths, log):
        """Makes `paths` unreadable to the job users (privacy.protect); the paths changed."""
        return privacy.protect(paths, self.probe_uid, log) if self.setuid else []

    def check_private(self, paths):
        """Raises RuntimeError when a job's user could read any of `paths`."""
        if self.setuid:
            privacy.check_private(paths, self.probe_uid)


def chroot_as_user(uid, jail, chroot="chroot"):
    """argv prefix: what follows runs as `uid` with `jail` as its root."""
    return [chroot, "--userspec=%d:%d" % (uid, uid), "--groups=%d" % uid, jail]


def probe(scratch):
    """Finds which layers work here. `scratch` is a private directory to try a jail in."""
    root = os.geteuid() == 0
    if not root:
        return Isolation(False, False, False, False)
    missing = {}
    launcher = learner_jail.build_launcher(scratch)
    uid = claim_uid()
    setuid = process.quiet(as_user(uid) + ["true"])
    jail = os.path.join(scratch, "probe-jail")
    shutil.rmtree(jail, ignore_errors=True)
    os.makedirs(jail)
    chroot_ok = seccomp_ok = False
    learner_ll = 0
    if setuid:
        # chroot needs no binary inside to report the chroot call's own failure.
        true_bin = shutil.which("true")
        libroot = learner_jail.prepare_libroot(jail, [true_bin])
        shutil.copy(true_bin, os.path.join(libroot, "probe"))
        chroot_ok = process.quiet(chroot_as_user(uid, libroot) + ["/probe"])
        if not chroot_ok:
            missing["chroot"] = "chroot was refused (no CAP_SYS_CHROOT?)"
        learner_ll = learner_jail.probe_landlock(launcher, uid, libroot, chroot_ok)
        if not learner_ll:
            missing["learner landlock"] = (
                "no Landlock (Linux 5.13+, not refused by seccomp; MHA_SANDBOX_NO_LANDLOCK "
                "unset): the learner's process is walled by its chroot and uid alone, and "
                "reaches the network where no namespace holds it")
        elif learner_ll < 4:
            missing["learner tcp"] = ("Landlock ABI %d has no network rules (4+): the "
                                      "learner's process reaches TCP where no namespace holds "
                                      "it" % learner_ll)
        # MHA_SANDBOX_NO_SECCOMP=1: as a kernel that refuses the filter (to try it).
        seccomp_ok = (not os.environ.get("MHA_SANDBOX_NO_SECCOMP") and
                      learner_jail.probe_seccomp(launcher, uid, libroot, chroot_ok))
        if not seccomp_ok:
            missing["seccomp"] = ("no seccomp filter (refused by the kernel, or "
                                  "MHA_SANDBOX_NO_SECCOMP set): the learner's process may open "
                                  "sockets, keyrings and System V IPC objects that another job "
                                  "could reach where no namespace holds them")
    namespaces = process.quiet(["unshare", "--net", "--ipc", "--uts", "true"])
    if not namespaces:
        missing["namespaces"] = "unshare --net --ipc --uts was refused (no CAP_SYS_ADMIN?)"
    pidns = process.quiet(["unshare", "--pid", "--fork", "--kill-child", "true"])
    if not pidns:
        missing["pid namespace"] = ("unshare --pid was refused: leftover processes are killed "
                                    "by uid instead")
    jail_ok = landlock_ok = False
    if setuid:
        mnt = os.path.join(scratch, "mnt")
        os.makedirs(mnt, mode=0o700, exist_ok=True)
        work = os.path.join(scratch, "probe-work")
        os.makedirs(work, exist_ok=True)
        os.chown(work, uid, uid)
        os.chmod(work, 0o700)
        # A file beside the jail's own folders that the jail must not show.
        sentinel = os.path.join(scratch, "probe-sentinel")
        with open(sentinel, "w") as f:
            f.write("x\n")
        spec = {"mnt": mnt, "ro": [], "rw": [work], "uid": uid, "cwd": work,
                "env": {"PATH": "/usr/bin:/bin"}, "rlimits": {}, "cgroup": "",
                "argv": ["sh", "-c", "test -x /usr/bin/g++ && ! test -e %s && touch ok"
                         % sentinel]}
        jail_ok = process.quiet([process.system_python(), "-I", "-S",
                                 os.path.join(_HERE, "jail.py"), json.dumps(spec)]
                                ) and os.path.exists(os.path.join(work, "ok"))
        if not jail_ok:
            # No mount namespace: a Landlock domain instead, where the kernel has one.
            # MHA_SANDBOX_NO_LANDLOCK=1: as a kernel without it (to try file modes alone).
            landlock_ok = (not os.environ.get("MHA_SANDBOX_NO_LANDLOCK")
                           and _probe_landlock(launcher, uid,
                                               os.path.dirname(scratch.rstrip("/"))))
            missing["mount namespace"] = ("unshare --mount was refused (no CAP_SYS_ADMIN?)")
            if not landlock_ok:
                missing["jailed compiler"] = (
                    "no mount namespace and no Landlock (Linux 5.13+, not refused by seccomp): "
                    "the compiler sees the file system, guarded by its modes alone")
        shutil.rmtree(work, ignore_errors=True)
        os.unlink(sentinel)
    if setuid:
        # What jobs of an earlier grading left in this IPC namespace (a crash,
        # a grader from before jobs' objects were removed) answers no job.
        ipc.remove_stale()
    cg, why = cgroups.probe_cgroup(scratch)
    if not cg:
        missing["cgroup"] = why
    shutil.rmtree(jail, ignore_errors=True)
    return Isolation(True, setuid, chroot_ok, namespaces, pidns, jail_ok, cg, missing, uid,
                     landlock_ok, learner_ll, launcher, seccomp_ok)


def _probe_landlock(launcher, uid, where):
    """Whether jail.py's Landlock domain works here: as `uid`, it must run g++
    and must not read a file that the modes let every user read. `where`: a
    folder others may enter (the work root), to try it in."""
    d = tempfile.mkdtemp(prefix="landlock-probe-", dir=where)
    try:
        os.chmod(d, 0o711)
        secret = os.path.join(d, "secret")
        with open(secret, "w") as f:
            f.write("x\n")
        os.chmod(secret, 0o644)
        work = os.path.join(d, "work")
        os.mkdir(work, 0o700)
        os.chown(work, uid, uid)
        spec = {"landlock": True, "launcher": launcher, "mnt": "", "ro": [], "rw": [work],
                "uid": uid, "cwd": work,
                "env": {"PATH": "/usr/bin:/bin"}, "rlimits": {}, "cgroup": "",
                "argv": ["sh", "-c", "test -x /usr/bin/g++ && ! cat %s 2>/dev/null && touch ok"
                         % secret]}
        return (process.quiet([process.system_python(), "-I", "-S",
                               os.path.join(_HERE, "jail.py"), json.dumps(spec)])
                and os.path.exists(os.path.join(work, "ok")))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------
# Running a command as a slot user, with limits.

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
                    self.cgroup = cgroups.cgroup_for_job(self._iso.cgroup, str(self._uid),
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
          "NOFILE": 256, "CORE": 0, "MSGQUEUE": 0}
    uid = job.uid                       # claims it (and the job's cgroup) if not yet done
    if iso.setuid and (iso.jail or iso.landlock):
        spec = {"mnt": job.mnt, "ro": list(ro), "rw": list(rw), "uid": uid,
                "cwd": rw[0] if rw else "/", "env": env, "rlimits": rl,
                "cgroup": job.procs(), "argv": list(argv), "landlock": not iso.jail,
                "launcher": iso.launcher}
        return [process.system_python(), "-I", "-S", os.path.join(_HERE, "jail.py"),
                json.dumps(spec)]
    out = in_cgroup(job)
    if iso.namespaces:
        out += ["unshare", "--net", "--ipc", "--uts"]
        if iso.pidns:
            out += ["--pid", "--fork", "--kill-child"]
    out += learner_jail.prlimit(limits.COMPILE_MEMORY_MB, limits.COMPILE_CPU_SECONDS,
                                limits.COMPILE_FILE_MB, limits.COMPILE_PROCESSES, 256)
    if iso.setuid:
        out += as_user(uid)
    out += ["env", "-i"] + ["%s=%s" % kv for kv in sorted(env.items())] + list(argv)
    return out


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
            process.quiet(as_user(uid) + ["kill", "-KILL", "-1"])
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    if final:
        cgroups.kill_cgroup(job.cgroup)
        job.cgroup = None
    # As the job's uid, checked gone; IpcCleanupError stops the grading.
    ipc.remove_job_objects(uid)
    for tmp in ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue"):
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
