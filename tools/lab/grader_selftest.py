"""The grader's own checks, run by ./lab test (selftest.CHECKS):

  hostile       every submission in tests/hostile/ gains nothing in its lab
                and leaves every other lab's full marks intact (some also
                with the static checks off, to test the other defences)
  reports       a roster of mixed submissions gives a CSV gradebook and a
                Gradescope results.json per submission, of the right shape;
                ignored files are listed; grading the same submission twice
                (another in between) gives byte-identical JSON reports
  kit           the learner kit leaks nothing, builds on its own (its own
                output base) and its public tests fail only with "not
                implemented"

Also: python3 tools/lab/grader_selftest.py roster DIR N  writes a roster of N
mixed submissions (solutions, stubs, mutants) for timing.
"""
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grade  # noqa: E402
import kit  # noqa: E402
import report  # noqa: E402
import submission  # noqa: E402
import workspace  # noqa: E402
from labs import ROOT, load_labs  # noqa: E402

HOSTILE = os.path.join(ROOT, "tests", "hostile")
# Short limits for the hostile runs, so hangs cost seconds, not minutes.
HOSTILE_LIMITS = {"test_seconds": 3, "lab_seconds": 12, "memory_mb": 1024}
HOSTILE_TABLE = []   # (trick, lab, points gained, other labs intact, notes) for the closing note


from check import Check as _Check  # noqa: E402


def _solutions(labs):
    out = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
            out[lab.number] = f.read()
    return out


def _substitute(data):
    return data.replace(b"@ROOT@", ROOT.encode()).replace(b"@CACHE@", workspace.CACHE.encode())


def _hostile_cases(labs):
    by_file = {lab.target + ".cc": lab for lab in labs}
    cases = []
    for d in sorted(os.listdir(HOSTILE)) if os.path.isdir(HOSTILE) else []:
        full = os.path.join(HOSTILE, d)
        exp_path = os.path.join(full, "expect.json")
        if not os.path.isfile(exp_path):
            continue
        with open(exp_path) as f:
            expect = json.load(f)
        files = {}
        for fn in sorted(os.listdir(full)):
            if fn in by_file:
                with open(os.path.join(full, fn), "rb") as f:
                    files[by_file[fn].number] = _substitute(f.read())
        control = None
        if expect.get("control"):
            with open(os.path.join(full, expect["control"]), "rb") as f:
                control = _substitute(f.read())
        cases.append((d, expect, files, control))
    return cases


def _messages(lab_result):
    return [lab_result["first_failure"]] + [t["message"] for t in lab_result["tests"]] + \
        lab_result.get("notes", []) + lab_result.get("review", [])


def _judge_hostile(c, name, expect, rep, full, control_rep=None, golden_only=False, ctx=None):
    lab_n = expect["lab"]
    by = {r["lab"]: r for r in rep["labs"]}
    hostile = by[lab_n]
    gained = hostile["points"]
    intact = True
    for r in rep["labs"]:
        if r["lab"] == lab_n or r["status"] == "no_tests":
            continue
        if r["points"] != full.get(r["lab"], -1):
            intact = False
            c.fail("%s: lab %d lost points (%g of %g): %s" % (name, r["lab"], r["points"],
                                                             full.get(r["lab"], -1),
                                                             r["first_failure"][:200]))
    if golden_only:
        ref = ctx.reference["labs"][hostile["dir"]]
        for t in hostile["tests"]:
            if ref["comparisons"].get(t["name"]) and t["passed"]:
                c.fail("%s: %s compares with a golden yet passed" % (name, t["name"]))
        return gained, intact
    if control_rep is not None:
        ctl = {r["lab"]: r for r in control_rep["labs"]}[lab_n]
        ok_ctl = {t["name"] for t in ctl["tests"] if t["passed"]}
        extra = [t["name"] for t in hostile["tests"] if t["passed"] and t["name"] not in ok_ctl]
        if extra or gained > ctl["points"]:
            c.fail("%s: gained %g points over its control (%g): %s" % (
                name, gained, ctl["points"], ", ".join(extra[:5])))
        gained = gained - ctl["points"]
    elif gained > expect.get("max_points", 0):
        c.fail("%s: lab %d scored %g (at most %g allowed)" % (name, lab_n, gained,
                                                              expect.get("max_points", 0)))
    msgs = " | ".join(_messages(hostile))
    if expect.get("message") and expect["message"] not in msgs:
        c.fail("%s: no message mentions %r; first failure: %s" % (name, expect["message"],
                                                                  hostile["first_failure"][:300]))
    if expect.get("note") and expect["note"] not in msgs:
        c.fail("%s: no note mentions %r" % (name, expect["note"]))
    if expect.get("must_not_contain") and expect["must_not_contain"] in msgs:
        c.fail("%s: a message contains %r" % (name, expect["must_not_contain"]))
    return gained, intact


def check_grader_isolation(labs):
    """The test processes get the strongest isolation; the compiler a sandbox."""
    import sandbox
    grade.default_context(labs)   # the grading workspace exists
    c = _Check("test processes run isolated (%s)" % sandbox.describe_strategy())
    if sandbox.strategy() == "plain":
        c.fail("no namespaces and not root: a test process can read this machine's files "
               "(hidden goldens included); run the grader as root or where user namespaces "
               "are allowed")
    c2 = _Check("the compiler runs in Bazel's linux-sandbox with solutions and tests hidden")
    if not workspace.linux_sandbox_available():
        c2.fail("Bazel's linux-sandbox does not work here: nothing is hidden from the compiler")
    return [c, c2]


def check_grader_rubric(labs):
    """tests/rubric.json names only tests that exist, and every lab is gradable."""
    ctx = grade.default_context(labs)
    c = _Check("tests/rubric.json is valid for the hidden tests (points, limits)")
    for e in ctx.rubric.errors:
        c.fail(e)
    checks = [c]
    for lab in labs:
        ref = ctx.ref_lab(lab)
        c2 = _Check("the reference run of lab %d passes every hidden test" % lab.number)
        if ref.get("status") != "ok":
            c2.fail(ref.get("message", ref.get("status")))
        for t, msg in sorted(ref.get("reference_failures", {}).items()):
            c2.fail("%s: %s" % (t, msg[:200]))
        for t in ref.get("self_exposed", []):
            c2.fail("%s loads a golden it also compares against, so it cannot be hidden" % t)
        checks.append(c2)
    return checks


def check_grader_hostile(labs):
    """Every hostile submission gains nothing and leaves the other labs' scores intact."""
    ctx = grade.Context(labs, limits=HOSTILE_LIMITS)
    sols = _solutions(labs)
    base = grade.grade_submission(ctx, sols, name="solutions")
    full = {r["lab"]: r["max_points"] for r in base["labs"]}
    checks = []
    del HOSTILE_TABLE[:]
    cases = _hostile_cases(labs)
    if not cases:
        c = _Check("hostile submissions in tests/hostile/")
        c.fail("none found")
        return [c]
    for name, expect, files, control in cases:
        c = _Check("hostile %s (%s): gains nothing, other labs intact" % (name, expect["trick"]))
        sub = dict(sols)
        sub.update(files)
        ctl_rep = None
        if control is not None:
            ctl = dict(sols)
            ctl[expect["lab"]] = control
            ctl_rep = grade.grade_submission(ctx, ctl, name=name + "-control")
        t0 = time.time()
        rep = grade.grade_submission(ctx, sub, name=name)
        gained, intact = _judge_hostile(c, name, expect, rep, full, ctl_rep)
        row = [name, expect["trick"], expect["lab"], gained, intact,
               {r["lab"]: r for r in rep["labs"]}[expect["lab"]]["first_failure"][:160],
               round(time.time() - t0, 1)]
        if expect.get("also_without_static_checks") or expect.get("without_static_checks"):
            ctx.static_checks = False
            try:
                rep2 = grade.grade_submission(ctx, sub, name=name)
            finally:
                ctx.static_checks = True
            g2, i2 = _judge_hostile(c, name + " (static checks off)", expect, rep2, full,
                                    ctl_rep,
                                    golden_only=expect.get("without_static_checks") ==
                                    "golden_tests_fail", ctx=ctx)
            row.append({"static checks off": {"points": g2, "other labs intact": i2,
                                              "first failure": {r["lab"]: r for r in rep2["labs"]}[
                                                  expect["lab"]]["first_failure"][:160]}})
        HOSTILE_TABLE.append(row)
        checks.append(c)
    return checks


# ---------------------------------------------------------------------------
# Rosters, reports, determinism


def _mutants(labs):
    out = []
    for lab in labs:
        for p in sorted(glob.glob(os.path.join(ROOT, "tests", lab.dir, "mutants", "*.cc"))):
            out.append((lab, p))
    return out


def make_roster(dest, n, labs, seed=1, unique=""):
    """A roster of n mixed submissions: solutions, empty, partial, mutants, junk files.

    unique: a token for every file's last line, so that no two submissions
    (and no earlier run) share a compiled file, as with real learners."""
    rng = random.Random(seed)
    sols = _solutions(labs)
    muts = _mutants(labs)
    os.makedirs(dest, exist_ok=True)
    for i in range(n):
        d = os.path.join(dest, "learner%02d" % (i + 1))
        os.makedirs(d)
        kind = i % 4
        for lab in labs:
            if kind == 1:
                continue                          # an empty submission: all stubs
            if kind == 2 and lab.number > 3 + (i % 3):
                continue                          # a partial submission
            data = sols[lab.number]
            lab_muts = [p for l, p in muts if l.number == lab.number]
            if kind == 3 and lab_muts and rng.random() < 0.6:
                with open(rng.choice(lab_muts), "rb") as f:
                    data = f.read()
            layout = rng.choice(["flat", "lab", "repo"])
            rel = {"flat": lab.target + ".cc", "lab": "%s/%s.cc" % (lab.dir, lab.target),
                   "repo": lab.learner_file}[layout]
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if unique:
                data += b"\n// learner%02d %s\n" % (i + 1, unique.encode())
            with open(p, "wb") as f:
                f.write(data)
        if i % 5 == 0:  # things a submission may carry that must be ignored
            with open(os.path.join(d, "BUILD"), "w") as f:
                f.write('cc_test(name = "x", tags = ["local"])\n')
            with open(os.path.join(d, "notes.txt"), "w") as f:
                f.write("hello\n")
            os.symlink("/etc/passwd", os.path.join(d, "link.cc"))
    return dest


_GS_TOP = {"score", "execution_time", "output", "tests"}
_GS_TEST = {"name", "score", "max_score", "output", "visibility"}


def check_grader_reports(labs):
    """Roster: CSV + per-submission results.json of the right shape; determinism."""
    import instructor
    c1 = _Check("a roster of mixed submissions gives a CSV gradebook and a results.json each")
    c2 = _Check("grading the same submission twice gives the same JSON report")
    c3 = _Check("a submission's extra files, BUILD files and symlinks are ignored and listed")
    tmp = tempfile.mkdtemp(prefix="mha-roster-", dir=os.path.join(workspace.CACHE))
    try:
        roster = make_roster(os.path.join(tmp, "roster"), 4, labs)
        out = os.path.join(tmp, "out")

        class A:
            pass
        args = A()
        args.roster, args.out, args.csv, args.json, args.gradescope = roster, out, None, None, None
        rc = instructor._grade_roster(grade.default_context(labs), args, "isolated")
        if rc not in (0, 2):
            c1.fail("the roster command exited %d" % rc)
        import csv
        with open(os.path.join(out, "gradebook.csv")) as f:
            rows = list(csv.reader(f))
        want = ["submission"] + [lab.dir for lab in labs] + ["total", "max_total", "notes"]
        if rows[0] != want:
            c1.fail("CSV header %s" % rows[0])
        if [r[0] for r in rows[1:]] != ["learner%02d" % i for i in range(1, 5)]:
            c1.fail("CSV rows %s" % [r[0] for r in rows[1:]])
        reports = {}
        for name in ["learner%02d" % i for i in range(1, 5)]:
            p = os.path.join(out, name, "results.json")
            if not os.path.exists(p):
                c1.fail("no %s" % p)
                continue
            with open(p) as f:
                gs = json.load(f)
            if not _GS_TOP <= set(gs):
                c1.fail("%s lacks %s" % (p, _GS_TOP - set(gs)))
            for t in gs.get("tests", []):
                if not _GS_TEST <= set(t):
                    c1.fail("%s: a test lacks %s" % (p, _GS_TEST - set(t)))
                    break
            with open(os.path.join(out, name, "report.json")) as f:
                reports[name] = json.load(f)
            total = sum(t["score"] for t in gs.get("tests", []))
            if abs(total - gs["score"]) > 1e-9:
                c1.fail("%s: score %g is not the sum of its tests (%g)" % (p, gs["score"], total))
        if reports:
            full = reports["learner01"]
            if full["points"] != full["max_points"] or full["points"] == 0:
                c1.fail("the all-solutions submission scored %g/%g" % (full["points"],
                                                                       full["max_points"]))
            if reports["learner02"]["points"] != 0:
                c1.fail("the empty submission scored %g" % reports["learner02"]["points"])
            ign = reports["learner01"]["ignored_files"]
            for want_ign in ("BUILD", "notes.txt", "link.cc (symlink)"):
                if want_ign not in ign:
                    c3.fail("%r not listed as ignored (%s)" % (want_ign, ign))
        # Determinism: the partial submission, then another, then the same again.
        files, ign, notes = submission.collect(os.path.join(roster, "learner03"), labs)
        ctx = grade.default_context(labs)
        a = grade.grade_submission(ctx, files, name="learner03", ignored=ign, notes=notes)
        grade.grade_submission(ctx, _solutions(labs), name="other")
        b = grade.grade_submission(ctx, files, name="learner03", ignored=ign, notes=notes)
        ja = json.dumps(report.deterministic(a), sort_keys=True)
        jb = json.dumps(report.deterministic(b), sort_keys=True)
        if ja != jb:
            c2.fail("the two reports differ")
        stored = json.dumps(reports.get("learner03"), sort_keys=True)
        if reports.get("learner03") and json.loads(stored) != json.loads(ja):
            c2.fail("the roster's report of learner03 differs from a later grading")
        # A fault of the grader in one lab: that lab says so, the others are graded.
        c4 = _Check("a grader fault in one lab is reported for that lab only, and the run goes on")
        victim = labs[1].dir
        real = grade._verdict

        def faulty(ctx_, lab, name, end, limits):
            if lab.dir == victim:
                raise RuntimeError("injected fault")
            return real(ctx_, lab, name, end, limits)
        grade._verdict = faulty
        try:
            rep = grade.grade_submission(ctx, _solutions(labs), name="fault")
        finally:
            grade._verdict = real
        for r in rep["labs"]:
            if r["dir"] == victim:
                if r["status"] != "grader_error" or "grader error" not in r["first_failure"]:
                    c4.fail("lab %d: status %s, %s" % (r["lab"], r["status"], r["first_failure"]))
            elif r["status"] != "no_tests" and r["points"] != r["max_points"]:
                c4.fail("lab %d lost points: %s" % (r["lab"], r["first_failure"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [c1, c3, c2, c4]


# ---------------------------------------------------------------------------
# The learner kit


def check_kit(labs):
    c1 = _Check("export-kit leaks no solution, hidden test, golden or rubric")
    c2 = _Check("the kit builds on its own and its public tests fail only with 'not implemented'")
    tmp = tempfile.mkdtemp(prefix="mha-kit-", dir=workspace.CACHE)
    kit_dir = os.path.join(tmp, "kit")
    try:
        kit.export(kit_dir, labs)
        for problem in kit.leaks(kit_dir):
            c1.fail(problem)
        ob = os.path.join(tmp, "output_base")   # its own, fresh: nothing carried over
        p = subprocess.run(["bazel", "--output_base=" + ob, "--max_idle_secs=60", "test",
                            "--experimental_convenience_symlinks=ignore",
                            "--disk_cache=" + os.path.join(workspace.CACHE, "kit_disk"),
                            "--test_output=errors", "--keep_going", "--nocache_test_results",
                            "//common/...", "//labs/..."],
                           cwd=kit_dir, capture_output=True, text=True)
        logs = os.path.join(ob, "execroot", "mha_labs", "bazel-out", "k8-fastbuild", "testlogs")
        if "FAILED TO BUILD" in p.stdout + p.stderr or "ERROR: Analysis" in p.stderr:
            c2.fail("the kit does not build: " + " ".join(
                l for l in p.stderr.splitlines() if l.startswith("ERROR"))[:500])
        for lab in labs:
            xmls = glob.glob(os.path.join(logs, "labs", lab.dir, "*", "test.xml"))
            if not xmls:
                c2.fail("lab %d: no public test results (did it build?)" % lab.number)
                continue
            for x in xmls:
                failures = ET.parse(x).getroot().iter("failure")
                n = 0
                for f in failures:
                    n += 1
                    text = (f.get("message") or "") + (f.text or "")
                    if "not implemented" not in text:
                        c2.fail("lab %d: a public test fails with something else: %s" % (
                            lab.number, " ".join(text.split())[:200]))
                        break
                if n == 0:
                    c2.fail("lab %d: %s: no public test fails on the stub" % (
                        lab.number, os.path.relpath(x, logs)))
        for x in glob.glob(os.path.join(logs, "common", "*", "test.xml")):
            if list(ET.parse(x).getroot().iter("failure")):
                c2.fail("%s fails in the kit" % os.path.relpath(x, logs))
        subprocess.run(["bazel", "--output_base=" + ob, "shutdown"], cwd=kit_dir,
                       capture_output=True)
    finally:
        subprocess.run(["chmod", "-R", "u+w", tmp], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return [c1, c2]


def main(argv):
    if len(argv) in (3, 4) and argv[0] == "roster":
        labs = load_labs()
        make_roster(argv[1], int(argv[2]), labs,
                    unique=("%x" % random.getrandbits(48)) if argv[3:] == ["--unique"] else "")
        print("wrote %s submissions to %s" % (argv[2], argv[1]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
