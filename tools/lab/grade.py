"""Grading: build each lab's hidden tests against a submission, run them, score them.

    ./lab grade                 the learner files in this checkout
    ./lab grade DIR             one submission directory (any of the 7 learner files)

Isolated mode (the default) grades lab N with the reference solutions of the
labs it builds on, so one early bug does not cost every later lab;
--cumulative grades the learner's own code throughout.
"""
import json
import os
import re
import subprocess
import tempfile
import time

import sandbox
import workspace
from labs import ROOT, load_labs

_TEST_TIMEOUT_S = 60      # per test binary run
_MEMORY_LIMIT = 2 << 30   # bytes of address space per test process


def _defines(lab, labs, mode):
    """Bazel flags that select solutions for the labs `lab` builds on."""
    if mode == "solutions":
        return ["--config=solutions", "--platform_suffix=sol"]
    if mode == "cumulative":
        return ["--platform_suffix=cum"]
    flags = ["--define=mha_lab%s=solution" % other.nn for other in labs
             if other.number < lab.number]
    return flags + ["--platform_suffix=iso" + lab.nn]


def _binary_path(lab, flags):
    suffix = [f.split("=", 1)[1] for f in flags if f.startswith("--platform_suffix=")][0]
    return os.path.join(workspace.WS, "bazel-out", "k8-fastbuild-" + suffix, "bin",
                        "tests", lab.dir, lab.target + "_test")


def _first_compiler_error(stderr, lab):
    for line in stderr.splitlines():
        if re.search(r"\berror\b", line) and lab.learner_file in line:
            return line.strip()
    for line in stderr.splitlines():
        if re.search(r"error:", line) and not line.startswith("ERROR:"):
            return line.strip()
    for line in stderr.splitlines():
        if line.startswith("ERROR:"):
            return line.strip()
    return "build failed"


def build(lab, labs, mode):
    """Builds the lab's hidden test binary. Returns (binary path, error or None)."""
    flags = _defines(lab, labs, mode)
    proc = workspace.bazel(["build", "--keep_going"] + flags + [lab.hidden_test])
    if proc.returncode != 0:
        return None, "does not compile: " + _first_compiler_error(proc.stderr, lab)
    return _binary_path(lab, flags), None


def expected_tests(lab, labs):
    """The hidden test names, listed by the solution build (no learner code runs)."""
    binary, err = build(lab, labs, "solutions")
    if err:
        raise RuntimeError("the reference build of lab %d fails: %s" % (lab.number, err))
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True,
                         check=True).stdout
    tests, suite = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            tests.append(suite + line.split("#")[0].strip())
    return tests


def _summarise_failure(text):
    """The line of a gtest failure that a learner should read first."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("C++ exception with description"):
            m = re.match(r'C\+\+ exception with description "(.*)" thrown', l)
            return m.group(1) if m else l
    informative = [l for l in lines if not re.match(r"^(unknown file|\S+:\d+): Failure$", l)]
    return " ".join(informative[:3])[:300] if informative else (lines[0] if lines else "failed")


def run_tests(lab, binary, tests):
    """Runs the binary in the sandbox. Returns {test name: (passed, message)}."""
    results = {}
    os.makedirs(workspace.RUNS, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="run-", dir=workspace.RUNS) as tmp:
        report = os.path.join(tmp, "report.json")
        outcome = sandbox.run([binary, "--gtest_output=json:" + report],
                              cwd=binary + ".runfiles/mha_labs", timeout_s=_TEST_TIMEOUT_S,
                              memory_bytes=_MEMORY_LIMIT)
        try:
            with open(report) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {"testsuites": []}
        for suite in data.get("testsuites", []):
            for case in suite.get("testsuite", []):
                name = suite["name"] + "." + case["name"]
                failures = case.get("failures", [])
                if failures:
                    results[name] = (False, _summarise_failure(failures[0].get("failure", "")))
                elif case.get("result") == "COMPLETED" and case.get("status") == "RUN":
                    results[name] = (True, "")
    for name in tests:
        if name not in results:
            results[name] = (False, outcome.describe() if not outcome.ok else
                             "did not run (the test process ended early)")
    return {name: results[name] for name in tests}


def grade_lab(lab, labs, mode):
    t0 = time.time()
    tests = expected_tests(lab, labs)
    binary, err = build(lab, labs, mode)
    if err:
        results = {t: (False, err) for t in tests}
    else:
        results = run_tests(lab, binary, tests)
    passed = sum(1 for ok, _ in results.values() if ok)
    first = next((("%s: %s" % (t, msg)) for t, (ok, msg) in results.items() if not ok), "")
    return {
        "lab": lab.number, "dir": lab.dir, "title": lab.title,
        "passed": passed, "total": len(tests),
        "points": float(passed), "max_points": float(len(tests)),
        "first_failure": first,
        "tests": [{"name": t, "passed": ok, "message": msg} for t, (ok, msg) in results.items()],
        "seconds": round(time.time() - t0, 2),
    }


def print_scoreboard(results, out):
    out.write("%-4s %-46s %7s %11s  %s\n" % ("lab", "title", "tests", "points", "first failure"))
    for r in results:
        out.write("%-4d %-46s %7s %11s  %s\n" % (
            r["lab"], r["title"][:46], "%d/%d" % (r["passed"], r["total"]),
            "%g/%g" % (r["points"], r["max_points"]),
            (r["first_failure"][:110] if r["first_failure"] else "")))
    total = sum(r["points"] for r in results)
    max_total = sum(r["max_points"] for r in results)
    out.write("total: %g/%g points\n" % (total, max_total))


def grade(submission_files, mode="isolated", labs=None):
    """Grades `submission_files` ({lab number: bytes or None for the stub})."""
    labs = labs or load_labs()
    workspace.sync_suite()
    for lab in labs:
        content = submission_files.get(lab.number)
        workspace.place_learner_file(lab, content if content is not None
                                     else workspace.stub_text(lab))
    return [grade_lab(lab, labs, mode) for lab in labs]


def checkout_submission(labs):
    files = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
            files[lab.number] = f.read()
    return files
