"""The grader's outputs: scoreboard, JSON report, Gradescope results.json, CSV gradebook.

Deterministic: the same submission graded twice gives byte-identical JSON
reports (no timestamps, no durations, no machine paths; sorted keys). Only
Gradescope's execution_time and the scoreboard's timing line vary.
"""
import csv
import io
import json
import os

_STATUS_WORDS = {"compile_error": "does not compile", "rejected": "rejected",
                 "grader_error": "grader error", "no_tests": "no hidden tests yet"}


def deterministic(report):
    """The report without run-dependent fields."""
    return {k: v for k, v in report.items() if k != "seconds"}


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
        if r["status"] == "no_tests":
            tests, pts = "-", "-"
        else:
            tests = "%d/%d" % (r["passed"], r["total"])
            pts = "%s/%s" % (_fmt_points(r["points"]), _fmt_points(r["max_points"]))
        first = r["first_failure"].replace("\n", " ")
        w("%-4d %-46s %7s %11s  %s\n" % (r["lab"], r["title"][:46], tests, pts, first[:220]))
    w("total: %s/%s points\n" % (_fmt_points(report["points"]), _fmt_points(report["max_points"])))
    missing = [r for r in report["labs"] if not r.get("submitted", True)]
    if missing and len(missing) < len(report["labs"]):
        w("not in the submission (graded as the untouched stubs): lab %s\n"
          % ", ".join(str(r["lab"]) for r in missing))
    elif missing:
        w("the submission has no learner file: every lab was graded as its untouched stub\n")
    for r in report["labs"]:
        for n in r.get("notes", []):
            if not (n.startswith("no ") and "stub" in n):
                w("note: lab %d: %s\n" % (r["lab"], n))
        if r.get("review"):
            w("review: lab %d: %s\n" % (r["lab"], "; ".join(r["review"])))
    if report.get("ignored_files"):
        w("ignored in the submission: %s\n" % ", ".join(report["ignored_files"][:20]) +
          (" ..." if len(report["ignored_files"]) > 20 else ""))
    for n in report.get("notes", []):
        w("note: %s\n" % n)
    return out.getvalue()


def gradescope(report, visibility="visible"):
    """A Gradescope results.json object."""
    tests = []
    for r in report["labs"]:
        if r["status"] == "no_tests":
            continue
        for i, t in enumerate(r["tests"], 1):
            out = t["message"] if not t["passed"] else ""
            tests.append({"name": "Lab %d: %s" % (r["lab"], t["name"]),
                          "number": "%d.%d" % (r["lab"], i),
                          "score": t["points"], "max_score": t["max_points"],
                          "output": out, "visibility": visibility})
    lines = [scoreboard(report)]
    if report.get("isolation"):
        lines.append("isolation: %s" % report["isolation"].get("tests", ""))
    return {"score": report["points"], "execution_time": int(round(report.get("seconds", 0))),
            "output": "\n".join(lines), "tests": tests, "visibility": visibility,
            "stdout_visibility": "hidden"}


def write_gradescope(report, directory, visibility="visible"):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "results.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(gradescope(report, visibility), f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return path


def write_csv(reports, labs, path):
    """One row per submission, one column per lab (points), then total and notes."""
    _mkparent(path)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission"] + [lab.dir for lab in labs] + ["total", "max_total", "notes"])
        for rep in sorted(reports, key=lambda r: r["submission"]):
            by = {r["dir"]: r for r in rep["labs"]}
            row = [rep["submission"]]
            notes = []
            for lab in labs:
                r = by.get(lab.dir)
                row.append(_fmt_points(r["points"]) if r and r["status"] != "no_tests" else "")
                if r and r["status"] in _STATUS_WORDS and r["status"] != "no_tests":
                    notes.append("lab %d %s" % (lab.number, _STATUS_WORDS[r["status"]]))
                if r and r.get("review"):
                    notes.append("lab %d review" % lab.number)
            row += [_fmt_points(rep["points"]), _fmt_points(rep["max_points"]), "; ".join(notes)]
            w.writerow(row)
