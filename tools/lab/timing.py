"""Where grading time goes: compiling, checking, linking and running, per lab.

    rec = timing.Recorder()
    with rec:
        reports = grade.grade_all(ctx, submissions)
    rec.summary()     # totals; each lab report also gets a "timing" field

grade.py does not time its steps. Until it does, the Recorder wraps, for the
duration of the `with` only, the functions grade.py calls through their
modules: grade.grade_lab (one job: a lab of a submission),
learner_build._run_as_slot (every compiler, object check and linker run:
told apart by their command) and runner.run_tests (the tests). The module
attributes are restored on exit. Cached steps cost (almost) nothing and are
not counted as work done.

The "timing" field varies from run to run: report.deterministic() leaves it
out of every JSON report; the roster writes the totals to timing.json.
"""
import json
import threading
import time

import grade
import learner_build
import runner

STEPS = ("compile", "check", "link", "run")


def step_of(argv):
    """Which step a command run as the build user is."""
    if argv and argv[0] in ("readelf", "nm"):
        return "check"
    if "-c" in argv:
        return "compile"
    return "link"


class Recorder:
    def __init__(self):
        self._local = threading.local()
        self._lock = threading.Lock()
        self.totals = {s: 0.0 for s in STEPS}
        self.counts = {s: 0 for s in STEPS}
        self.jobs = 0
        self.job_seconds = 0.0
        self.wall = 0.0
        self._saved = None

    def _add(self, step, seconds):
        t = getattr(self._local, "timing", None)
        if t is not None:
            t[step + "_s"] = t.get(step + "_s", 0.0) + seconds
            t[step + "s"] = t.get(step + "s", 0) + 1
        with self._lock:
            self.totals[step] += seconds
            self.counts[step] += 1

    def __enter__(self):
        orig_lab, orig_slot, orig_run = grade.grade_lab, learner_build._run_as_slot, runner.run_tests
        self._saved = (orig_lab, orig_slot, orig_run)
        rec = self

        def grade_lab(ctx, sub, lab, slot, kind="hidden"):
            rec._local.timing = {}
            t0 = time.time()
            try:
                report = orig_lab(ctx, sub, lab, slot, kind)
            finally:
                spent = time.time() - t0
                timing, rec._local.timing = rec._local.timing, None
                with rec._lock:
                    rec.jobs += 1
                    rec.job_seconds += spent
            timing["total_s"] = spent
            report["timing"] = {k: round(v, 3) if isinstance(v, float) else v
                                for k, v in sorted(timing.items())}
            return report

        def run_as_slot(ctx, slot, argv, cwd, timeout):
            t0 = time.time()
            try:
                return orig_slot(ctx, slot, argv, cwd, timeout)
            finally:
                rec._add(step_of(argv), time.time() - t0)

        def run_tests(*args, **kw):
            t0 = time.time()
            try:
                return orig_run(*args, **kw)
            finally:
                rec._add("run", time.time() - t0)

        grade.grade_lab, learner_build._run_as_slot, runner.run_tests = (
            grade_lab, run_as_slot, run_tests)
        self._t0 = time.time()
        return self

    def __exit__(self, *exc):
        self.wall = time.time() - self._t0
        grade.grade_lab, learner_build._run_as_slot, runner.run_tests = self._saved
        return False

    def summary(self):
        """Totals: wall seconds, and per step its seconds (summed over the
        parallel slots) and how many times it really ran."""
        out = {"wall_s": round(self.wall, 1), "jobs": self.jobs,
               "job_s": round(self.job_seconds, 1)}
        for s in STEPS:
            out[s + "_s"] = round(self.totals[s], 1)
            out[s + "s"] = self.counts[s]
        return out

    def line(self):
        s = self.summary()
        return ("time: %.0f s wall for %d lab jobs; summed over the slots: compile %.0f s "
                "(%d files), object checks %.0f s, link %.0f s (%d), tests %.0f s (%d runs)"
                % (s["wall_s"], s["jobs"], s["compile_s"], s["compiles"], s["check_s"],
                   s["link_s"], s["links"], s["run_s"], s["runs"]))

    def write(self, path, reports, **extra):
        """timing.json: the totals, `extra`, and each lab's timing per submission."""
        data = dict(self.summary(), **extra)
        data["submissions"] = {r["submission"]: {str(l["lab"]): l.get("timing", {})
                                                 for l in r["labs"]} for r in reports}
        with open(path, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
