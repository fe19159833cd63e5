"""Grading a roster on a Slurm cluster: one job array, resumable, the grades of one machine.

    ./lab grade --roster DIR --slurm [--partition P] [--max-parallel K] [--time T]
                [--block N] [--cpus-per-task C] --out OUT
    ./lab grade --roster DIR --slurm --status --out OUT

Run on a login node, with the checkout, the roster and OUT on a file system
the compute nodes share. submit():

  1. builds the trusted suite with Bazel as a local grading does, and freezes
     it into OUT/.slurm/suite/ (Suite.freeze: the test binaries with their
     goldens, the runtime archives), with a copy of the course key
     (course_key.py), so that every task grades with the same binaries and
     draws the same fresh inputs as any machine with that key: the gradebook
     is the one a local grading writes;
  2. lists the submissions, by identity (roster.py: each folder's exact
     name), that have no finished report yet (OUT/<folder>/report.json, which
     a task writes atomically once a submission is graded, naming its
     identity) and cuts them into blocks of N;
  3. submits one job array, a task per block and at most K at once, and a
     merge job that runs after the array whatever became of it
     (--dependency=afterany), then prints both ids and how to follow them.

A task (run_task) grades its block with exactly the isolation of a local
grading (grade.open_grading on the frozen suite), in a work folder of its
own on the node. The merge job (run_merge) writes gradebook.csv, report.json
and the class report from the reports when every submission has one; when
some have none (a task killed by its time limit, a node failure, scancel),
it writes nothing that could read as a grade, names them, and says to run
the same command again, which submits only those. A fault is never a zero.

Everything under OUT/.slurm/ is private (0700/0600): the frozen suite holds
the hidden tests and their goldens.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time

from grader import grade
from grader import roster
from grader import submission
from grader.workspace import make_private_dir
from labs import ROOT, load_labs
from reports import report
from reports import rubric as rubric_mod

STATE = ".slurm"
PYTHON = "/usr/bin/python3"


def state_dir(out):
    return os.path.join(out, STATE)


def _log(msg):
    print(msg, file=sys.stderr)
    sys.stderr.flush()


def report_path(out, folder):
    """A submission's report, in its output folder (roster.folder_names: one
    distinct folder per identity over the whole roster, as a local grading
    names them)."""
    return os.path.join(out, folder, "report.json")


def _reported(out, entry):
    """Whether `entry` has its finished report: the report in its folder,
    naming its identity (a report of another name there is not its)."""
    rep = _read_json(report_path(out, entry.folder))
    return isinstance(rep, dict) and rep.get("submission_id") == entry.shown_id


def _planned(plan):
    """The roster's entries as the plan recorded them (identities in hex), or
    SystemExit for a plan of an older grader."""
    if "ids" not in plan:
        raise SystemExit("lab: %s was planned by an older grader; grade into another --out"
                         % plan.get("roster"))
    return roster.entries(plan["roster"], [roster.from_hex(h) for h in plan["ids"]])


def _write_json_atomic(data, path):
    """Writes `path` whole or not at all: a task killed mid-write leaves no
    half report that a later round would take as finished."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def _run(cmd):
    """A Slurm command's output; a clear error naming it when it fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SystemExit("lab: %s not found: --slurm needs Slurm's client commands on this "
                         "machine (Debian: slurm-client; tools/setup.sh --slurm)" % cmd[0])
    except subprocess.TimeoutExpired:
        raise SystemExit("lab: `%s` did not answer within 120 s: is slurmctld reachable?"
                         % " ".join(cmd))
    if p.returncode != 0:
        raise SystemExit("lab: `%s` failed (exit %d): %s" % (
            " ".join(cmd), p.returncode, (p.stderr or p.stdout).strip()[-500:]))
    return p.stdout


def _job_states(job_ids):
    """{job id: [state of each of its tasks]} of the jobs Slurm still lists."""
    if not job_ids:
        return {}
    # Every listed job, filtered here: `squeue --jobs=` fails outright once one
    # of the ids is no longer known to the controller.
    wanted = {str(j) for j in job_ids}
    out = _run(["squeue", "--noheader", "--array", "--format=%F %T"])
    states = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in wanted:
            states.setdefault(parts[0], []).append(parts[1])
    return states


def _max_array_size():
    for line in _run(["scontrol", "show", "config"]).splitlines():
        if line.split("=")[0].strip() == "MaxArraySize":
            try:
                return int(line.split("=", 1)[1])
            except ValueError:
                break
    return 1001   # Slurm's default


def _plan_of(args, mode, only, entries, grading):
    return {"roster": os.path.abspath(args.roster), "checkout": ROOT, "mode": mode,
            "labs": only, "ids": [e.hex_id for e in entries],
            "course_key": grading.course_key.fingerprint, "suite": grading.suite_hash,
            "similarity_threshold": args.similarity_threshold,
            "csv": os.path.abspath(args.csv) if args.csv else None,
            "json": os.path.abspath(args.json) if args.json else None,
            "gradescope": os.path.abspath(args.gradescope) if args.gradescope else None}


def submit(args, out, mode, labs, only, secrets, course_key=None):
    """./lab grade --roster DIR --slurm: builds and freezes the suite, submits
    the array and the merge job for the submissions without a report."""
    state = state_dir(out)
    make_private_dir(state)
    jobs = _read_json(os.path.join(state, "jobs.json"), [])
    active = _job_states([j for r in jobs for j in (r["array"], r["merge"])])
    if active:
        raise SystemExit(
            "lab: jobs %s of this roster are still queued or running; wait for them (./lab "
            "grade --roster %s --out %s --slurm --status) or cancel them (scancel %s), then "
            "run this again" % (", ".join(sorted(active)), args.roster, out,
                                " ".join(sorted(active))))
    # Refused here, before anything is built or graded, when two entries
    # cannot be told apart.
    entries, _ = roster.read(args.roster)
    old = _read_json(os.path.join(state, "plan.json"))
    if old and {k: old.get(k) for k in ("roster", "mode", "labs")} != \
            {"roster": os.path.abspath(args.roster), "mode": mode, "labs": only}:
        raise SystemExit("lab: %s already holds a grading of %s (%s mode, labs %s); grade this "
                         "one into another --out" % (out, old["roster"], old["mode"],
                                                     old["labs"] or "all"))
    t0 = time.time()
    grading = grade.open_grading(labs, _log, grade.Options(mode=mode, jobs=args.jobs),
                                 secrets=secrets, only=only, course_key=course_key)
    plan = _plan_of(args, mode, only, entries, grading)
    suite_dir = os.path.join(state, "suite")
    stamp = os.path.join(suite_dir, "FINGERPRINT")
    frozen = open(stamp).read().strip() if os.path.exists(stamp) else None
    done = [e for e in entries if _reported(out, e)]
    if done and old and (old.get("course_key"), old.get("suite")) != \
            (plan["course_key"], plan["suite"]):
        raise SystemExit(
            "lab: %d of these submissions were graded into %s with course key %s and suite %s; "
            "this grading has course key %s and suite %s, and grades from two keys or suites "
            "must not mix: grade into another --out, or with the same key (--course-key)" % (
                len(done), out, old.get("course_key"), old.get("suite"), plan["course_key"],
                plan["suite"]))
    if frozen != grading.suite.fingerprint:
        if done and frozen is not None:
            raise SystemExit(
                "lab: the grader or the suite changed since %d of these submissions were "
                "graded into %s; grades from two graders must not mix: grade into another "
                "--out" % (len(done), out))
        _log("grade: freezing the trusted suite into %s (the compute nodes read it there)"
             % suite_dir)
        shutil.rmtree(suite_dir, ignore_errors=True)
        grading.suite.freeze(suite_dir)
        with open(stamp, "w") as f:
            f.write(grading.suite.fingerprint + "\n")
    else:
        _log("grade: reusing the frozen suite in %s" % suite_dir)
    # The course key, for the tasks (OUT/.slurm is private, like the frozen suite).
    fd = os.open(os.path.join(state, "course.key"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(grading.course_key.text())
    _write_json_atomic(plan, os.path.join(state, "plan.json"))
    pending = [e.hex_id for e in entries if e not in done]
    logs = os.path.join(state, "logs")
    make_private_dir(logs)
    common = ["--chdir=" + ROOT, "--export=ALL"]
    if args.partition:
        common.append("--partition=" + args.partition)
    if args.time:
        common.append("--time=" + args.time)
    round_no = len(jobs)
    merge_cmd = "%s tools/lab/main.py grade --slurm-merge %s" % (PYTHON, _quote(state))
    if not pending:
        print("every submission of %s has its report (%d); submitting the merge job only"
              % (args.roster, len(entries)))
        merge = _run(["sbatch", "--parsable", "--job-name=mha-merge",
                      "--output=%s/merge_%%j.log" % logs] + common + ["--wrap", merge_cmd])
        merge = merge.strip().split(";")[0]
        jobs.append({"round": round_no, "array": None, "merge": merge, "tasks": 0,
                     "submitted": time.time()})
        _write_json_atomic([j for j in jobs], os.path.join(state, "jobs.json"))
        print("merge job %s; follow it with: ./lab grade --roster %s --out %s --slurm --status"
              % (merge, args.roster, out))
        return 0
    block = max(1, args.block)
    n_tasks = math.ceil(len(pending) / block)
    limit = _max_array_size()
    if n_tasks > limit:   # Slurm refuses larger arrays: larger blocks instead
        block = math.ceil(len(pending) / limit)
        n_tasks = math.ceil(len(pending) / block)
    round_dir = os.path.join(state, "round%d" % round_no)
    make_private_dir(round_dir)
    for i in range(n_tasks):
        _write_json_atomic(pending[i * block:(i + 1) * block],
                           os.path.join(round_dir, "block%d.json" % i))
    array = "0-%d" % (n_tasks - 1) + ("%%%d" % args.max_parallel if args.max_parallel else "")
    task_cmd = "%s tools/lab/main.py grade --slurm-task %s --slurm-round %d" % (
        PYTHON, _quote(state), round_no)
    array_id = _run(["sbatch", "--parsable", "--job-name=mha-grade", "--array=" + array,
                     "--cpus-per-task=%d" % args.cpus_per_task,
                     "--output=%s/grade_%%A_%%a.log" % logs] + common +
                    ["--wrap", task_cmd]).strip().split(";")[0]
    merge = _run(["sbatch", "--parsable", "--job-name=mha-merge",
                  "--dependency=afterany:" + array_id,
                  "--output=%s/merge_%%j.log" % logs] + common +
                 ["--wrap", merge_cmd]).strip().split(";")[0]
    jobs.append({"round": round_no, "array": array_id, "merge": merge, "tasks": n_tasks,
                 "submitted": time.time()})
    _write_json_atomic(jobs, os.path.join(state, "jobs.json"))
    print("submitted job array %s: %d task(s) of up to %d submission(s) each%s, for %d of %d "
          "submissions (%d already graded); merge job %s runs after it (prepared in %.0f s)"
          % (array_id, n_tasks, block,
             ", at most %d at once" % args.max_parallel if args.max_parallel else "",
             len(pending), len(entries), len(done), merge, time.time() - t0))
    print("follow it: ./lab grade --roster %s --out %s --slurm --status   (or: squeue -j %s,%s)"
          % (args.roster, out, array_id, merge))
    print("logs: %s" % logs)
    return 0


def _quote(path):
    import shlex
    return shlex.quote(path)


def status(args, out):
    """graded / running / waiting / failed counts of a Slurm grading."""
    state = state_dir(out)
    plan = _read_json(os.path.join(state, "plan.json"))
    if not plan:
        raise SystemExit("lab: %s holds no Slurm grading (no %s/plan.json)" % (out, state))
    jobs = _read_json(os.path.join(state, "jobs.json"), [])
    entries = _planned(plan)
    graded = {e.hex_id for e in entries if _reported(out, e)}
    states = _job_states([j for r in jobs for j in (r["array"], r["merge"]) if j])
    last = jobs[-1] if jobs else None
    running = waiting = 0
    if last and last["array"] and last["array"] in states:
        # The submissions left in each block whose task Slurm still lists.
        listed = _listed_tasks(last["array"])
        for i in range(last["tasks"]):
            if i not in listed:
                continue
            block = _read_json(os.path.join(state, "round%d" % last["round"],
                                            "block%d.json" % i), [])
            left = len([h for h in block if h not in graded])
            if listed[i] == "RUNNING":
                running += left
            else:
                waiting += left
    failed = len(entries) - len(graded) - running - waiting
    merge_state = "none"
    if last:
        merge_state = states.get(last["merge"], ["finished"])[0].lower()
    failed = max(0, failed)
    print("%s: %d submissions: %d graded, %d running, %d waiting, %d failed%s" % (
        plan["roster"], len(entries), len(graded), running, waiting, failed,
        " (no report: their task ended first, see %s; run the same command again to grade "
        "them)" % os.path.join(state, "logs") if failed else ""))
    print("course key %s, suite %s" % (plan.get("course_key"), plan.get("suite")))
    print("merge job %s: %s%s" % (last["merge"] if last else "-", merge_state,
                                  "; gradebook: %s" % os.path.join(out, "gradebook.csv")
                                  if os.path.exists(os.path.join(out, "gradebook.csv"))
                                  and merge_state == "finished" else ""))
    return 0


def _listed_tasks(array_id):
    """{task index: state} of the array's tasks Slurm still lists."""
    out = _run(["squeue", "--noheader", "--array", "--format=%i %T"])
    tasks = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith(array_id + "_"):
            continue
        index = parts[0].split("_", 1)[1]
        if index.isdigit():
            tasks[int(index)] = parts[1]
        elif index.startswith("["):   # still pending as a range: [3-7%2]
            spec = index.strip("[]").split("%")[0]
            for piece in spec.split(","):
                lo, _, hi = piece.partition("-")
                if lo.isdigit():
                    for i in range(int(lo), int(hi or lo) + 1):
                        tasks[i] = parts[1]
    return tasks


def run_task(state, round_no, write_submission):
    """One array task: grades its block's submissions that have no report."""
    plan = _read_json(os.path.join(state, "plan.json"))
    index = int(os.environ.get("SLURM_ARRAY_TASK_ID", "0"))
    block = _read_json(os.path.join(state, "round%d" % round_no, "block%d.json" % index))
    if plan is None or block is None:
        raise SystemExit("lab: no plan or block %d in %s" % (index, state))
    out = os.path.dirname(state)
    by_hex = {e.hex_id: e for e in _planned(plan)}
    todo = [by_hex[h] for h in block if not _reported(out, by_hex[h])]
    gone = [e for e in todo if not os.path.isdir(e.path)]
    for e in gone:     # no report: the merge names it, never a zero for a vanished folder
        print("task %d: %s: its folder is no longer in %s; not graded" % (
            index, e.label, plan["roster"]))
    todo = [e for e in todo if e not in gone]
    print("task %d: %d submission(s), %d to grade" % (index, len(block), len(todo)))
    sys.stdout.flush()
    if not todo:
        return 0
    # A work folder of this task's own on the node (beside the one
    # MHA_GRADE_DIR names, which --export=ALL brings from the login node):
    # tasks that share a node must not share job slots or a stage.
    os.environ["MHA_GRADE_DIR"] = "%s-slurm-%s_%d" % (
        os.environ.get("MHA_GRADE_DIR", "/var/tmp/mha-grade").rstrip("/"),
        os.environ.get("SLURM_ARRAY_JOB_ID", os.getpid()), index)
    labs = load_labs()
    jobs = int(os.environ.get("SLURM_CPUS_PER_TASK") or 0) or None
    secrets = [plan["roster"], out] + [p for p in (plan.get("gradescope"),) if p]
    grading = grade.open_grading(labs, _log, grade.Options(mode=plan["mode"], jobs=jobs),
                                 secrets=secrets, only=plan["labs"],
                                 frozen_suite=os.path.join(state, "suite"),
                                 course_key=os.path.join(state, "course.key"))
    if grading.suite_hash != plan.get("suite"):
        raise SystemExit("lab: the suite in %s (hash %s) is not the one this grading was "
                         "planned with (%s): the checkout changed since; grade into another "
                         "--out" % (ROOT, grading.suite_hash, plan.get("suite")))
    _log("grade: isolation: " + grading.isolation.describe()["summary"])
    subs = submission.of_roster(todo, grading.labs)
    count = [0]

    def progress(rep, sub):
        count[0] += 1
        entry = by_hex[roster.hex_id(sub.ident)]
        write_submission(rep, grading.rubric, plan.get("gradescope"), entry.folder)
        _write_json_atomic(report.deterministic(rep), report_path(out, entry.folder))
        print("[%d/%d] %-30s %s/%s points" % (count[0], len(subs), sub.name,
                                             report.fmt_points(rep["points"]),
                                             report.fmt_points(rep["max_points"])))
        sys.stdout.flush()
    grade.grade_all(grading, subs, progress)
    shutil.rmtree(os.environ["MHA_GRADE_DIR"], ignore_errors=True)
    return 0


class _Described:
    """The isolation the tasks graded with, as their reports recorded it."""

    def __init__(self, describe):
        self._describe = describe

    def describe(self):
        return self._describe


def run_merge(state, write_outputs):
    """The merge job: the whole class's outputs once every submission has its report."""
    plan = _read_json(os.path.join(state, "plan.json"))
    out = os.path.dirname(state)
    entries = _planned(plan)
    missing = [e for e in entries if not _reported(out, e)]
    missing_file = os.path.join(state, "missing.json")
    if missing:
        _write_json_atomic([e.shown_id for e in missing], missing_file)
        print("merge: %d of %d submissions have no report (%s%s): their tasks did not finish "
              "(time limit, node failure, scancel) or the grader failed; no gradebook is "
              "written from a partial class. Run the same ./lab grade --slurm command again: "
              "it grades only these." % (len(missing), len(entries),
                                         ", ".join(e.label for e in missing[:5]),
                                         ", ..." if len(missing) > 5 else ""))
        return 1
    if os.path.exists(missing_file):
        os.remove(missing_file)
    labs = load_labs()
    graded_labs = [l for l in labs if plan["labs"] is None or l.number in plan["labs"]]
    reports = [_read_json(report_path(out, e.folder)) for e in entries]
    # The rubric, from the frozen binaries' test names, as open_grading reads it.
    from grader import suite as suite_mod
    tests = {}
    for lab in graded_labs:
        a = suite_mod.LabArtefacts(lab, os.path.join(state, "suite", "bin"))
        tests[lab.dir] = suite_mod._list_tests(a.hidden)
    rubric = rubric_mod.load(labs, tests, rubric_mod.PATH)
    subs = submission.of_roster(entries, labs)
    _, ignored = roster.read(plan["roster"])

    class Args:
        roster = plan["roster"]
        csv = plan.get("csv")
        json = plan.get("json")
        similarity_threshold = plan.get("similarity_threshold")
    csv_path, json_path, lines = write_outputs(
        Args, out, reports, subs, ignored, labs, graded_labs, rubric,
        _Described(reports[0]["isolation"]), plan["mode"])
    print("merged %d submissions; gradebook: %s; report: %s" % (len(entries), csv_path,
                                                               json_path))
    for line in lines:
        print(line)
    return 0

