"""report and rubric: the outputs an instructor gets."""
import csv
import json

from reports import report
from reports import rubric
from labs import load_labs

LABS = load_labs()


def lab_report(lab, passed, total, first="", status="graded"):
    tests = [{"name": "T.t%d" % i, "passed": i < passed, "points": 1.0 if i < passed else 0.0,
              "max_points": 1.0, "message": "" if i < passed else first} for i in range(total)]
    return {"lab": lab.number, "dir": lab.dir, "title": lab.title, "status": status,
            "submitted": True, "passed": passed, "total": total, "points": float(passed),
            "max_points": float(total), "first_failure": first, "tests": tests, "notes": [],
            "warnings": []}


def submission_report():
    labs = [lab_report(LABS[0], 3, 3), lab_report(LABS[1], 1, 4, "looks like x", "graded")]
    return {"submission": "alice", "mode": "isolated", "labs": labs, "points": 4.0,
            "max_points": 7.0, "ignored_files": [], "notes": [], "rubric_errors": [],
            "isolation": {"summary": "separate user"}, "seconds": 3.2}


def test_the_json_report_has_no_durations():
    assert "seconds" not in report.deterministic(submission_report())


def test_the_scoreboard_has_a_line_per_lab_and_the_total():
    s = report.scoreboard(submission_report())
    assert "total: 4/7 points" in s
    assert s.count("\n") >= 4


def test_gradescope_results_carry_the_score_and_every_test():
    g = report.gradescope(submission_report())
    assert g["score"] == 4.0 and len(g["tests"]) == 7


def test_the_csv_has_one_row_per_submission(tmp_path):
    path = str(tmp_path / "g.csv")
    report.write_csv([submission_report()], LABS[:2], path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:3] == ["submission", LABS[0].dir, LABS[1].dir]
    assert rows[1][:3] == ["alice", "3", "1"]
    with open(path, "rb") as f:
        assert b"\r" not in f.read()


def test_rubric_errors_are_collected_not_raised(tmp_path):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps({"default_points": -1, "limits": {"bogus": 3},
                                "labs": {"99_nope": {}, LABS[0].dir: {"points": {"X.y": 2}}}}))
    r = rubric.load(LABS, {LABS[0].dir: ["A.b"]}, str(path))
    text = " ".join(r.errors)
    assert "default_points" in text and "bogus" in text and "99_nope" in text and "X.y" in text
    assert r.points(LABS[0].dir, "A.b") == 1


def test_a_broken_rubric_file_still_grades(tmp_path):
    path = tmp_path / "rubric.json"
    path.write_text("{not json")
    r = rubric.load(LABS, {}, str(path))
    assert r.errors and r.points(LABS[0].dir, "A.b") == 1
