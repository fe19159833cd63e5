"""The grader's outputs: scoreboard, JSON report, Gradescope results.json, CSV gradebook.

Deterministic: the same submission graded twice gives byte-identical JSON
reports (no timestamps, no durations, no machine paths; sorted keys). Only
Gradescope's execution_time and the scoreboard's timing line vary.

Gradescope's results.json follows the rubric's visibility and feedback
policy per test (rubric.py, docs/INSTRUCTORS.md "Visibility and feedback").
"""
import csv
import io
import json
import os

from reports import feedback

_STATUS_WORDS = {"compile_error": "does not compile", "link_error": "does not link",
                 "grader_error": "grader error", "not_submitted": "not submitted"}


def deterministic(report):
    """The report without run-dependent fields (durations, the labs' timings)."""
    out = {k: v for k, v in report.items() if k != "seconds"}
    if "labs" in out:
        out["labs"] = [{k: v for k, v in r.items() if k != "timing"} for r in out["labs"]]
    return out


def write_json(report, path):
    _mkparent(path)
    with open(path, "w") as f:
        json.dump(deterministic(report), f, indent=1, sort_keys=True)
        f.write("\n")


def _mkparent(path):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)


def fmt_points(x):
    return ("%.2f" % x).rstrip("0").rstrip(".")


def scoreboard(report):
    out = io.StringIO()
    w = out.write
    if report.get("submission"):
        w("submission: %s (%s mode)\n" % (report["submission"], report["mode"]))
    for e in report.get("rubric_errors", []):
        w("rubric error: %s\n" % e)
    w("%-4s %-46s %7s %11s  %s\n" % ("lab", "title", "tests", "points", "first failure"))
    for r in report["labs"]:
        tests = "%d/%d" % (r["passed"], r["total"])
        pts = "%s/%s" % (fmt_points(r["points"]), fmt_points(r["max_points"]))
        first = r["first_failure"].replace("\n", " ")
        w("%-4d %-46s %7s %11s  %s\n" % (r["lab"], r["title"][:46], tests, pts, first[:220]))
    w("total: %s/%s points\n" % (fmt_points(report["points"]), fmt_points(report["max_points"])))
    missing = [r for r in report["labs"] if not r.get("submitted", True)]
    if missing and len(missing) < len(report["labs"]):
        w("not in the submission (0 points): lab %s\n"
          % ", ".join(str(r["lab"]) for r in missing))
    elif missing:
        w("the submission has no learner file: nothing was graded\n")
    for r in report["labs"]:
        for n in r.get("notes", []):
            w("note: lab %d: %s\n" % (r["lab"], n))
        warnings = r.get("warnings", [])
        if warnings and "is not implemented yet" not in r["first_failure"]:
            more = " (and %d more)" % (len(warnings) - 1) if len(warnings) > 1 else ""
            w("warning: lab %d: %s%s\n" % (r["lab"], warnings[0], more))
    if report.get("ignored_files"):
        w("ignored in the submission: %s\n" % ", ".join(report["ignored_files"][:20]) +
          (" ..." if len(report["ignored_files"]) > 20 else ""))
    for n in report.get("notes", []):
        w("note: %s\n" % n)
    if report.get("course_key"):
        w("graded with course key %s, suite %s\n" % (report["course_key"],
                                                      report.get("suite") or "?"))
    return out.getvalue()


def write_roster_json(reports, isolation, rubric, roster_name, mode, ignored, path, klass=None):
    """The roster's report; `klass` is the class section (class_report.build)."""
    _mkparent(path)
    data = {"roster": roster_name, "mode": mode, "ignored": ignored,
            "isolation": isolation.describe(), "rubric_errors": rubric.errors,
            "submissions": [deterministic(r) for r in reports]}
    # Which course key and suite graded the class (every report names its own).
    for field in ("course_key", "suite"):
        values = sorted({r.get(field) for r in reports if r.get(field)})
        if values:
            data[field] = values[0] if len(values) == 1 else values
    if klass is not None:
        data["class"] = klass
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


# Later is more restrictive: a test shown later than the results themselves
# stays out of the scoreboard that the results' "output" carries.
_LATER = {"visible": 0, "after_due_date": 1, "after_published": 2, "hidden": 3}
_WHEN = {"after_due_date": "after the due date", "after_published": "when grades are published",
         "hidden": "never (hidden)"}


def learner_view(report, rubric=None):
    """The report as a learner may read it in results.json's "output": each
    failed test's message under its feedback policy, and only the tests
    shown as soon as the results are."""
    if rubric is None:
        return report
    top = _LATER.get(rubric.visibility, 0)
    out = dict(report, labs=[])
    later = {}
    for r in report["labs"]:
        kept = []
        for t in r["tests"]:
            vis = rubric.test_visibility(r["dir"], t["name"])
            if _LATER.get(vis, 0) > top:
                later[vis] = later.get(vis, 0) + 1
                continue
            policy = rubric.feedback(r["dir"], t["name"])
            kept.append(dict(t, message="" if t["passed"] else
                             feedback.shown(t["message"], policy, r["status"], t.get("mistake")),
                             policy=policy))
        first = r["first_failure"] if r["status"] != "graded" else ""
        for t in kept:
            if first or t["passed"]:
                continue
            if t["policy"] == "full" and r["first_failure"].startswith(t["name"] + ": "):
                first = r["first_failure"]     # the grader's own summary of this test
                continue
            if t["policy"] == "full":
                summary = feedback.summarise_line(t["message"], t.get("mistake"))
            else:
                summary = t["message"] or "failed (details are not shown)"
            first = "%s: %s" % (t["name"], summary)
        # The "mistake" field stays with the grader: a learner reads what the
        # policy shows of it, in the message.
        lab = dict(r, tests=[{k: v for k, v in t.items() if k not in ("policy", "mistake")}
                             for t in kept],
                   passed=sum(1 for t in kept if t["passed"]), total=len(kept),
                   points=sum(t["points"] for t in kept),
                   max_points=sum(t["max_points"] for t in kept), first_failure=first)
        out["labs"].append(lab)
    out["points"] = sum(r["points"] for r in out["labs"])
    out["max_points"] = sum(r["max_points"] for r in out["labs"])
    out["notes"] = list(report.get("notes", [])) + [
        "%d more test%s shown %s" % (n, "s are" if n > 1 else " is", _WHEN[v])
        for v, n in sorted(later.items(), key=lambda kv: _LATER[kv[0]])]
    return out


def gradescope(report, rubric=None):
    """A Gradescope results.json object: every test with its visibility, and
    its output under its feedback policy (rubric.py)."""
    visibility = rubric.visibility if rubric else "visible"
    tests = []
    for r in report["labs"]:
        for i, t in enumerate(r["tests"], 1):
            policy = rubric.feedback(r["dir"], t["name"]) if rubric else "full"
            out = (feedback.shown(t["message"], policy, r["status"], t.get("mistake"))
                   if not t["passed"] else t.get("withheld", ""))
            tests.append({"name": "Lab %d: %s" % (r["lab"], t["name"]),
                          "number": "%d.%d" % (r["lab"], i),
                          "score": t["points"], "max_score": t["max_points"],
                          "output": out,
                          "visibility": rubric.test_visibility(r["dir"], t["name"])
                          if rubric else visibility})
    lines = [scoreboard(learner_view(report, rubric))]
    if report.get("isolation"):
        lines.append("isolation: %s" % report["isolation"].get("summary", ""))
    return {"score": report["points"], "execution_time": int(round(report.get("seconds", 0))),
            "output": "\n".join(lines), "tests": tests, "visibility": visibility,
            "stdout_visibility": "hidden"}


def write_gradescope(report, directory, rubric=None):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "results.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(gradescope(report, rubric), f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return path


# What a spreadsheet reads as a formula (or, after a tab or CR, as the start
# of one) when a cell begins with it: OWASP's "CSV injection" list.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A gradebook cell no spreadsheet evaluates: a string that would start a
    formula gets a leading apostrophe (shown as text); numbers stay numbers."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
        return value                   # "-1.5": a number, not a formula
    except ValueError:
        return "'" + value


def write_csv(reports, labs, path):
    """One row per submission, one column per lab (points), then total and notes."""
    _mkparent(path)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["submission"] + [lab.dir for lab in labs] + ["total", "max_total", "notes"])
        for rep in sorted(reports, key=lambda r: r["submission"]):
            by = {r["dir"]: r for r in rep["labs"]}
            row = [rep["submission"]]
            notes = []
            for lab in labs:
                r = by.get(lab.dir)
                row.append(fmt_points(r["points"]) if r else "")
                if r and r["status"] in _STATUS_WORDS:
                    notes.append("lab %d %s" % (lab.number, _STATUS_WORDS[r["status"]]))
            row += [fmt_points(rep["points"]), fmt_points(rep["max_points"]), "; ".join(notes)]
            w.writerow([csv_cell(c) for c in row])
