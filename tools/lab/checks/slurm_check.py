"""./lab test's Slurm check: a roster graded through a one-node cluster
(tools/slurm/cluster.sh) gives the gradebook of a local grading, byte for
byte, and a task cancelled mid-run costs no grade: the merge job writes no
gradebook from a partial class, and the same command again grades only what
is left. The command itself is grader/slurm.py."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from checks.hostile_cases import load_cases
from checks.hostile_roster import write_roster
from labs import ROOT

CLUSTER = os.path.join(ROOT, "tools", "slurm", "cluster.sh")


def _free_port_pair():
    """A port p with p and p + 1 free on 127.0.0.1 (slurmctld, slurmd)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p >= 65535:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", p + 1))
            return p
        except OSError:
            continue
    raise RuntimeError("no two free ports on 127.0.0.1")


def _roster(labs, root):
    """Five submissions of lab 1: the solution, the stub, the solution with its
    head-count check loosened (one test fails), and two copies of the solution
    that differ in a comment (distinct files, the same marks); and the folders
    of the hostile roster case twin_names, whose names print alike ("alice",
    "alice ", a folder really named "alice (2)", two names with a stray byte).
    Returns every folder's name."""
    lab = labs[0]
    with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
        solution = f.read()
    with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
        stub = f.read()
    files = {"ana": solution, "ben": stub,
             "chloe": solution.replace(b"n_heads <= 0", b"n_heads < 0"),
             "dai": solution + b"\n// dai\n", "eve": solution + b"\n// eve\n"}
    for name, data in files.items():
        path = os.path.join(root, name, lab.learner_file)
        os.makedirs(os.path.dirname(path))
        with open(path, "wb") as f:
            f.write(data)
    twins = [c for c in load_cases(labs) if c.name == "twin_names"][0]
    return sorted(files) + [name for name, _ in write_roster(twins, labs, root)]


def _reports(out):
    """{folder: the bytes of its report.json} of a graded roster's output."""
    found = {}
    for folder in sorted(os.listdir(out)):
        path = os.path.join(out, folder, "report.json")
        if os.path.isfile(path):
            with open(path, "rb") as f:
                found[folder] = f.read()
    return found


def selftest_checks(labs, make_check):
    c = make_check("a roster graded through a one-node Slurm cluster (one job array, a merge "
                   "job) has the gradebook of a local grading, byte for byte; a cancelled task "
                   "costs no grade, and the same command again grades only what is left")
    if os.geteuid() != 0:
        c.skip("not root: the test cluster's slurmd must run as root")
        return [c]
    missing = [t for t in ("sbatch", "squeue", "scancel") if not shutil.which(t)] + \
        [t for t in ("munged", "slurmctld", "slurmd") if not os.path.exists("/usr/sbin/" + t)]
    if missing:
        c.fail("missing %s: tools/setup.sh --slurm installs Slurm and munge (./lab test "
               "runs it)" % ", ".join(missing))
        return [c]
    tmp = tempfile.mkdtemp(prefix="mha-slurm-", dir="/var/tmp")
    os.chmod(tmp, 0o711)
    cluster = os.path.join(tmp, "cluster")
    env = dict(os.environ, MHA_SLURM_PORT=str(_free_port_pair()),
               SLURM_CONF=os.path.join(cluster, "slurm.conf"),
               MHA_GRADE_DIR=os.path.join(tmp, "grade"))
    env.pop("MHA_GRADE_HOLDER", None)
    main = [sys.executable, os.path.join(ROOT, "tools", "lab", "main.py"), "grade"]

    def run(args, timeout=900):
        p = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        if p.returncode not in (0, 2):
            raise RuntimeError("`%s` exited %d: %s" % (" ".join(args[2:]), p.returncode,
                                                       (p.stdout + p.stderr)[-600:]))
        return p.stdout + p.stderr

    def wait_for_jobs(out, limit=900):
        """Until no job of the grading in `out` is listed; its status lines."""
        jobs = json.load(open(os.path.join(out, ".slurm", "jobs.json")))
        ids = {j for r in jobs for j in (r["array"], r["merge"]) if j}
        t0 = time.time()
        while time.time() - t0 < limit:
            # All jobs, filtered here: `squeue --jobs=` fails once an id is forgotten.
            p = subprocess.run(["squeue", "--noheader", "--array", "--format=%F"], env=env,
                               capture_output=True, text=True)
            if p.returncode == 0 and not ids & set(p.stdout.split()):
                return
            time.sleep(2)
        raise RuntimeError("the jobs %s were still listed after %d s" % (ids, limit))

    def gradebook(out):
        path = os.path.join(out, "gradebook.csv")
        return open(path, "rb").read() if os.path.exists(path) else None
    try:
        run(["bash", CLUSTER, "start", cluster], timeout=120)
        roster = os.path.join(tmp, "roster")
        names = _roster(labs, roster)
        base = ["--roster", roster, "--labs", str(labs[0].number)]
        local = os.path.join(tmp, "local")
        run(main + base + ["--out", local])
        expected = gradebook(local)
        if not expected or expected.count(b"\n") != len(names) + 1:
            c.fail("the local grading wrote no gradebook of %d rows" % len(names))
            return [c]
        # 1. The whole roster through the cluster: the same gradebook.
        whole = os.path.join(tmp, "whole")
        slurm = ["--slurm", "--block", "2", "--cpus-per-task", "1"]
        run(main + base + slurm + ["--out", whole])
        wait_for_jobs(whole)
        if gradebook(whole) != expected:
            c.fail("the Slurm grading's gradebook differs from the local one:\n%s\nvs\n%s" % (
                (gradebook(whole) or b"(none)").decode(errors="replace"),
                expected.decode(errors="replace")))
        # Every learner's own report, in its own folder, byte for byte.
        local_reports, slurm_reports = _reports(local), _reports(whole)
        if len(local_reports) != len(names) or slurm_reports != local_reports:
            c.fail("the learners' reports differ: %d folders locally, %d through Slurm, %s "
                   "differ" % (len(local_reports), len(slurm_reports), sorted(
                       f for f in set(local_reports) | set(slurm_reports)
                       if local_reports.get(f) != slurm_reports.get(f))[:5]))
        # 2. A task cancelled before it ran: no gradebook, its submission named,
        # and the same command again grades it alone.
        resumed = os.path.join(tmp, "resumed")
        one = ["--slurm", "--block", "1", "--max-parallel", "1", "--cpus-per-task", "1"]
        run(main + base + one + ["--out", resumed])
        array = json.load(open(os.path.join(resumed, ".slurm", "jobs.json")))[-1]["array"]
        subprocess.run(["scancel", "%s_%d" % (array, len(names) - 1)], env=env, check=True)
        wait_for_jobs(resumed)
        status = run(main + ["--roster", roster, "--out", resumed, "--slurm", "--status"])
        if gradebook(resumed) is not None:
            c.fail("the merge job wrote a gradebook with a submission missing")
        if "%d graded" % (len(names) - 1) not in status or "1 failed" not in status:
            c.fail("--status after the cancel does not say %d graded, 1 failed: %s" % (
                len(names) - 1, status.strip()))
        again = run(main + base + one + ["--out", resumed])
        if "for 1 of %d submissions" % len(names) not in again:
            c.fail("the second submission did not grade only the missing one: %s"
                   % again.strip()[-300:])
        wait_for_jobs(resumed)
        if gradebook(resumed) != expected:
            c.fail("after the resume the gradebook differs from the local one")
    except Exception as e:
        c.fail("%s: %s" % (type(e).__name__, e))
    finally:
        if not c.ok:   # what the jobs said, before the folder goes
            for out in ("whole", "resumed"):
                logs = os.path.join(tmp, out, ".slurm", "logs")
                for log in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
                    c.details += ["%s/%s: %s" % (out, log, line) for line in
                                  open(os.path.join(logs, log), errors="replace")
                                  .read().splitlines()[-2:]]
        for log in ("slurmctld.log", "slurmd.log"):
            path = os.path.join(cluster, "log", log)
            if os.path.exists(path) and not c.ok:
                c.details += open(path, errors="replace").read().splitlines()[-3:]
        subprocess.run(["bash", CLUSTER, "stop", cluster], env=env, capture_output=True)
        subprocess.run(["rm", "-rf", tmp])
    return [c]
