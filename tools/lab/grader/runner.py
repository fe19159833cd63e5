"""Running one lab's tests: the trusted test binary, calling the learner's process.

The test binary (built by Bazel from our sources only) runs as the grader's
user and judges every test itself; the learner's process is started by it
through MHA_REMOTE_ARGV, as the job's one-off user, in its jail and its own
pid namespace, under limits; where cgroup v2 allows, the whole run (the test
binary and every learner process) sits in the job's cgroup. The
verdicts come from the test binary's result stream (common/grading/test_results.cc),
a file the learner's process cannot reach.
"""
import json
import os
import shutil

from reports import feedback
import limits
from reports import messages
from grader import learner_jail


class TestResult:
    def __init__(self, name, passed, message="", ms=0, mistake=None):
        self.name = name
        self.passed = passed
        self.message = message
        self.ms = ms
        self.mistake = mistake       # {"name", "words", "doc"}: see feedback.as_mistake


def parse_result_line(line):
    """A TestResult from one line of the result stream (common/grading/test_results.h),
    or None when the line is not a verdict."""
    try:
        r = json.loads(line)
    except ValueError:
        return None
    if not isinstance(r, dict) or not isinstance(r.get("name"), str):
        return None
    message = r.get("message", "")
    return TestResult(r["name"], r.get("passed") is True,
                      message if isinstance(message, str) else "", r.get("ms", 0),
                      None if r.get("passed") is True else feedback.as_mistake(r.get("mistake")))


def run_tests(lab, kind, server, job, workspace, isolation, suite, run_limits, seed=None,
              mode="isolated"):
    """({test name: TestResult}, note) for every test of `lab` (kind "hidden" or
    "public") against the learner's process `server`, run by `suite`'s trusted
    binary in `workspace` through `isolation`, under `run_limits` (the rubric's);
    the note says why the run was cut short ("" when it was not). In isolated
    `mode` the learner's calls back are answered by the job's reference
    process (suite's reference server, in a jail of its own, as the job's
    user); in cumulative mode by nothing (the learner's own labs are linked
    into its process)."""
    a = suite.artefacts[lab.number]
    expected = a.test_names(kind)
    work = workspace.job_dir(job.slot, "run")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, mode=0o755)
    os.chmod(work, 0o755)           # whatever the umask: the jail's path, read-only to the job
    jail = os.path.join(work, "jail")
    learner_jail.make_jail(suite.libroot, server, jail)
    private = workspace.run_dir(job.slot)
    shutil.rmtree(private, ignore_errors=True)
    os.makedirs(private, mode=0o700)
    results_file = os.path.join(private, "results.jsonl")
    argv = isolation.learner_argv(jail, job, run_limits["memory_mb"])
    reference_argv = []
    if mode == "isolated" and lab.calls:
        # The reference process: the reference solutions of the call surface
        # and nothing else (no golden, rubric or verdict channel), jailed and
        # limited like the learner's process. Its binary is execute-only
        # (0711): the job's user may run it, not read it, nor trace it.
        ref_jail = os.path.join(work, "reference")
        learner_jail.make_jail(suite.libroot, a.reference, ref_jail)
        os.chmod(os.path.join(ref_jail, "server"), 0o711)
        reference_argv = isolation.learner_argv(ref_jail, job, run_limits["memory_mb"])
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": private,
        "TMPDIR": private,
        "OPENBLAS_NUM_THREADS": "1",
        "MHA_REMOTE_ARGV": "\n".join(argv),
        "MHA_REMOTE_CALL_TIMEOUT_S": str(run_limits["test_seconds"]),
        "MHA_REMOTE_MAX_TIMEOUTS": str(limits.TIMEOUTS_PER_LAB),
        "MHA_REMOTE_MEMORY_MB": str(run_limits["memory_mb"]),
        "MHA_RESULTS_FILE": results_file,
    }
    if reference_argv:
        env["MHA_REFERENCE_ARGV"] = "\n".join(reference_argv)
    # The fresh random inputs of the hidden tests (testing::FreshSeed): from
    # the grader, never from anything the learner's process can see.
    if os.environ.get("MHA_TEST_SEED"):
        env["MHA_TEST_SEED"] = os.environ["MHA_TEST_SEED"]
    elif seed is not None:
        env["MHA_TEST_SEED"] = str(seed)
    # The trusted process relays the learner's calls to earlier labs (only
    # those of the lab's call surface, labs/labs.json) unread to the reference
    # process, and runs under the learner's memory limit plus a margin for the
    # test itself; the call backs of one call share that call's byte and time
    # budget (common/grading/remote.cc), so many small ones buy nothing a big one could not.
    res = isolation.run_trusted(job, [a.binary(kind), "--gtest_brief=1"], cwd=a.runfiles(kind),
                                timeout=run_limits["lab_seconds"], env=env,
                                memory_mb=run_limits["memory_mb"] + limits.TRUSTED_EXTRA_MEMORY_MB)
    shutil.rmtree(work, ignore_errors=True)

    got = {}
    try:
        # Binary, each line decoded on its own: a learner's exception message
        # may hold any byte (0xff), which costs that message a U+FFFD, never
        # the lab's verdicts.
        with open(results_file, "rb") as f:
            for line in f:
                r = parse_result_line(line.decode("utf-8", "replace"))
                if r is not None:
                    got[r.name] = r
    except OSError:
        pass
    shutil.rmtree(private, ignore_errors=True)

    note = ""
    if res.timed_out:
        note = "the lab's time limit (%d s) ran out" % run_limits["lab_seconds"]
    elif res.returncode not in (0, 1) and len(got) < len(expected):
        note = "the test process stopped early (%s)" % messages.printable(res.output[-300:], 300)
    out = {}
    for name in expected:
        out[name] = got.get(name) or TestResult(name, False, "not run: " + (note or "no result"))
    return out, note
