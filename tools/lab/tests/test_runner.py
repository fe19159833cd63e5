"""runner: one lab's trusted test binary against a learner's program, with fakes."""
import os

import pytest

from grader import runner
from grader.workspace import Workspace
from grading_fakes import FakeIsolation, FakeJob, FakeToolchain, make_labs, make_suite

LIMITS = {"memory_mb": 512, "test_seconds": 5, "lab_seconds": 20}


@pytest.fixture
def env(workdir):
    os.chmod(str(workdir), 0o711)
    labs = make_labs(str(workdir / "checkout"))
    ws = Workspace.create(str(workdir / "work"))
    suite = make_suite(labs, ws, str(workdir / "bazel-bin"))
    return labs[1], ws, FakeIsolation(FakeToolchain()), suite, workdir


def learner_program(workdir, lines):
    """A learner's linked program (as the fake linker writes them)."""
    path = str(workdir / "server")
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n%sEOF\n" % "".join(l + "\n" for l in lines))
    os.chmod(path, 0o755)
    return path


def run(env, lines, run_limits=LIMITS, kind="hidden", seed=7):
    lab, ws, iso, suite, workdir = env
    return runner.run_tests(lab, kind, learner_program(workdir, lines), FakeJob(3), ws, iso,
                            suite, run_limits, seed)


def test_every_test_of_the_binary_gets_its_verdict_from_the_result_stream(env):
    results, note = run(env, ["PASS B.Shape", "PASS B.Edge"])
    assert {n: r.passed for n, r in results.items()} == {
        "B.Shape": True, "B.Values": False, "B.Edge": True}
    assert results["B.Values"].message == "B.Values: wrong answer" and note == ""


def test_a_hidden_test_missing_from_the_stream_counts_as_failed(env):
    env[3].artefacts[2].hidden_test_names.append("B.Extra")     # listed, never reported
    results, _ = run(env, ["PASS B.Shape", "PASS B.Values", "PASS B.Edge"])
    assert not results["B.Extra"].passed and results["B.Extra"].message == "not run: no result"


def test_a_runner_timeout_names_the_limit(env):
    results, note = run(env, ["PASS B.Shape", "HANG B.Values"],
                        dict(LIMITS, lab_seconds=1))
    assert note == "the lab's time limit (1 s) ran out"
    assert results["B.Shape"].passed
    assert results["B.Values"].message == "not run: the lab's time limit (1 s) ran out"


def test_a_test_process_that_stops_early_says_so_and_fails_the_rest(env):
    results, note = run(env, ["PASS B.Shape", "CRASH B.Values"])
    assert note.startswith("the test process stopped early (") and "Segmentation fault" in note
    assert results["B.Shape"].passed and not results["B.Edge"].passed


def test_the_public_kind_runs_the_public_binary_and_its_tests_only(env):
    results, _ = run(env, ["PASS B.Shape"], kind="public")
    assert list(results) == ["B.Shape"] and results["B.Shape"].passed
    assert env[2].trusted[0][0][0].endswith("labs/02_beta/beta_public_test_remote")


def test_the_trusted_binary_gets_the_seed_the_limits_and_the_learners_argv(env, monkeypatch):
    monkeypatch.delenv("MHA_TEST_SEED", raising=False)     # which would win over the seed
    run(env, ["PASS B.Shape"], seed=1234)
    argv, environ = env[2].trusted[0]
    assert environ["MHA_TEST_SEED"] == "1234"
    assert environ["MHA_REMOTE_CALL_TIMEOUT_S"] == "5" and environ["MHA_REMOTE_MEMORY_MB"] == "512"
    assert environ["MHA_REMOTE_ARGV"].endswith("jobs/slot3/run/jail/server")
    assert argv[-1] == "--gtest_brief=1"


def test_the_result_stream_lives_in_the_private_folder_and_is_removed_after(env):
    lab, ws = env[0], env[1]
    run(env, ["PASS B.Shape"])
    results_file = env[2].trusted[0][1]["MHA_RESULTS_FILE"]
    assert results_file.startswith(ws.private_dir + "/")
    assert not os.path.exists(ws.run_dir(3)) and not os.path.exists(ws.job_dir(3, "run"))

