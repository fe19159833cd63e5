"""cgroup v2: a cgroup per job, with its own memory, pids and cpu limits.

probe_cgroup() makes the grader's parent cgroup where the kernel delegates
memory, pids and cpu (else says why not); cgroup_for_job() a job's child
with its limits; kill_cgroup() ends every process in one and removes it.
"""
import os
import signal
import time

from grader.process import quiet


ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
NEEDED = ("memory", "pids", "cpu")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def probe_cgroup(scratch):
    """(the grader's parent cgroup for jobs, "") where cgroup v2 has memory, pids
    and cpu and a child can be made, filled, limited and killed; else (None, why)."""
    for root in ROOTS:
        if os.path.exists(os.path.join(root, "cgroup.controllers")):
            break
    else:
        return None, "no cgroup v2 file system (/sys/fs/cgroup is v1 or absent)"
    with open(os.path.join(root, "cgroup.controllers")) as f:
        have = f.read().split()
    lacking = [c for c in NEEDED if c not in have]
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
        ok = quiet(["/bin/sh", "-c", 'echo $$ > "$0" && exec true',
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

