"""./lab test: the suite's own tests, exactly what CI runs (.ci/run).

Each check prints one line, PASS or FAIL with the reason (SKIP with the
reason where this machine cannot make the promise at all, e.g. grading as a
non-root user has no separate user to check); the last line is
"N passed, N failed" and the exit status is non-zero if anything failed.
"""
import json
import os
import subprocess
import sys
import time
import traceback

from checks import browser, consistency, degenerate, formulas, hostile, hostile_roster, \
    kit_check, mutants, newlab_check, quiz_numbers, slurm_check, tolerances
from course import i18n
from grader import grade, instructor
from labs import ROOT, load_labs
from learner import quiz
from progress import BAZEL_UI_FLAGS, run_bazel, ticking
from reports import report


class Check:
    """One line of the self-test: PASS unless fail() was called."""

    def __init__(self, name):
        self.name = name
        self.ok = True
        self.skipped = ""
        self.details = []

    def fail(self, detail):
        self.ok = False
        self.details.append(str(detail))

    def skip(self, why):
        self.skipped = why


def check_unit_tests(state):
    c = Check("the grader's Python unit tests pass (pytest tools/lab/tests)")
    t0 = time.time()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        os.path.join(ROOT, "tools", "lab", "tests")], cwd=ROOT,
                       capture_output=True, text=True)
    last = (p.stdout.strip().splitlines() or ["no output"])[-1]
    if p.returncode != 0:
        c.fail(last)
        c.details += [l for l in p.stdout.splitlines() if l.startswith(("FAILED", "ERROR"))][:10]
    c.name += " (%s in %.1f s)" % (last, time.time() - t0)
    return [c]


def check_consistency(state):
    c = Check("every registered lab has its mirrored files, and every lab folder is registered")
    for problem in consistency.problems(load_labs()):
        c.fail(problem)
    return [c]


def check_bazel(state):
    targets = ["//common/...", "//labs/...", "//tests/...", "//bench/..."]
    c = Check("bazel test -c opt --config=solutions " + " ".join(targets))
    # --test_tag_filters= : the lab programs' quick runs too (.bazelrc leaves them
    # out), and --nobuild_tests_only: every target builds (the benchmarks too).
    rc, out = run_bazel(["bazel", "test"] + BAZEL_UI_FLAGS +
                        ["-c", "opt", "--config=solutions", "--test_output=errors",
                         "--test_tag_filters=", "--nobuild_tests_only"] + targets,
                        "      bazel test (every public and hidden test)", ROOT, tests=True,
                        stream=sys.stdout)
    if rc != 0:
        tail = [l for l in out.splitlines() if "FAILED" in l or "ERROR" in l][:10]
        c.fail("; ".join(tail) or "bazel exited %d" % rc)
    return [c]


def check_fuzz(state):
    """The call-back surface under malformed arguments, with AddressSanitizer and
    UndefinedBehaviorSanitizer (tests/common/call_back_fuzz_test.cc): a report
    kills the reference process, which fails the call."""
    target = "//tests/common:call_back_fuzz_test"
    c = Check("bazel test --config=solutions --config=asan " + target)
    p = subprocess.run(["bazel", "test", "--config=solutions", "--config=asan",
                        "--test_output=errors", target], cwd=ROOT, capture_output=True,
                       text=True)
    if p.returncode != 0:
        tail = [l for l in (p.stdout + p.stderr).splitlines()
                if "FAILED" in l or "ERROR" in l or "Failure" in l or "broke" in l][:10]
        c.fail("; ".join(tail) or "bazel exited %d" % p.returncode)
    return [c]


def _context(state):
    if "ctx" not in state:
        state["ctx"] = grade.open_grading(state["labs"], lambda m: print("      " + m))
    return state["ctx"]


def check_solutions(state):
    ctx = _context(state)
    checks = []
    for kind in ("hidden", "public"):
        rep = grade.grade_all(ctx, [instructor.solutions_submission(ctx.labs)], kind=kind)[0]
        state["solutions_" + kind] = rep
        for r in rep["labs"]:
            c = Check("the solution of lab %d passes all %d %s tests through the grader"
                      % (r["lab"], r["total"], kind))
            if r["total"] == 0:
                c.fail("lab %d has no %s tests" % (r["lab"], kind))
            if r["passed"] != r["total"]:
                c.fail(r["first_failure"])
            checks.append(c)
    return checks


def check_stubs(state):
    ctx = _context(state)
    stubs = grade.Submission("stubs", {lab.number: ctx.stub(lab) for lab in ctx.labs})
    checks = []
    for kind in ("hidden", "public"):
        rep = grade.grade_all(ctx, [stubs], kind=kind)[0]
        for r in rep["labs"]:
            c = Check("every %s test of lab %d fails on the untouched stub, saying it is not "
                      "implemented" % (kind, r["lab"]))
            for t in r["tests"]:
                if t["passed"]:
                    c.fail("%s passes on the stub" % t["name"])
            if "is not implemented yet" not in r["first_failure"]:
                c.fail("first failure: " + r["first_failure"])
            checks.append(c)
    return checks


def check_cumulative(state):
    """Isolated mode answers a lab's calls to earlier labs with the references;
    cumulative mode links the learner's own earlier labs."""
    labs = state["labs"]
    lab2, lab3 = labs[1], labs[2]
    c = Check("cumulative grading links the learner's own earlier labs: a mistake in lab 2 costs "
              "lab 3 points there, and none in isolated mode; the solutions keep full marks")
    bad = next((m for m in mutants.load(labs, only=lab2) if m.kind == "numeric"), None)
    if bad is None or bad.source is None:
        c.fail("lab 2 has no numeric mutant to try")
        return [c]
    files = instructor.solutions_submission(labs).files
    files[lab2.number] = bad.source
    sub = grade.Submission("lab 2 wrong", files, labs={lab2.number, lab3.number})
    ctx = _context(state)      # one context graded both ways: link and run keys hold the mode
    isolated = grade.grade_all(ctx, [sub], mode="isolated")[0]
    cumulative = grade.grade_all(ctx, [sub], mode="cumulative")[0]
    solutions = grade.grade_all(ctx, [instructor.solutions_submission(labs)],
                                mode="cumulative")[0]
    by = lambda rep, lab: [r for r in rep["labs"] if r["lab"] == lab.number][0]
    if by(isolated, lab3)["points"] != by(isolated, lab3)["max_points"]:
        c.fail("isolated: lab 3 lost points to lab 2's mistake: " + by(isolated, lab3)["first_failure"])
    if by(cumulative, lab3)["points"] == by(cumulative, lab3)["max_points"]:
        c.fail("cumulative: lab 3 kept full marks on top of a wrong lab 2 (%s)" % bad.name)
    for r in solutions["labs"]:
        if r["points"] != r["max_points"]:
            c.fail("cumulative: the solution of lab %d lost points: %s" % (r["lab"], r["first_failure"]))
    return [c]


def check_mutants(state):
    ctx = _context(state)
    all_mutants = mutants.load(ctx.labs)
    checks = []
    c = Check("every mutant's edit applies to today's solution")
    for m in all_mutants:
        if m.source is None:
            c.fail(m.error)
    checks.append(c)
    verdicts = mutants.grade(all_mutants, ctx)
    for m in all_mutants:
        if m.source is None:
            continue
        v = verdicts[m.label]
        cm = Check("mutant %s (%s) is rejected, and the first failure names it (%r)"
                   % (m.label, m.kind, m.expect))
        if not v["hidden"].rejected:
            cm.fail("every hidden test passes")
        elif not v["hidden"].first_names_it:
            cm.fail("first failure: " + v["hidden"].first)
        if m.kind != "behavioural":
            cm.details.append("public tests: %s%s" % (
                "rejected" if v["public"].rejected else "PASS (left to grading)",
                ", naming it" if v["public"].some_names_it else ""))
        checks.append(cm)
    lines, ok = mutants.summary(all_mutants, verdicts)
    s = Check("; ".join(lines))
    if not ok:
        s.fail("the hidden tests must reject and name every mutant, and the public tests must "
               "reject at least %d%% of the numeric and validation ones"
               % int(100 * mutants.PUBLIC_TARGET))
    checks.append(s)
    for l in lines:
        print(l)
    return checks


def check_degenerate(state):
    """The degenerate catalogue (checks/degenerate.py): no do-nothing file
    earns a hidden point beyond a weight draw, or passes a public test beyond
    an argument check or a weight draw."""
    ctx = _context(state)
    catalogue = degenerate.load(ctx.labs)
    verdicts = degenerate.grade(catalogue, ctx)
    checks = []
    for lab in ctx.labs:
        mine = [v for v in catalogue if v.lab.number == lab.number]
        c = Check("the %d degenerate files of lab %d (zeros, ones, uniform, -inf, arguments "
                  "passed back, ...) earn no hidden point beyond weight draws and pass no public "
                  "test beyond argument checks" % (len(mine), lab.number))
        for v in mine:
            if v.source is None or v.label not in verdicts:
                c.fail("%s: %s" % (v.label, v.error or "not graded"))
                continue
            h, p = verdicts[v.label]["hidden"], verdicts[v.label]["public"]
            for kind, verdict in (("hidden", h), ("public", p)):
                if verdict.status != "graded":  # a 0 that proves nothing
                    c.fail("%s: the %s tests were not run (%s): %s" % (
                        v.label, kind, verdict.status.replace("_", " "), verdict.first[:300]))
            if h.unearned:
                c.fail("%s earns %s" % (v.label, ", ".join(h.unearned)))
            if p.unearned:
                c.fail("%s passes the public %s" % (v.label, ", ".join(p.unearned)))
        checks.append(c)
    lines, ok = degenerate.summary(catalogue, verdicts, ctx.labs)
    s = Check(lines[-1])
    if not ok:
        s.fail("a test that a do-nothing answer passes needs an anchor: a golden, or a fact no "
               "trivial answer has (docs/AUTHORING.md, \"Degenerate files\")")
    checks.append(s)
    return checks


def check_tolerances(state):
    return tolerances.selftest_checks(state["labs"], Check)


def check_hostile(state):
    ctx = _context(state)
    if not ctx.isolation.setuid:
        c = Check("hostile submissions gain nothing and leak nothing")
        c.skip("not root: without a separate user there is no wall to test "
               "(grading untrusted code needs root; see docs/INSTRUCTORS.md)")
        return [c]
    return (hostile.check(ctx, state["labs"], Check, second_layer=True) +
            hostile.check(ctx, state["labs"], Check, second_layer=False) +
            hostile_roster.roster_check(state["labs"], Check) +
            hostile_roster.identity_check(ctx, state["labs"], Check) +
            hostile_roster.drift_check(state["labs"], Check))


def check_reports(state):
    ctx = _context(state)
    c = Check("the same submission graded twice gives the same JSON report; the scoreboard, "
              "CSV and Gradescope results are well formed")
    sub = instructor.solutions_submission(ctx.labs)
    a = grade.grade_all(ctx, [sub])[0]
    ctx.forget_runs()
    b = grade.grade_all(ctx, [sub])[0]
    if json.dumps(report.deterministic(a), sort_keys=True) != \
            json.dumps(report.deterministic(b), sort_keys=True):
        c.fail("two gradings of the solutions differ")
    g = report.gradescope(a, ctx.rubric)
    if abs(g["score"] - a["points"]) > 1e-9 or not g["tests"]:
        c.fail("the Gradescope results do not carry the score and the tests")
    return [c]


def check_quizzes(state):
    c = Check("every lab has a quiz (labs/NN_name/quiz.json): 5 to 8 questions before, while "
              "and after, exactly one right answer each, an explanation for every option")
    for problem in quiz.problems(state["labs"]):
        c.fail(problem)
    n = Check("every number of a quiz's questions, right answers and explanations is in its "
              "lab's lesson, or marked as derived with arithmetic that gives it "
              "(checks/quiz_numbers.py)")
    for problem in quiz_numbers.problems(state["labs"]):
        n.fail(problem)
    return [c, n]


def check_reader_browser(state):
    """./lab read's site in headless Chromium (tools/lab/checks/browser.py)."""
    c = Check("the course reader in headless Chromium: the front door in the browser's "
              "language, then in the one chosen last; lab 2 in Spanish (every label) then "
              "Portuguese; searches that fold accents and Turkish dotless ı, put the page's "
              "language first and find Chinese; a quiz answered wrongly then rightly and kept "
              "over a reload; the head viewer; the Mini-GPT playground on a model the "
              "reference solutions trained (probabilities of a held-out prompt, a head switched "
              "off, in Spanish, a request without the session's token refused); no console "
              "error, no request beyond 127.0.0.1")
    t0 = time.time()
    try:
        browser.run(c)
    except browser.Unavailable as e:
        c.fail("%s (tools/setup.sh --test installs it)" % e)
    c.name += " (%.0f s)" % (time.time() - t0)
    return [c]


def check_slurm(state):
    return slurm_check.selftest_checks(state["labs"], Check)


def check_translations(state):
    c = Check("the translated pages are what their catalogues make, the catalogues are valid "
              "and keep every code span, formula, number, link and code block, every message of "
              "the code has its entry in each catalogue, and no page links to a missing file")
    for problem in i18n.problems():
        c.fail(problem)
    # How far the translators are: printed, never a failure.
    c.name += " (%s)" % "; ".join(i18n.share_lines())
    return [c]


def check_formulas(state):
    c = Check("every formula of every lesson, in every language, parses in KaTeX as the reader "
              "draws it")
    try:
        for problem in formulas.problems():
            c.fail(problem)
        c.name += " (%d formulas)" % formulas.count()
    except formulas.Unavailable as e:
        c.fail(str(e))
    return [c]


def check_kit(state):
    return kit_check.selftest_checks(state["labs"], Check)


def check_new_lab(state):
    return newlab_check.selftest_checks(state["labs"], Check)


CHECKS = [check_unit_tests, check_consistency, check_tolerances, check_translations,
          check_formulas, check_bazel, check_fuzz, check_solutions, check_stubs, check_cumulative,
          check_mutants, check_degenerate, check_hostile, check_reports, check_quizzes,
          check_reader_browser, check_slurm, check_kit, check_new_lab]


def main(args):
    state = {"labs": load_labs()}
    passed = failed = skipped = 0
    t0 = time.time()
    only = getattr(args, "only", None)
    for fn in CHECKS:
        if only and only not in fn.__name__:
            continue
        t = time.time()
        try:
            # A check runs for minutes (the kit's, 14 min): its time so far meanwhile.
            with ticking("./lab test: " + fn.__name__, stream=sys.stdout):
                results = fn(state)
        except Exception as e:  # a broken check is a failed check, not a crash
            c = Check(fn.__name__)
            c.fail("%s: %s" % (type(e).__name__, e))
            c.details += traceback.format_exc().splitlines()[-6:]
            results = [c]
        for c in results:
            if c.skipped:
                print("SKIP  %s\n      %s" % (c.name, c.skipped))
                skipped += 1
                continue
            print("%s  %s%s" % ("PASS" if c.ok else "FAIL", c.name,
                                "" if c.ok else "\n      " + "\n      ".join(c.details[:10])))
            passed += c.ok
            failed += not c.ok
        sys.stdout.flush()
        print("      (%s: %.0f s)" % (fn.__name__, time.time() - t))
    print("self-test took %.0f s" % (time.time() - t0))
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0
