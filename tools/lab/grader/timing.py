"""Where grading time goes: compiling, checking, linking and running, per lab.

    rec = timing.Recorder()
    with rec:
        reports = grade.grade_all(grading, submissions)
    print(rec.line(reports))
    rec.write("timing.json", reports)

Each lab report carries a "timing" field from grade.grade_lab: seconds spent
in each step that really ran (compile, check, link, run; a step served from
the cache costs nothing and is not counted) and the job's total. The Recorder
only adds them up and measures the wall clock around the `with`.

Timings vary from run to run: report.deterministic() leaves them out of every
JSON report; the roster writes the totals to timing.json.
"""
import json
import time

STEPS = ("compile", "check", "link", "run")


class Recorder:
    def __init__(self):
        self.wall = 0.0
        self._t0 = None

    def __enter__(self):
        self._t0 = time.time()
        return self

    def __exit__(self, *exc):
        self.wall = time.time() - self._t0
        return False

    def summary(self, reports):
        """Totals: wall seconds, and per step its seconds (summed over the
        parallel slots) and how many times it really ran."""
        out = {"wall_s": round(self.wall, 1), "jobs": 0, "job_s": 0.0}
        for s in STEPS:
            out[s + "_s"] = 0.0
            out[s + "s"] = 0
        for rep in reports:
            for lab in rep["labs"]:
                t = lab.get("timing", {})
                out["jobs"] += 1
                out["job_s"] += t.get("total_s", 0.0)
                for s in STEPS:
                    out[s + "_s"] += t.get(s + "_s", 0.0)
                    out[s + "s"] += t.get(s + "s", 0)
        return {k: round(v, 1) if isinstance(v, float) else v for k, v in out.items()}

    def line(self, reports):
        s = self.summary(reports)
        return ("time: %.0f s wall for %d lab jobs; summed over the slots: compile %.0f s "
                "(%d files), object checks %.0f s, link %.0f s (%d), tests %.0f s (%d runs)"
                % (s["wall_s"], s["jobs"], s["compile_s"], s["compiles"], s["check_s"],
                   s["link_s"], s["links"], s["run_s"], s["runs"]))

    def write(self, path, reports, **extra):
        """timing.json: the totals, `extra`, and each lab's timing per submission."""
        data = dict(self.summary(reports), **extra)
        data["submissions"] = {r["submission"]: {str(l["lab"]): l.get("timing", {})
                                                 for l in r["labs"]} for r in reports}
        with open(path, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
