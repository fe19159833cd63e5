"""Grading: every lab of every submission, scored from tests that run where
the learner's code cannot reach.

    grading = open_grading(labs, log, Options(mode="isolated"))
    reports = grade_all(grading, [Submission("alice", {1: b"...", 3: b"..."})])

A Grading holds what one run sets up once, as four objects, each passed only
where it is used:

  Workspace  (workspace.py)  where the run's files live: work root, private
                             folder, caches, the jobs' folders, the stage
  Isolation  (sandbox.py)    what the kernel allowed and the policy that
                             follows: one-off uids, namespaces, jails, limits
  Suite      (suite.py)      the trusted binaries, runtimes and staged headers
  Rubric     (reports/rubric.py)  points and limits per test

and a Builder (learner_build.py) made of the first three. Grading() takes
them ready-made: tools/lab/tests/grading_fakes.py builds one from fakes (no
root, no Bazel) for the unit tests of the grading core.

For one lab of one submission (a job, run on one of `jobs` slots at once):

  0. claim a one-off uid for the job (Isolation.new_job): no other job,
     grading or grader on this machine ever runs as it;
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
import atexit
import concurrent.futures
import os
import threading
import time
import traceback

import surface
from grader import cgroups
from grader import course_key as course_key_mod
from grader import ipc
from grader import learner_build
from grader import roster
from grader import runner
from grader import sandbox
from grader.suite import Suite, bazel_output_paths, source_hash
from grader.workspace import Workspace
import limits
from labs import ROOT, load_labs
from progress import Progress, ticking
from reports import feedback
from reports import messages
from reports import rubric as rubric_mod


class Options:
    def __init__(self, mode="isolated", jobs=None):
        if mode not in ("isolated", "cumulative"):
            raise ValueError("mode must be isolated or cumulative, not %r" % mode)
        self.mode = mode
        self.jobs = jobs or max(1, min(os.cpu_count() or 1, 8))


class Submission:
    """One learner's files. `name` is the label a report prints; `ident`, in a
    roster, the folder's exact name (roster.py), which the report names too.
    A grading run tells submissions apart by their place in its list, never
    by a name."""

    def __init__(self, name, files, ignored=None, notes=None, labs=None, ident=None):
        self.name = name
        self.files = files               # {lab number: bytes}
        self.ignored = ignored or []
        self.notes = notes or []
        self.labs = labs                 # grade only these lab numbers (default: all)
        self.ident = ident               # roster.Entry.id, or None


class Grading:
    """One grading run: every lab (`labs`), those it grades (`graded_labs`),
    and the objects it grades with. Made by open_grading(), or from fakes."""

    def __init__(self, labs, workspace, isolation, suite, rubric, options=None, log=None,
                 graded_labs=None, course_key=None, suite_hash=""):
        self.labs = labs
        # The labs this run grades; cumulative grading still compiles the
        # learner's earlier labs from self.labs.
        self.graded_labs = graded_labs if graded_labs is not None else list(labs)
        self.workspace = workspace
        self.isolation = isolation
        self.suite = suite
        self.rubric = rubric
        self.options = options or Options()
        self.log = log or (lambda msg: None)
        self.builder = learner_build.Builder(workspace, isolation, suite, labs)
        # Where the fresh inputs come from (course_key.py), and the suite's
        # hash: both named in every report.
        self.course_key = course_key
        self.suite_hash = suite_hash
        self._runs = {}      # (lab, kind, link key): the run's results, once run
        self._runs_lock = threading.Lock()
        self._stubs = {}     # lab number: the stub's bytes, once checked (stub())

    def stub(self, lab):
        """The committed stub of a lab, checked against the registry's hash
        (read and checked once per run: cumulative grading links an earlier
        lab's stub into every job that lacks that lab)."""
        data = self._stubs.get(lab.number)
        if data is None:
            data = lab.read_learner_file()
            if data is None:
                raise RuntimeError("%s is missing; restore it with git checkout" %
                                   lab.learner_file)
            if lab.stub_sha256 and not lab.is_stub(data):
                raise RuntimeError("%s is not the stub recorded in labs/labs.json (its sha256 "
                                   "differs); restore it with git checkout" % lab.learner_file)
            self._stubs[lab.number] = data
        return data

    def check_private(self, paths):
        """Raises RuntimeError when a job's user could read any of `paths`
        (what the grader wrote): the self-check behind "private from birth"."""
        self.isolation.check_private(paths)

    def forget_runs(self):
        """Drops the runs' results kept in memory, so the next grading runs the
        tests again (compiled objects and linked programs stay cached)."""
        with self._runs_lock:
            self._runs.clear()

    def _run(self, lab, kind, server, job, timing, mode, sources):
        """The results of `lab`'s `kind` tests against `server` (a Built link of
        `sources`, the learner files' bytes), run once per run and link key,
        on the fresh inputs the course key draws for those sources."""
        key = (lab.number, kind, server.key, mode)
        with self._runs_lock:
            cached = self._runs.get(key)
        if cached is None:
            t = time.time()
            cached = runner.run_tests(lab, kind, server.path, job, self.workspace,
                                      self.isolation, self.suite, self.rubric.limits(lab.dir),
                                      self.course_key.fresh_seed(lab.dir, mode, sources), mode)
            learner_build.add_time(timing, "run", time.time() - t)
            with self._runs_lock:
                self._runs[key] = cached
        return cached


def open_grading(labs=None, log=None, options=None, rubric_path=None, secrets=(), only=None,
                 frozen_suite=None, course_key=None):
    """Sets up a grading run on this machine: the workspace (private from
    birth), the isolation the kernel allows, the protected secrets, the trusted
    suite built by Bazel, the rubric. `only`: the lab numbers to grade.
    `course_key`: a course_key.CourseKey, or the path of one, or None for
    $MHA_COURSE_KEY or the default key (course_key.resolve).
    A Slurm task (grader/slurm.py) passes `frozen_suite`, the folder
    Suite.freeze() wrote on the login node, instead of building."""
    labs = labs or load_labs()
    graded = [l for l in labs if only is None or l.number in only]
    log = log or (lambda msg: None)
    # Everything the grader creates is private from birth; what the job
    # users must read (the staged headers, the jails) is opened on purpose.
    os.umask(0o077)
    if not isinstance(course_key, course_key_mod.CourseKey):
        course_key = course_key_mod.resolve(course_key, log)
    log("grade: " + course_key.describe())
    if course_key.path:
        secrets = list(secrets) + [course_key.path]
    workspace = Workspace.create()
    workspace.claim(log)
    isolation = sandbox.probe(workspace.private_dir)
    if isolation.cgroup:
        atexit.register(cgroups.remove_cgroup_parent, isolation.cgroup)
    # What learner code must not read: the suite, Bazel's outputs, rosters,
    # and the grading machine's own secrets (Gradescope's /autograder, its
    # submission_metadata.json with earlier results): the wall where no mount
    # namespace and no Landlock jail the compiler (sandbox.py).
    isolation.protect([ROOT] + bazel_output_paths() + list(secrets) +
                      host_secrets(workspace.root), log)
    isolation.check_private(list(secrets) + workspace.private_paths())
    suite = Suite(graded, workspace.stage_dir, log)
    if frozen_suite:
        suite.load(os.path.join(frozen_suite, "bin"), os.path.join(frozen_suite, "exec"))
    else:
        suite.build()
    with ticking("grade: staging the shared libraries of a learner's jail"):
        suite.stage_libraries(workspace.private_dir)
    tests = {lab.dir: suite.artefacts[lab.number].hidden_test_names for lab in graded}
    rubric = rubric_mod.load(labs, tests, rubric_path or rubric_mod.PATH)
    return Grading(labs, workspace, isolation, suite, rubric, options, log, graded, course_key,
                   source_hash(labs=labs))


# Places on a grading machine that hold what no learner may read; "/autograder"
# is Gradescope's (the suite in source/, the learner's files, the results and
# submission_metadata.json, with earlier submissions' results, hidden tests
# included). $MHA_GRADE_SECRETS adds more (paths separated by ":").
HOST_SECRETS = ["/autograder"]


def host_secrets(work_root, places=None):
    """The host's secret places that exist, made private whole; one that holds
    the work root is made private below it, all but the way to the work root."""
    places = list(HOST_SECRETS if places is None else places)
    places += [p for p in os.environ.get("MHA_GRADE_SECRETS", "").split(":") if p]
    work_root = os.path.abspath(work_root)
    out = []
    for place in places:
        place = os.path.abspath(place)
        if not os.path.lexists(place):
            continue
        if work_root != place and not work_root.startswith(place.rstrip("/") + "/"):
            out.append(place)
            continue
        # The work root is inside: every entry beside the way down is private.
        here = place
        while here != work_root:
            step = os.path.relpath(work_root, here).split(os.sep)[0]
            out += [os.path.join(here, e) for e in sorted(os.listdir(here)) if e != step]
            here = os.path.join(here, step)
    return out


def lab_report(lab, status, message, tests, rubric, submitted, notes=None, warnings=None):
    """One lab's report from `tests` ({name: runner.TestResult}) scored with
    `rubric`; `message` (when not empty) is its first failure."""
    scored = []
    points = max_points = 0.0
    # Argument checks score only beside a passing computation (rubric.score).
    earned = rubric.score(lab.dir, {name: t.passed for name, t in tests.items()})
    withheld = 0
    for name, t in tests.items():
        mp = rubric.points(lab.dir, name)
        p = earned[name]
        points += p
        max_points += mp
        entry = {"name": name, "passed": t.passed, "points": p, "max_points": mp,
                 "message": "" if t.passed else messages.printable(
                     t.message, limits.REPORT_MESSAGE_CHARS)}
        if t.passed and p == 0 and mp > 0:
            entry["withheld"] = rubric_mod.WITHHELD
            withheld += 1
        mistake = None if t.passed else _printable_mistake(getattr(t, "mistake", None))
        if mistake:
            entry["mistake"] = mistake      # the result stream's field (feedback.py)
        scored.append(entry)
    passed = sum(1 for t in tests.values() if t.passed)
    if withheld:
        notes = list(notes or []) + [
            "%d argument check%s passed but score%s nothing: argument checks earn their points "
            "only beside a passing computation, and no other test of this lab passed"
            % (withheld, "s" if withheld > 1 else "", "" if withheld > 1 else "s")]
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


def _failed_all(suite, lab, kind, message):
    return {n: runner.TestResult(n, False, message)
            for n in suite.artefacts[lab.number].test_names(kind)}


def grade_lab(grading, sub, lab, slot, kind="hidden", mode=None):
    """The report of one lab of one submission, from its hidden tests (or, with
    kind="public", from the public tests the learner has), linked in `mode`
    (default: the run's). Never raises.
    Its "timing" says where the time went (steps served from a cache cost nothing)."""
    timing = {}
    t0 = time.time()
    try:
        job = grading.isolation.new_job(slot, grading.workspace.mnt)
    except Exception as e:
        msg = "grader error (not your code): " + messages.printable("%s" % e, 300)
        grading.log("grade: no identity for lab %d of %s: %s" % (lab.number, sub.name, e))
        report = lab_report(lab, "grader_error", msg, _failed_all(grading.suite, lab, kind, msg),
                             grading.rubric, lab.number in sub.files)
    else:
        try:
            report = _grade_lab(grading, sub, lab, job, kind, timing,
                                mode or grading.options.mode)
        finally:
            grading.isolation.end_job(job)
    timing["total_s"] = round(time.time() - t0, 3)
    report["timing"] = timing
    return report


def _grade_lab(grading, sub, lab, job, kind, timing, mode):
    suite, rubric, build = grading.suite, grading.rubric, grading.builder

    def failed(status, message, submitted=True, notes=None):
        return lab_report(lab, status, message, _failed_all(suite, lab, kind, message), rubric,
                           submitted, notes)
    try:
        source = sub.files.get(lab.number)
        if source is None:
            return failed("not_submitted", "not submitted: no %s in the submission" %
                          lab.learner_file.rsplit("/", 1)[-1], submitted=False)
        obj = build.compile_source(lab, source, job, timing)
        if not obj.ok:
            return failed("compile_error", obj.message)
        objects, notes, owners, sources = [obj], [], [], [source]
        if mode == "cumulative":
            # Only the earlier labs its call surface reaches (surface.linked_labs):
            # a lab that may call nothing gets an executable with nothing else in it.
            for e in surface.linked_labs(lab, grading.labs, lab.root):
                src = sub.files.get(e.number)
                dep = build.compile_source(e, src, job, timing) if src is not None else None
                if dep is None or not dep.ok:
                    notes.append("lab %d %s: its stub was linked instead" % (
                        e.number, "was not submitted" if dep is None else "does not compile"))
                    src = grading.stub(e)
                    dep = build.compile_source(e, src, job, timing)
                objects.append(dep)
                owners.append(e)
                sources.append(src)
        # The link's key, hence the run's (Grading._run), includes the mode.
        server = build.link_server(lab, mode, objects, job, timing, owners)
        if not server.ok:
            return failed("link_error", server.message, notes=notes)
        results, note = grading._run(lab, kind, server, job, timing, mode, sources)
        if note:
            notes.append(note)
        return lab_report(lab, "graded", "", results, rubric, True, notes, obj.warnings)
    except ipc.GradingStopped:
        raise                # a job's residue that could not be removed: no grade is safe
    except Exception as e:  # a grader fault costs this lab's report a note, not the run
        detail = "%s: %s" % (type(e).__name__, e)
        grading.log("grade: grader error in lab %d of %s: %s\n%s" % (
            lab.number, sub.name, detail, traceback.format_exc()))
        msg = "grader error (not your code): " + messages.printable(detail, 300)
        try:
            tests = _failed_all(suite, lab, kind, msg)
        except Exception:
            tests = {}
        return lab_report(lab, "grader_error", msg, tests, rubric, lab.number in sub.files)


def _as_completed(futures, shown):
    """concurrent.futures.as_completed, with `shown` ticking while it waits."""
    pending = set(futures)
    while pending:
        finished, pending = concurrent.futures.wait(
            pending, timeout=1.0, return_when=concurrent.futures.FIRST_COMPLETED)
        shown.tick()
        for fut in finished:
            yield fut


def grade_all(grading, submissions, progress=None, kind="hidden", labs=None, mode=None):
    """Reports of `submissions`, in order, over `labs` (default: every graded
    lab), in `mode` (default: the run's; the self-test grades one run both
    ways). Jobs (submission, lab) run `jobs` at a time; `progress(report,
    submission)` is called as each submission is done."""
    labs = labs or grading.graded_labs
    mode = mode or grading.options.mode
    if mode not in ("isolated", "cumulative"):
        raise ValueError("mode must be isolated or cumulative, not %r" % mode)
    t0 = time.time()

    def labs_of(sub):
        return [l for l in labs if sub.labs is None or l.number in sub.labs]
    slots = list(range(grading.options.jobs))
    free = list(slots)
    free_lock = threading.Lock()
    # Keyed by the submission's place in `submissions`: two submissions are
    # two, whatever their names.
    results = {}
    done_labs = [0] * len(submissions)
    started = [None] * len(submissions)

    def job(at, sub, lab):
        with free_lock:
            slot = free.pop()
        try:
            if started[at] is None:
                started[at] = time.time()
            return grade_lab(grading, sub, lab, slot, kind, mode)
        finally:
            with free_lock:
                free.append(slot)

    reports = [None] * len(submissions)
    total = sum(len(labs_of(s)) for s in submissions)
    shown = Progress("grade: %s tests of %s" % (kind, submissions[0].name if len(submissions) == 1
                                                else "%d submissions" % len(submissions)))
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(slots)) as pool:
        futures = {}
        for at, sub in enumerate(submissions):
            for lab in labs_of(sub):
                futures[pool.submit(job, at, sub, lab)] = (at, sub, lab)
        for fut in _as_completed(futures, shown):
            at, sub, lab = futures[fut]
            done += 1
            shown.update("%d / %d labs graded (lab %d done)" % (done, total, lab.number))
            try:
                results[(at, lab.number)] = fut.result()
            except ipc.GradingStopped:
                for f in futures:     # the jobs not started yet never start
                    f.cancel()
                shown.done()
                raise
            done_labs[at] += 1
            if done_labs[at] == len(labs_of(sub)):
                rep = _submission_report(grading, sub, [results[(at, l.number)]
                                                    for l in labs_of(sub)],
                                         time.time() - (started[at] or t0), kind, mode)
                reports[at] = rep
                if progress:
                    progress(rep, sub)
    shown.done()
    return reports


def _submission_report(grading, sub, lab_reports, seconds, kind, mode):
    rep = {
        "submission": sub.name,
        "mode": mode,
        "tests": kind,
        "isolation": grading.isolation.describe(),
        "labs": lab_reports,
        "points": sum(r["points"] for r in lab_reports),
        "max_points": sum(r["max_points"] for r in lab_reports),
        "ignored_files": [messages.printable(x) for x in sub.ignored],
        "notes": [messages.printable(x) for x in sub.notes],
        "rubric_errors": list(grading.rubric.errors),
        "course_key": grading.course_key.fingerprint,
        "suite": grading.suite_hash,
        "seconds": seconds,
    }
    if sub.ident is not None:
        rep["submission_id"] = roster.shown_id(sub.ident)
    return rep
