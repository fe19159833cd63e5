"""Timing of a roster: the steps are told apart, the wrapped functions are
restored, and the timings stay out of the deterministic JSON."""
import grade
import learner_build
import report
import runner
import timing


def test_each_command_of_the_build_user_is_a_step():
    assert timing.step_of(["g++", "-std=c++17", "-I", "inc", "-c", "a.cc", "-o", "a.o"]) == \
        "compile"
    assert timing.step_of(["g++", "-o", "server", "obj0.o", "rt.a"]) == "link"
    assert timing.step_of(["nm", "-P", "a.o"]) == "check"
    assert timing.step_of(["readelf", "-S", "-W", "a.o"]) == "check"


def test_the_recorder_times_a_job_and_puts_everything_back():
    before = (grade.grade_lab, learner_build._run_as_slot, runner.run_tests)

    def fake_slot(ctx, slot, argv, cwd, timeout):
        return "ran"

    learner_build._run_as_slot = fake_slot
    try:
        originals = (grade.grade_lab, learner_build._run_as_slot, runner.run_tests)

        def fake_lab(ctx, sub, lab, slot, kind="hidden"):
            learner_build._run_as_slot(None, 0, ["g++", "-c", "x.cc"], "/", 1)
            learner_build._run_as_slot(None, 0, ["g++", "-o", "server"], "/", 1)
            return {"lab": 1}

        grade.grade_lab = fake_lab
        rec = timing.Recorder()
        with rec:
            out = grade.grade_lab(None, None, None, 0)
        assert (grade.grade_lab, learner_build._run_as_slot, runner.run_tests) == (
            fake_lab, fake_slot, originals[2])
        assert out["timing"]["compiles"] == 1 and out["timing"]["links"] == 1
        assert "total_s" in out["timing"] and "runs" not in out["timing"]
        s = rec.summary()
        assert (s["jobs"], s["compiles"], s["links"], s["runs"]) == (1, 1, 1, 0)
    finally:
        grade.grade_lab, learner_build._run_as_slot, runner.run_tests = before


def test_timings_are_left_out_of_the_json_report():
    rep = {"submission": "a", "seconds": 3.2,
           "labs": [{"lab": 1, "points": 1.0, "timing": {"compile_s": 2.0}}]}
    out = report.deterministic(rep)
    assert out == {"submission": "a", "labs": [{"lab": 1, "points": 1.0}]}
    assert rep["labs"][0]["timing"] == {"compile_s": 2.0}     # the report itself is untouched
