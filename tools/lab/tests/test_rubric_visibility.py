"""The rubric's visibility and feedback settings: checked, resolved, and written
into Gradescope's results.json."""
import json
import types

import pytest

from reports import report
from reports import rubric

LABS = [types.SimpleNamespace(number=1, dir="01_split_heads", title="Split"),
        types.SimpleNamespace(number=4, dir="04_causal_mask", title="Masks")]
TESTS = {"01_split_heads": ["Split.A", "Split.B"], "04_causal_mask": ["Mask.A", "Mask.B"]}


def load(workdir, data):
    p = workdir / "rubric.json"
    p.write_text(json.dumps(data))
    return rubric.load(LABS, TESTS, str(p))


def test_a_valid_rubric_has_no_errors(workdir):
    r = load(workdir, {
        "gradescope": {"visibility": "after_due_date", "feedback": "misconception"},
        "similarity": {"threshold": 60, "max_copies": 5},
        "labs": {"04_causal_mask": {"visibility": "visible", "feedback": "full",
                                    "tests": {"Mask.B": {"visibility": "hidden",
                                                         "feedback": "points"}}}}})
    assert r.errors == []
    assert r.similarity() == {"threshold": 60, "max_copies": 5}


def test_the_most_specific_setting_wins(workdir):
    r = load(workdir, {
        "gradescope": {"visibility": "after_due_date", "feedback": "misconception"},
        "labs": {"04_causal_mask": {"visibility": "visible", "feedback": "full",
                                    "tests": {"Mask.B": {"visibility": "hidden",
                                                         "feedback": "points"}}}}})
    assert (r.test_visibility("01_split_heads", "Split.A"), r.feedback("01_split_heads", "Split.A")) \
        == ("after_due_date", "misconception")
    assert (r.test_visibility("04_causal_mask", "Mask.A"), r.feedback("04_causal_mask", "Mask.A")) \
        == ("visible", "full")
    assert (r.test_visibility("04_causal_mask", "Mask.B"), r.feedback("04_causal_mask", "Mask.B")) \
        == ("hidden", "points")


def test_defaults_are_visible_and_full(workdir):
    r = load(workdir, {})
    assert r.test_visibility("01_split_heads", "Split.A") == "visible"
    assert r.feedback("01_split_heads", "Split.A") == "full"


@pytest.mark.parametrize("data, words", [
    ({"gradescope": {"visibility": "later"}}, "gradescope.visibility = 'later' must be one of"),
    ({"gradescope": {"feedback": "some"}}, "gradescope.feedback = 'some' must be one of"),
    ({"gradescope": {"visiblity": "hidden"}}, "gradescope.visiblity is not a setting"),
    ({"labs": {"01_split_heads": {"feedback": "verbose"}}}, "labs.01_split_heads.feedback"),
    ({"labs": {"01_split_heads": {"tests": {"Split.Z": {"visibility": "hidden"}}}}},
     "Split.Z for lab 1, which has no such hidden test"),
    ({"labs": {"01_split_heads": {"tests": {"Split.A": "hidden"}}}}, "must be an object"),
    ({"labs": {"01_split_heads": {"tests": {"Split.A": {"shown": 1}}}}}, "unknown key 'shown'"),
    ({"labs": {"01_split_heads": {"visibilty": "hidden"}}}, "unknown key 'visibilty'"),
    ({"labs": {"01_split_heads": []}}, "labs.01_split_heads must be an object"),
    ({"labs": {"01_split_heads": {"points": 3}}}, "labs.01_split_heads.points must be an object"),
    ({"similarity": {"threshold": 150}}, "similarity.threshold = 150 must be a number from 0 to 100"),
    ({"similarity": {"max_copies": "four"}}, "similarity.max_copies = 'four'"),
    ({"similarity": {"threshhold": 50}}, "similarity.threshhold is not a setting"),
    ({"similarity": {"enabled": "yes"}}, "similarity.enabled = 'yes' must be true or false"),
    ({"grading": {}}, "unknown key 'grading' at the top"),
    ({"limits": {"test_seconds": -1}}, "limits.test_seconds = -1 is not a known positive limit"),
])
def test_bad_values_are_errors_and_never_raise(workdir, data, words):
    r = load(workdir, data)
    assert any(words in e for e in r.errors), r.errors
    # The bad value is dropped: the default applies.
    assert r.test_visibility("01_split_heads", "Split.A") in rubric.VISIBILITIES
    assert r.feedback("01_split_heads", "Split.A") in rubric.FEEDBACK


def _report():
    looks = ('Actual: false (looks like a transposed mask: -inf below the diagonal; see '
             'docs/04_causal_mask.md, "Classic mistakes" (checked against x.npy: 30 of 36 '
             'elements differ)) Expected: true')

    def lab(number, d, tests):
        return {"lab": number, "dir": d, "title": d, "status": "graded", "submitted": True,
                "passed": sum(t["passed"] for t in tests), "total": len(tests),
                "points": sum(t["points"] for t in tests),
                "max_points": sum(t["max_points"] for t in tests),
                "first_failure": next(("%s: %s" % (t["name"], t["message"])
                                       for t in tests if not t["passed"]), ""),
                "tests": tests, "notes": [], "warnings": []}

    transposed = {"name": "", "words": "a transposed mask: -inf below the diagonal",
                  "doc": "docs/04_causal_mask.md"}

    def t(name, passed, message="", mistake=None):
        out = {"name": name, "passed": passed, "points": 1.0 if passed else 0.0,
               "max_points": 1.0, "message": message}
        if mistake:
            out["mistake"] = mistake
        return out
    labs = [lab(1, "01_split_heads", [t("Split.A", True), t("Split.B", False, "plain failure")]),
            lab(4, "04_causal_mask", [t("Mask.A", False, looks, transposed),
                                      t("Mask.B", False, looks, transposed)])]
    return {"submission": "x", "mode": "isolated", "labs": labs, "notes": [],
            "points": 1.0, "max_points": 4.0, "seconds": 3.0}


def test_results_json_carries_each_tests_visibility_and_policy(workdir):
    r = load(workdir, {
        "gradescope": {"visibility": "visible", "feedback": "full"},
        "labs": {"04_causal_mask": {"feedback": "misconception",
                                    "tests": {"Mask.B": {"visibility": "after_published",
                                                         "feedback": "points"}}}}})
    g = report.gradescope(_report(), r)
    by = {t["name"]: t for t in g["tests"]}
    assert by["Lab 1: Split.B"]["output"] == "plain failure"
    assert by["Lab 1: Split.B"]["visibility"] == "visible"
    assert by["Lab 4: Mask.A"]["output"] == ('looks like a transposed mask: -inf below the '
                                             'diagonal; see docs/04_causal_mask.md, '
                                             '"Classic mistakes"')
    assert by["Lab 4: Mask.B"]["output"] == ""
    assert by["Lab 4: Mask.B"]["visibility"] == "after_published"
    assert g["score"] == 1.0


def test_the_scoreboard_output_hides_what_is_shown_later_and_the_numbers(workdir):
    r = load(workdir, {
        "labs": {"04_causal_mask": {"feedback": "misconception",
                                    "tests": {"Mask.B": {"visibility": "hidden"}}}}})
    out = report.gradescope(_report(), r)["output"]
    assert "30 of 36 elements differ" not in out
    assert "Mask.A: looks like a transposed mask" in out
    assert "1 more test is shown never (hidden)" in out
    assert "Mask.B" not in out


def test_without_a_rubric_everything_is_visible_in_full():
    g = report.gradescope(_report())
    assert all(t["visibility"] == "visible" for t in g["tests"])
    assert "30 of 36 elements differ" in json.dumps(g)


def test_the_learner_view_keeps_the_mistake_field_to_the_grader(workdir):
    r = load(workdir, {"labs": {"04_causal_mask": {"feedback": "points"}}})
    view = report.learner_view(_report(), r)
    lab4 = [x for x in view["labs"] if x["lab"] == 4][0]
    assert all("mistake" not in t for t in lab4["tests"])
    assert all(t["message"] == "" for t in lab4["tests"])
