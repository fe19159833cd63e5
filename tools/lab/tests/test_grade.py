"""grade: scoring every lab of every submission, with fakes (grading_fakes.py)."""
import os
import pytest

from grader import grade
from grading_fakes import TESTS, make_grading, passing_source, stub_source


def lab_report(rep, number):
    return [r for r in rep["labs"] if r["lab"] == number][0]


def grade_one(g, files, **kw):
    return grade.grade_all(g, [grade.Submission("alice", files)], **kw)[0]


@pytest.fixture
def g(workdir):
    return make_grading(workdir)


def test_a_correct_submission_gets_every_point_of_the_rubric(g):
    rep = grade_one(g, {1: passing_source(1), 2: passing_source(2)})
    assert rep["points"] == rep["max_points"] == 2 * (len(TESTS[1]) + len(TESTS[2]))
    assert [r["status"] for r in rep["labs"]] == ["graded", "graded"]


def test_a_submission_that_does_not_compile_scores_zero_on_that_lab_only(g):
    rep = grade_one(g, {1: b"#error oops\n", 2: passing_source(2)})
    one, two = lab_report(rep, 1), lab_report(rep, 2)
    assert one["status"] == "compile_error" and one["points"] == 0
    assert one["passed"] == 0 and one["total"] == len(TESTS[1])
    assert two["points"] == two["max_points"] > 0


def test_a_compile_error_is_the_first_failure_and_names_the_learners_file(g):
    rep = grade_one(g, {1: b"#error oops\n"}, labs=g.labs[:1])
    first = lab_report(rep, 1)["first_failure"]
    assert "labs/01_alpha/alpha.cc" in first and "/jobs/" not in first


def test_a_lab_not_submitted_scores_zero_and_names_the_missing_file(g):
    rep = grade_one(g, {1: passing_source(1)})
    two = lab_report(rep, 2)
    assert two["status"] == "not_submitted" and not two["submitted"]
    assert "beta.cc" in two["first_failure"] and two["points"] == 0


def test_a_failed_test_costs_its_points_and_is_the_first_failure(g):
    rep = grade_one(g, {1: b"PASS A.Shape\n"}, labs=g.labs[:1])
    one = lab_report(rep, 1)
    assert one["points"] == 2 and one["max_points"] == 4
    assert one["first_failure"] == "A.Values: A.Values: wrong answer"


def test_points_per_test_come_from_the_rubric(workdir):
    g = make_grading(workdir, rubric={"labs": {"01_alpha": {"points": {"A.Values": 5}}}})
    rep = grade_one(g, {1: passing_source(1)}, labs=g.labs[:1])
    points = {t["name"]: t["max_points"] for t in lab_report(rep, 1)["tests"]}
    assert points == {"A.Shape": 1.0, "A.Values": 5.0}


def test_the_public_tests_are_graded_from_the_public_binary(g):
    rep = grade_one(g, {1: passing_source(1)}, labs=g.labs[:1], kind="public")
    assert [t["name"] for t in lab_report(rep, 1)["tests"]] == ["A.Shape"]
    assert rep["tests"] == "public"


def test_isolated_mode_links_only_the_labs_own_file(g):
    grade_one(g, {1: passing_source(1), 2: passing_source(2)}, labs=g.labs[1:])
    (link,) = g.isolation.toolchain.links
    assert link["objects"] == [passing_source(2)]
    assert "/stage/runtime/02_beta-isolated.a" in link["argv"]


def lab2_calls_lab1(g):
    """Lab 2's call surface names lab 1's alpha_fn (tests/01_alpha/remote.cc)."""
    d = os.path.join(g.labs[0].root, "tests", g.labs[0].dir)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "remote.cc"), "w") as f:
        f.write("MHA_REMOTE_FUNCTION(Tensor, alpha_fn, (x))\n")
    g.labs[1].calls = ["alpha_fn"]


def test_cumulative_mode_links_no_earlier_lab_outside_the_call_surface(g):
    grade_one(g, {1: passing_source(1), 2: passing_source(2)}, labs=g.labs[1:],
              mode="cumulative")
    (link,) = g.isolation.toolchain.links
    assert link["objects"] == [passing_source(2)]


def test_cumulative_mode_links_the_stub_of_a_lab_the_learner_lacks(g):
    lab2_calls_lab1(g)
    rep = grade_one(g, {2: passing_source(2)}, labs=g.labs[1:], mode="cumulative")
    (link,) = g.isolation.toolchain.links
    assert link["objects"] == [passing_source(2), stub_source(1)]
    assert "lab 1 was not submitted: its stub was linked instead" in lab_report(rep, 2)["notes"]


def test_cumulative_mode_links_the_stub_of_an_earlier_lab_that_does_not_compile(g):
    lab2_calls_lab1(g)
    rep = grade_one(g, {1: b"#error\n", 2: passing_source(2)}, labs=g.labs[1:],
                    mode="cumulative")
    assert g.isolation.toolchain.links[0]["objects"][1] == stub_source(1)
    assert "lab 1 does not compile: its stub was linked instead" in lab_report(rep, 2)["notes"]


def test_cumulative_mode_links_the_learners_own_earlier_lab(g):
    lab2_calls_lab1(g)
    grade_one(g, {1: passing_source(1), 2: passing_source(2)}, labs=g.labs[1:],
              mode="cumulative")
    (link,) = g.isolation.toolchain.links
    assert link["objects"] == [passing_source(2), passing_source(1)]
    assert "/stage/runtime/02_beta-cumulative.a" in link["argv"]


def test_a_stub_that_differs_from_the_registry_is_refused_by_name(g):
    with open(g.labs[0].root + "/" + g.labs[0].learner_file, "wb") as f:
        f.write(b"// edited\n")
    with pytest.raises(RuntimeError, match="labs/01_alpha/alpha.cc is not the stub"):
        g.stub(g.labs[0])


def test_a_grader_fault_in_one_lab_is_a_grader_error_of_that_lab_not_the_run(g):
    del g.suite.artefacts[1].runtime["isolated"]      # the link of lab 1 fails in the grader
    rep = grade_one(g, {1: passing_source(1), 2: passing_source(2)})
    one = lab_report(rep, 1)
    assert one["status"] == "grader_error" and one["first_failure"].startswith(
        "grader error (not your code): KeyError")
    assert lab_report(rep, 2)["points"] == lab_report(rep, 2)["max_points"]
    assert any("grader error in lab 1 of alice" in m for m in g.logged)


def test_every_job_is_ended_even_when_grading_it_fails(g):
    del g.suite.artefacts[1].runtime["isolated"]
    grade_one(g, {1: passing_source(1), 2: passing_source(2)})
    assert len(g.isolation.ended) == len(g.isolation.jobs) == 2


def test_the_same_program_is_compiled_linked_and_run_once_per_grading_run(workdir):
    g = make_grading(workdir, jobs=1)      # one slot: the second job finds the first one's run
    subs = [grade.Submission(n, {1: passing_source(1)}) for n in ("alice", "bob")]
    reps = grade.grade_all(g, subs, labs=g.labs[:1])
    assert g.isolation.toolchain.compiles == 1 and len(g.isolation.trusted) == 1
    assert reps[0]["labs"][0]["tests"] == reps[1]["labs"][0]["tests"]


def test_forgetting_the_runs_runs_the_tests_again(g):
    grade_one(g, {1: passing_source(1)}, labs=g.labs[:1])
    g.forget_runs()
    grade_one(g, {1: passing_source(1)}, labs=g.labs[:1])
    assert len(g.isolation.trusted) == 2 and g.isolation.toolchain.compiles == 1


def test_reports_come_back_in_the_order_of_the_submissions(g):
    names = ["s%d" % i for i in range(6)]
    subs = [grade.Submission(n, {1: (b"PASS A.Shape\n" * (i + 1))}) for i, n in enumerate(names)]
    reps = grade.grade_all(g, subs, labs=g.labs[:1])
    assert [r["submission"] for r in reps] == names


def test_the_submission_report_says_how_it_was_graded(g):
    rep = grade_one(g, {1: passing_source(1)}, labs=g.labs[:1], mode="cumulative")
    assert rep["mode"] == "cumulative" and rep["tests"] == "hidden"
    assert rep["isolation"] == {"summary": "fake isolation (unit tests)"}


def test_an_unknown_mode_is_refused_by_name(g):
    with pytest.raises(ValueError, match="'partial'"):
        grade_one(g, {1: passing_source(1)}, mode="partial")


def test_an_argument_check_scores_nothing_when_no_computation_passes(workdir):
    g = make_grading(workdir, rubric={"argument_checks": ["*.Edge"]})
    rep = grade_one(g, {2: b"PASS B.Edge\n"}, labs=g.labs[1:])
    two = lab_report(rep, 2)
    edge = [t for t in two["tests"] if t["name"] == "B.Edge"][0]
    assert edge["passed"] and edge["points"] == 0 and edge["max_points"] == 1
    assert "only beside a passing computation" in edge["withheld"]
    assert two["points"] == 0 and two["passed"] == 1
    assert any("1 argument check passed but scores nothing" in n for n in two["notes"])


def test_an_argument_check_scores_beside_a_passing_computation(workdir):
    g = make_grading(workdir, rubric={"argument_checks": ["*.Edge"]})
    rep = grade_one(g, {2: b"PASS B.Edge\nPASS B.Values\n"}, labs=g.labs[1:])
    two = lab_report(rep, 2)
    assert two["points"] == 2 and not any("withheld" in t for t in two["tests"])


def test_a_weight_draw_alone_does_not_unlock_the_argument_checks(workdir):
    g = make_grading(workdir, rubric={"argument_checks": ["*.Edge"],
                                      "labs": {"02_beta": {"weight_draws": ["B.Shape"]}}})
    rep = grade_one(g, {2: b"PASS B.Edge\nPASS B.Shape\n"}, labs=g.labs[1:])
    points = {t["name"]: t["points"] for t in lab_report(rep, 2)["tests"]}
    assert points == {"B.Shape": 1, "B.Values": 0, "B.Edge": 0}
