"""./lab test: the suite's own tests, exactly what CI runs (.ci/run).

Each check prints one line, PASS or FAIL with the reason; the last line is
"N passed, N failed" and the exit status is non-zero if anything failed.

  1. bazel test, reference solutions: common/, every public and hidden test.
  2. The grader on the reference solutions: full marks in every lab.
  3. The grader on the untouched stubs: every hidden test of every lab fails
     (a hidden test that passes on a stub asserts nothing about the learner).
  Further checks (mutants, tolerances, the rubric, hostile submissions,
  roster reports and determinism, the learner kit) are listed in CHECKS below.
"""
import os
import subprocess
import sys
import time

import grade
from labs import ROOT, load_labs


from check import Check  # noqa: F401  (also used by the checks of other modules)


def check_bazel_solutions(labs):
    c = Check("bazel test --config=solutions //common/... //labs/... //tests/... //bench/...")
    # //bench/... has no tests; building it keeps the benchmarks compiling.
    p = subprocess.run(["bazel", "test", "--config=solutions", "--test_output=errors",
                        "//common/...", "//labs/...", "//tests/...", "//bench/..."], cwd=ROOT,
                       capture_output=True, text=True)
    if p.returncode != 0:
        tail = [l for l in (p.stdout + p.stderr).splitlines()
                if "FAILED" in l or "ERROR" in l][:10]
        c.fail("; ".join(tail) or "bazel exited %d" % p.returncode)
    return [c]


def check_grader_solutions(labs):
    files = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
            files[lab.number] = f.read()
    checks = []
    for r in grade.grade(files, labs=labs):
        c = Check("grader gives full marks to the solution of lab %d (%d tests)"
                  % (r["lab"], r["total"]))
        if r["total"] == 0:
            c.fail("lab %d has no hidden tests%s" % (r["lab"], (": " + r["first_failure"])
                                                      if r.get("first_failure") else ""))
        if r["passed"] != r["total"]:
            c.fail(r["first_failure"])
        checks.append(c)
    return checks


def check_grader_stubs(labs):
    checks = []
    for r in grade.grade({}, labs=labs):
        c = Check("every hidden test of lab %d fails on the untouched stub" % r["lab"])
        for t in r["tests"]:
            if t["passed"]:
                c.fail("%s passes on the stub" % t["name"])
        if r["points"] != 0:
            c.fail("the stub scores %g points" % r["points"])
        checks.append(c)
    return checks


def check_mutants(labs):
    """Every mutant in tests/*/mutants/ fails at least one hidden test of its lab."""
    import mutants
    return mutants.selftest_checks(labs, Check)


CHECKS = [check_bazel_solutions, check_grader_solutions, check_grader_stubs]
CHECKS.append(check_mutants)


def check_tolerances(labs):
    """Tests compare floats only through the named tolerances (docs/TOLERANCES.md)."""
    import tolerances
    return tolerances.selftest_checks(labs, Check)


CHECKS.append(check_tolerances)


def _grader_checks():
    """The instructor grader's own checks (tools/lab/grader_selftest.py)."""
    import grader_selftest
    return [grader_selftest.check_grader_isolation, grader_selftest.check_grader_rubric,
            grader_selftest.check_grader_hostile,
            grader_selftest.check_grader_reports, grader_selftest.check_kit]


CHECKS.extend(_grader_checks())


def main(args):
    labs = load_labs()
    passed = failed = 0
    t0 = time.time()
    for fn in CHECKS:
        t = time.time()
        try:
            results = fn(labs)
        except Exception as e:  # a broken check is a failed check, not a crash
            c = Check(fn.__name__)
            c.fail("%s: %s" % (type(e).__name__, e))
            results = [c]
        for c in results:
            print("%s  %s%s" % ("PASS" if c.ok else "FAIL", c.name,
                                "" if c.ok else "\n      " + "\n      ".join(c.details[:10])))
            passed += c.ok
            failed += not c.ok
        sys.stdout.flush()
        print("      (%s: %.0f s)" % (fn.__name__, time.time() - t))
    print("self-test took %.0f s" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
