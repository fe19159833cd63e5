"""Grading: every lab of every submission, scored from tests that run where
the learner's code cannot reach.

    ctx = Context(labs, log, Options(mode="isolated"))
    reports = grade_all(ctx, [Submission("alice", {1: b"...", 3: b"..."})])

For one lab of one submission (a job, run on one of `jobs` slots at once):

  0. claim a one-off uid for the job (sandbox.Job): no other job, grading or
     grader on this machine ever runs as it;
  1. compile the learner's file as that user, jailed (learner_build.py), and
     in cumulative mode the learner's earlier labs too;
  2. link it with the lab's learner runtime into the learner's process;
  3. run the lab's trusted test binary, which starts that process in its jail
     and calls it for every test (runner.py);
  4. score the verdicts with the rubric;
  5. kill whatever the job's user left running (and its cgroup).

Isolated mode (the default) links only lab N's file: the earlier labs it
calls are answered by the reference solutions inside the trusted test
process. Cumulative mode links the learner's own earlier labs instead.
A failure anywhere costs that lab of that submission, never the run.
"""
import concurrent.futures
import os
import shutil
import subprocess
import threading
import time
import traceback

from reports import feedback
from grader import learner_build
import limits
from reports import messages
from reports import rubric as rubric_mod
from grader import sandbox
from labs import ROOT, load_labs
from grader.suite import Suite, bazel_command


class Options:
    def __init__(self, mode="isolated", jobs=None):
        if mode not in ("isolated", "cumulative"):
            raise ValueError("mode must be isolated or cumulative, not %r" % mode)
        self.mode = mode
        self.jobs = jobs or max(1, min(os.cpu_count() or 1, 8))


class Submission:
    def __init__(self, name, files, ignored=None, notes=None, labs=None):
        self.name = name
        self.files = files               # {lab number: bytes}
        self.ignored = ignored or []
        self.notes = notes or []
        self.labs = labs                 # grade only these lab numbers (default: all)


def work_root():
    if os.environ.get("MHA_GRADE_DIR"):
        return os.environ["MHA_GRADE_DIR"]
    if os.geteuid() == 0:
        return "/var/tmp/mha-grade"
    return os.path.join(os.path.expanduser("~"), ".cache", "mha-grade")


def make_private_dir(path):
    """Creates `path` (and its missing parents) 0700, or makes an existing one
    private to its owner and group: made before any learner code runs."""
    path = os.path.abspath(path)
    missing = []
    p = path
    while not os.path.exists(p):
        missing.append(p)
        p = os.path.dirname(p)
    for d in reversed(missing):
        os.mkdir(d, 0o700)
        os.chmod(d, 0o700)
    if not missing and os.stat(path).st_mode & 0o007:
        os.chmod(path, os.stat(path).st_mode & 0o770)
    return path


def _check_traversable(path):
    """The build user must reach the work directory: every folder above it
    must let others through (o+x)."""
    if os.geteuid() != 0:
        return
    p = os.path.dirname(os.path.abspath(path))
    while p and p != "/":
        if not os.stat(p).st_mode & 0o001:
            raise RuntimeError("the grading work directory %s is under %s, which others may not "
                               "enter (mode %o): the unprivileged build user could not reach "
                               "it; set MHA_GRADE_DIR to a path under /var/tmp" % (
                                   path, p, os.stat(p).st_mode & 0o777))
        p = os.path.dirname(p)


class Context:
    """What one grading run sets up once: isolation, the trusted suite, the rubric."""

    def __init__(self, labs=None, log=None, options=None, rubric_path=None, secrets=(),
                 only=None):
        self.labs = labs or load_labs()
        # The labs this run grades (all by default); cumulative grading still
        # compiles the learner's earlier labs from self.labs.
        self.graded_labs = [l for l in self.labs if only is None or l.number in only]
        self.log = log or (lambda msg: None)
        self.options = options or Options()
        # Everything the grader creates is private from birth; what the job
        # users must read (the staged headers, the jails) is opened on purpose.
        os.umask(0o077)
        root = work_root()
        os.makedirs(root, exist_ok=True)
        os.chmod(root, 0o711)                              # traversable, not listable
        _check_traversable(root)
        self.private_dir = os.path.join(root, "private")  # root only: caches, results
        self.cache_dir = os.path.join(self.private_dir, "cache")
        self.jobs_dir = os.path.join(root, "jobs")         # the build users' directories
        self.stage_dir = os.path.join(root, "stage")       # headers, runtime: readable by all
        for d, mode in ((self.private_dir, 0o700), (self.cache_dir, 0o700),
                        (self.jobs_dir, 0o711), (self.stage_dir, 0o755)):
            os.makedirs(d, exist_ok=True)
            os.chmod(d, mode)
        self.iso = sandbox.probe(self.private_dir)
        if self.iso.cgroup:
            import atexit
            atexit.register(sandbox.remove_cgroup_parent, self.iso.cgroup)
        self.mnt = os.path.join(self.private_dir, "mnt")   # jail.py's root, one per namespace
        os.makedirs(self.mnt, exist_ok=True)
        self._seed_secret = self._load_seed_secret()
        # What learner code must not read: the suite, Bazel's outputs, rosters.
        self.protected = sandbox.protect(self._secrets() + list(secrets), self.iso, self.log)
        self.check_private(list(secrets) + [self.private_dir, self.cache_dir, self.jobs_dir])
        self.suite = Suite(self.graded_labs, self.stage_dir, self.log)
        self.suite.build()
        self.libroot = self._libroot()
        tests = {lab.dir: self.suite.artefacts[lab.number].hidden_tests
                 for lab in self.graded_labs}
        self.rubric = rubric_mod.load(self.labs, tests, rubric_path or rubric_mod.PATH)
        self._runs = {}
        self._runs_lock = threading.Lock()
        self._stubs = {}     # lab number: the stub's bytes, once checked (stub())
        # The source scan and object checks of learner_build.py (a second
        # layer); the self-test turns them off to show the wall holds alone.
        self.second_layer = True

    def _secrets(self):
        paths = [ROOT]
        try:
            base = subprocess.run(bazel_command() + ["info", "output_base"], cwd=ROOT,
                                  capture_output=True, text=True, timeout=120).stdout.strip()
            if base:
                paths.append(os.path.dirname(base))
        except (OSError, subprocess.TimeoutExpired):
            pass
        return paths

    def _libroot(self):
        """The shared libraries of a learner's process, from a trivial program
        linked like one (C++, OpenBLAS)."""
        d = os.path.join(self.private_dir, "libprobe")
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "probe.cc")
        with open(src, "w") as f:
            f.write("int main() { return 0; }\n")
        exe = os.path.join(d, "probe")
        subprocess.run(["g++", src, "-o", exe, "-Wl,--no-as-needed", "-lopenblas", "-pthread"],
                       check=True, capture_output=True)
        shutil.rmtree(os.path.join(self.stage_dir, "libroot"), ignore_errors=True)
        return sandbox.prepare_libroot(self.stage_dir, [exe])

    def check_private(self, paths):
        """Raises RuntimeError when a job's user could read any of `paths`
        (what the grader wrote): the self-check behind "private from birth"."""
        sandbox.check_private(paths, self.iso)

    def fresh_seed(self, what):
        """The seed of the hidden tests' fresh random inputs for `what` (a
        learner program's key): unpredictable without this machine's secret,
        yet the same each time the same program is graded, so that grades are
        deterministic. The secret lives in the private directory."""
        import hashlib
        return int.from_bytes(hashlib.sha256(self._seed_secret + what.encode()).digest()[:8],
                              "little")

    def _load_seed_secret(self):
        path = os.path.join(self.private_dir, "seed_secret")
        if not os.path.exists(path):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32))
        with open(path, "rb") as f:
            return f.read()

    def forget_runs(self):
        """Drops the test runs remembered so far: the next grading runs them again."""
        with self._runs_lock:
            self._runs.clear()

    def run_limits(self, lab):
        return self.rubric.limits(lab.dir)

    def stub(self, lab):
        """The committed stub of a lab, checked against the registry's hash
        (read and checked once per Context: cumulative grading links an
        earlier lab's stub into every job that lacks that lab)."""
        data = self._stubs.get(lab.number)
        if data is None:
            with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
                data = f.read()
            if lab.stub_sha256 and not lab.is_stub(data):
                raise RuntimeError("%s is not the stub recorded in labs/labs.json (its sha256 "
                                   "differs); restore it with git checkout" % lab.learner_file)
            self._stubs[lab.number] = data
        return data


def _lab_report(lab, status, message, tests, ctx, submitted, notes=None, warnings=None):
    scored = []
    points = max_points = 0.0
    for name, t in tests.items():
        mp = ctx.rubric.points(lab.dir, name)
        p = mp if t.passed else 0.0
        points += p
        max_points += mp
        entry = {"name": name, "passed": t.passed, "points": p, "max_points": mp,
                 "message": "" if t.passed else messages.printable(
                     t.message, limits.REPORT_MESSAGE_CHARS)}
        mistake = None if t.passed else _printable_mistake(getattr(t, "mistake", None))
        if mistake:
            entry["mistake"] = mistake      # the result stream's field (feedback.py)
        scored.append(entry)
    passed = sum(1 for t in tests.values() if t.passed)
    first = message
    if not first:
        for entry, t in zip(scored, tests.values()):
            if not t.passed:
                first = "%s: %s" % (entry["name"], feedback.sentence(entry["mistake"])
                                    if "mistake" in entry
                                    else messages.summarise_failure(t.message))
                break
    return {"lab": lab.number, "dir": lab.dir, "title": lab.title, "status": status,
            "submitted": submitted, "passed": passed, "total": len(tests), "points": points,
            "max_points": max_points, "first_failure": messages.printable(first),
            "tests": scored, "notes": notes or [], "warnings": warnings or []}


def _printable_mistake(mistake):
    """A test's "mistake" field with every string printable, or None."""
    mistake = feedback.as_mistake(mistake)
    if not mistake:
        return None
    return {k: messages.printable(v, limits.MESSAGE_CHARS) if isinstance(v, str) else v
            for k, v in mistake.items()}


def _failed_all(ctx, lab, kind, message):
    from grader import runner
    return {n: runner.TestResult(n, False, message)
            for n in ctx.suite.artefacts[lab.number].tests(kind)}


def grade_lab(ctx, sub, lab, slot, kind="hidden", mode=None):
    """The report of one lab of one submission, from its hidden tests (or, with
    kind="public", from the public tests the learner has), linked in `mode`
    (default: the context's). Never raises.
    Its "timing" says where the time went (steps served from a cache cost nothing)."""
    timing = {}
    t0 = time.time()
    try:
        job = sandbox.Job(ctx.iso, slot, ctx.mnt)
    except Exception as e:
        msg = "grader error (not your code): " + messages.printable("%s" % e, 300)
        ctx.log("grade: no identity for lab %d of %s: %s" % (lab.number, sub.name, e))
        report = _lab_report(lab, "grader_error", msg, _failed_all(ctx, lab, kind, msg), ctx,
                             lab.number in sub.files)
    else:
        try:
            report = _grade_lab(ctx, sub, lab, job, kind, timing, mode or ctx.options.mode)
        finally:
            sandbox.kill_job(ctx.iso, job, final=True)
    timing["total_s"] = round(time.time() - t0, 3)
    report["timing"] = timing
    return report


def _grade_lab(ctx, sub, lab, job, kind, timing, mode):
    try:
        source = sub.files.get(lab.number)
        if source is None:
            msg = "not submitted: no %s in the submission" % lab.learner_file.rsplit("/", 1)[-1]
            return _lab_report(lab, "not_submitted", msg, _failed_all(ctx, lab, kind, msg), ctx,
                               False)
        obj = learner_build.compile_source(ctx, lab, source, job, timing)
        if not obj.ok:
            return _lab_report(lab, "compile_error", obj.message,
                               _failed_all(ctx, lab, kind, obj.message), ctx, True)
        objects, notes = [obj], []
        if mode == "cumulative":
            for e in [x for x in ctx.labs if x.number < lab.number]:
                src = sub.files.get(e.number)
                dep = (learner_build.compile_source(ctx, e, src, job, timing)
                       if src is not None else None)
                if dep is None or not dep.ok:
                    notes.append("lab %d %s: its stub was linked instead" % (
                        e.number, "was not submitted" if dep is None else "does not compile"))
                    dep = learner_build.compile_source(ctx, e, ctx.stub(e), job, timing)
                objects.append(dep)
        # The link's key, hence the run's (ctx._runs), includes the mode.
        server = learner_build.link_server(ctx, lab, mode, objects, job, timing)
        if not server.ok:
            return _lab_report(lab, "link_error", server.message,
                               _failed_all(ctx, lab, kind, server.message), ctx, True, notes)
        key = (lab.number, kind, server.key)
        with ctx._runs_lock:
            cached = ctx._runs.get(key)
        if cached is None:
            from grader import runner
            t = time.time()
            cached = runner.run_tests(ctx, lab, kind, server.path, job, ctx.run_limits(lab),
                                      ctx.fresh_seed(server.key))
            learner_build.add_time(timing, "run", time.time() - t)
            with ctx._runs_lock:
                ctx._runs[key] = cached
        results, note = cached
        if note:
            notes.append(note)
        return _lab_report(lab, "graded", "", results, ctx, True, notes, obj.warnings)
    except Exception as e:  # a grader fault costs this lab's report a note, not the run
        detail = "%s: %s" % (type(e).__name__, e)
        ctx.log("grade: grader error in lab %d of %s: %s\n%s" % (
            lab.number, sub.name, detail, traceback.format_exc()))
        msg = "grader error (not your code): " + messages.printable(detail, 300)
        try:
            tests = _failed_all(ctx, lab, kind, msg)
        except Exception:
            tests = {}
        return _lab_report(lab, "grader_error", msg, tests, ctx, lab.number in sub.files)


def grade_all(ctx, submissions, progress=None, kind="hidden", labs=None, mode=None):
    """Reports of `submissions`, in order, over `labs` (default: every lab), in
    `mode` (default: the context's; the self-test grades one context both ways).
    Jobs (submission, lab) run `jobs` at a time."""
    labs = labs or ctx.graded_labs
    mode = mode or ctx.options.mode
    if mode not in ("isolated", "cumulative"):
        raise ValueError("mode must be isolated or cumulative, not %r" % mode)
    t0 = time.time()

    def labs_of(sub):
        return [l for l in labs if sub.labs is None or l.number in sub.labs]
    slots = list(range(ctx.options.jobs))
    free = list(slots)
    free_lock = threading.Lock()
    results = {}
    done_labs = {s.name: 0 for s in submissions}
    started = {s.name: None for s in submissions}

    def job(sub, lab):
        with free_lock:
            slot = free.pop()
        try:
            if started[sub.name] is None:
                started[sub.name] = time.time()
            return grade_lab(ctx, sub, lab, slot, kind, mode)
        finally:
            with free_lock:
                free.append(slot)

    reports = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(slots)) as pool:
        futures = {}
        for sub in submissions:
            for lab in labs_of(sub):
                futures[pool.submit(job, sub, lab)] = (sub, lab)
        for fut in concurrent.futures.as_completed(futures):
            sub, lab = futures[fut]
            results[(sub.name, lab.number)] = fut.result()
            done_labs[sub.name] += 1
            if done_labs[sub.name] == len(labs_of(sub)):
                rep = _submission_report(ctx, sub, [results[(sub.name, l.number)]
                                                    for l in labs_of(sub)],
                                         time.time() - (started[sub.name] or t0), kind, mode)
                reports.append(rep)
                if progress:
                    progress(rep)
    order = {s.name: i for i, s in enumerate(submissions)}
    reports.sort(key=lambda r: order[r["submission"]])
    return reports


def _submission_report(ctx, sub, lab_reports, seconds, kind, mode):
    return {
        "submission": sub.name,
        "mode": mode,
        "tests": kind,
        "isolation": ctx.iso.describe(),
        "labs": lab_reports,
        "points": sum(r["points"] for r in lab_reports),
        "max_points": sum(r["max_points"] for r in lab_reports),
        "ignored_files": [messages.printable(x) for x in sub.ignored],
        "notes": [messages.printable(x) for x in sub.notes],
        "rubric_errors": list(ctx.rubric.errors),
        "seconds": seconds,
    }
