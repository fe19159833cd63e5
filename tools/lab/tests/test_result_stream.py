"""The result stream's "mistake" field (common/grading/test_results.h): read by the
runner, kept by the grade, quoted by the first failure; with fakes, no Bazel."""
import json
import types

from grader import grade
from grader import runner
from reports import rubric as rubric_mod

DOC = "docs/02_batched_attention.md"
NO_SCALE = {"name": "no_scale", "words": "scores not scaled by 1/sqrt(d_head)", "doc": DOC,
            "looks_like": True}
SENTENCE = 'looks like scores not scaled by 1/sqrt(d_head); see %s, "Classic mistakes"' % DOC


def line(**fields):
    return json.dumps(dict({"name": "A.B", "passed": False, "ms": 2, "message": "m"}, **fields))


def test_a_verdict_with_a_mistake_keeps_it_as_data():
    r = runner.parse_result_line(line(mistake=NO_SCALE))
    assert (r.name, r.passed, r.ms, r.message) == ("A.B", False, 2, "m")
    assert r.mistake == NO_SCALE


def test_a_verdict_without_a_mistake_names_none():
    assert runner.parse_result_line(line()).mistake is None


def test_a_passed_verdict_names_no_mistake_even_with_a_field():
    assert runner.parse_result_line(line(passed=True, mistake=NO_SCALE)).mistake is None


def test_a_malformed_mistake_field_is_ignored_not_fatal():
    r = runner.parse_result_line(line(mistake={"name": ["x"], "words": "w", "doc": ""}))
    assert r is not None and r.mistake is None


def test_lines_that_are_not_verdicts_are_skipped():
    assert runner.parse_result_line("not json") is None
    assert runner.parse_result_line("[1, 2]") is None
    assert runner.parse_result_line('{"passed": true}') is None


def _rubric():
    return rubric_mod.Rubric({"default_points": 1}, [])  # every test 1 point


LAB = types.SimpleNamespace(number=2, dir="02_batched_attention", title="Attention")


def test_the_lab_report_keeps_the_field_and_quotes_its_sentence_first():
    message = ("tests/x.cc:9: Failure\nValue of: MatchesGolden(...)\n  Actual: false (" +
               SENTENCE + " (checked against g.npy: 4 of 4 elements differ))\nExpected: true")
    tests = {"A.Pass": runner.TestResult("A.Pass", True),
             "A.Two": runner.TestResult("A.Two", False, message, 1, NO_SCALE)}
    r = grade.lab_report(LAB, "graded", "", tests, _rubric(), True)
    entry = [t for t in r["tests"] if t["name"] == "A.Two"][0]
    assert entry["mistake"] == NO_SCALE
    assert "mistake" not in [t for t in r["tests"] if t["name"] == "A.Pass"][0]
    assert r["first_failure"] == "A.Two: " + SENTENCE


def test_a_failure_without_a_field_is_summarised_from_gtest_as_before():
    message = ("tests/x.cc:9: Failure\nExpected equality of these values:\n  a\n    Which is: 1\n"
               "  b\n    Which is: 2")
    tests = {"A.One": runner.TestResult("A.One", False, message)}
    r = grade.lab_report(LAB, "graded", "", tests, _rubric(), True)
    assert "mistake" not in r["tests"][0]
    assert r["first_failure"].startswith("A.One: ")
    assert "looks like" not in r["first_failure"]


def test_the_fields_strings_are_made_printable():
    dirty = dict(NO_SCALE, words="scores\x1b[31m not scaled")
    tests = {"A.One": runner.TestResult("A.One", False, "m", 0, dirty)}
    r = grade.lab_report(LAB, "graded", "", tests, _rubric(), True)
    assert "\x1b" not in r["tests"][0]["mistake"]["words"]


def test_a_stated_rule_is_quoted_as_the_terminal_printed_it():
    rule = dict(NO_SCALE, looks_like=False)
    tests = {"A.One": runner.TestResult("A.One", False, "m", 0, rule)}
    r = grade.lab_report(LAB, "graded", "", tests, _rubric(), True)
    assert r["first_failure"] == ('A.One: scores not scaled by 1/sqrt(d_head); see %s, '
                                  '"Classic mistakes"' % DOC)
