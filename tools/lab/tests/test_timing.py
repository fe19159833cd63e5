"""Timing of a roster: totals from the labs' own timings, kept out of the JSON."""
from reports import report
from grader import timing


def lab(n, **t):
    return {"lab": n, "points": 1.0, "timing": t}


def test_the_recorder_adds_up_the_steps_of_every_lab():
    reports = [{"submission": "a", "labs": [lab(1, compile_s=2.0, compiles=1, total_s=3.0),
                                            lab(2, link_s=0.5, links=1, run_s=1.0, runs=1)]},
               {"submission": "b", "labs": [lab(1, total_s=0.1)]}]
    rec = timing.Recorder()
    with rec:
        pass
    s = rec.summary(reports)
    assert (s["jobs"], s["compiles"], s["links"], s["runs"]) == (3, 1, 1, 1)
    assert s["compile_s"] == 2.0 and s["job_s"] == 3.1
    assert "3 lab jobs" in rec.line(reports)


def test_a_lab_without_timing_counts_as_a_job_that_did_nothing():
    rec = timing.Recorder()
    s = rec.summary([{"submission": "a", "labs": [{"lab": 1}]}])
    assert s["jobs"] == 1 and s["compiles"] == 0


def test_timings_are_left_out_of_the_json_report():
    rep = {"submission": "a", "seconds": 3.2,
           "labs": [{"lab": 1, "points": 1.0, "timing": {"compile_s": 2.0}}]}
    out = report.deterministic(rep)
    assert out == {"submission": "a", "labs": [{"lab": 1, "points": 1.0}]}
    assert rep["labs"][0]["timing"] == {"compile_s": 2.0}     # the report itself is untouched
