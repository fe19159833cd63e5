"""The grader's outputs: scoreboard, JSON report, Gradescope results.json, CSV gradebook.

Deterministic: the same submission graded twice gives byte-identical JSON
reports (no timestamps, no durations, no machine paths; sorted keys). Only
Gradescope's execution_time and the scoreboard's timing line vary.
"""
import csv
import io
import json
import os

_STATUS_WORDS = {"compile_error": "does not compile", "link_error": "does not link",
                 "grader_error": "grader error", "not_submitted": "not submitted"}


def deterministic(report):
    """The report without run-dependent fields (durations)."""
    out = {k: v for k, v in report.items() if k != "seconds"}
    return out


def write_json(report, path):
    _mkparent(path)
    with open(path, "w") as f:
        json.dump(deterministic(report), f, indent=1, sort_keys=True)
        f.write("\n")


def _mkparent(path):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)


def _fmt_points(x):
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
        pts = "%s/%s" % (_fmt_points(r["points"]), _fmt_points(r["max_points"]))
        first = r["first_failure"].replace("\n", " ")
        w("%-4d %-46s %7s %11s  %s\n" % (r["lab"], r["title"][:46], tests, pts, first[:220]))
    w("total: %s/%s points\n" % (_fmt_points(report["points"]), _fmt_points(report["max_points"])))
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
    return out.getvalue()


def write_roster_json(reports, ctx, roster_name, mode, ignored, path):
    _mkparent(path)
    with open(path, "w") as f:
        json.dump({"roster": roster_name, "mode": mode, "ignored": ignored,
                   "isolation": ctx.iso.describe(), "rubric_errors": ctx.rubric.errors,
                   "submissions": [deterministic(r) for r in reports]},
                  f, indent=1, sort_keys=True)
        f.write("\n")


def gradescope(report, rubric=None):
    """A Gradescope results.json object."""
    visibility = rubric.visibility if rubric else "visible"
    tests = []
    for r in report["labs"]:
        for i, t in enumerate(r["tests"], 1):
            out = t["message"] if not t["passed"] else ""
            tests.append({"name": "Lab %d: %s" % (r["lab"], t["name"]),
                          "number": "%d.%d" % (r["lab"], i),
                          "score": t["points"], "max_score": t["max_points"],
                          "output": out, "visibility": visibility})
    lines = [scoreboard(report)]
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
                row.append(_fmt_points(r["points"]) if r else "")
                if r and r["status"] in _STATUS_WORDS:
                    notes.append("lab %d %s" % (lab.number, _STATUS_WORDS[r["status"]]))
            row += [_fmt_points(rep["points"]), _fmt_points(rep["max_points"]), "; ".join(notes)]
            w.writerow(row)
