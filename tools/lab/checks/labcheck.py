"""./lab check N: the course author's one check of one lab, building that lab only.

    ./lab check 14

  1. rewrites what is derived (tools/lab/checks/derived.py): the stub's hash
     in labs/labs.json, README.md's lab table, the lesson's "What you may
     call" line, and says which files it rewrote;
  2. the registry check of ./lab test (consistency), for this lab and the
     registry as a whole;
  3. the translations check of ./lab test (course/translation_check.py: the
     lab's lesson and hints are in po4a's configuration, its pages exist in
     every language, the templates are current) and the kit's checks for
     the lab's files (an exported kit holds no secret, and the lab's files
     name no path the kit does not have);
  4. grades, through the grader (isolated mode, this lab's grading code only):
     the reference solution passes every hidden and public test, the
     untouched stub fails every one saying it is not implemented, and every
     mutant of tests/NN_name/mutants/ is rejected by the hidden tests with
     its Expect words in the first failure (the public tests' verdicts are
     shown, as ./lab mutants does);
  5. grades the lab's degenerate catalogue (checks/degenerate.py): no
     do-nothing file earns a hidden point beyond a weight draw or passes a
     public test beyond an argument check.

Exit status 0 when all holds, 1 otherwise.
"""
import os
import shutil
import sys
import tempfile
import time

from checks import consistency, degenerate, derived, mutants
from course import kit, kit_references, translation_check
from grader import grade as grade_mod
from grader import instructor
from labs import find_lab, load_labs


def _line(ok, text):
    print("%s  %s" % ("PASS" if ok else "FAIL", text), flush=True)
    return ok


def _checked(lab, what, problems):
    """Prints a check's line and its problems (this lab's first); True when none."""
    mine = [p for p in problems if _names(p, lab)]
    _line(not problems, "%s (%d problem(s), %d of them this lab's)"
          % (what, len(problems), len(mine)))
    for p in (mine + [p for p in problems if p not in mine])[:20]:
        print("      " + p)
    return not problems


def _names(problem, lab):
    return lab.dir in problem or "lab %d:" % lab.number in problem


def kit_problems(lab, labs):
    """What the kit check would say of the lab: a leak anywhere in an
    exported kit (solutions, hidden tests, goldens), and a reference to a path
    the kit does not have in one of the lab's files."""
    tmp = tempfile.mkdtemp(prefix="mha-check-kit-")
    try:
        dest = os.path.join(tmp, "kit")
        files = kit.export(dest, labs)
        out = kit.leaks(dest)
        out += [p for p in kit_references.reference_problems(files) if _names(p, lab)]
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(args):
    labs = load_labs()
    lab = find_lab(labs, args.lab)
    if lab is None:
        print("lab: unknown lab %r; labs/labs.json has %d-%d" % (args.lab, labs[0].number,
                                                                labs[-1].number),
              file=sys.stderr)
        return 2
    t0 = time.time()
    ok = True
    changed = derived.rewrite(lab)
    print("derived: %s" % ("rewrote " + ", ".join(changed) if changed
                           else "the stub's hash, README.md's table and the lesson's "
                                "\"What you may call\" line are up to date"), flush=True)
    labs = load_labs()
    lab = find_lab(labs, args.lab)
    problems = consistency.problems(labs)
    mine = [p for p in problems if p.startswith("lab %d:" % lab.number) or "lab %d " % lab.number
            in p]
    ok &= _line(not problems, "registry check (%d problem(s), %d of them this lab's)"
                % (len(problems), len(mine)))
    for p in problems[:20]:
        print("      " + p)
    if problems:
        return 1      # nothing to build on: the registry is what grading reads
    ok &= _checked(lab, "translations check (run ./lab translate after an English edit)",
                   translation_check.problems())
    ok &= _checked(lab, "the learner kit: no secret in it, and no file of the lab names a "
                        "path the kit does not have", kit_problems(lab, labs))

    ctx = grade_mod.open_grading(labs, lambda m: print(m, file=sys.stderr), only=[lab.number])
    solution = instructor.solutions_submission(labs)
    stub = grade_mod.Submission("stub", {lab.number: ctx.stub(lab)})
    for kind in ("hidden", "public"):
        r = grade_mod.grade_all(ctx, [solution], kind=kind, labs=[lab])[0]["labs"][0]
        ok &= _line(r["total"] > 0 and r["passed"] == r["total"],
                    "the solution passes %d / %d %s tests%s" % (
                        r["passed"], r["total"], kind,
                        "" if r["passed"] == r["total"] else ": " + r["first_failure"]))
        r = grade_mod.grade_all(ctx, [stub], kind=kind, labs=[lab])[0]["labs"][0]
        passing = [t["name"] for t in r["tests"] if t["passed"]]
        says = "is not implemented yet" in r["first_failure"]
        ok &= _line(not passing and says, "the stub fails every %s test%s" % (
            kind, "" if not passing and says else
            (": %s pass(es)" % ", ".join(passing[:3]) if passing
             else "; first failure does not say it is not implemented: " + r["first_failure"])))

    found = mutants.load(labs, lab)
    for m in found:
        if m.source is None:
            ok &= _line(False, "mutant %s: %s" % (m.label, m.error))
    verdicts = mutants.grade(found, ctx)
    for m in found:
        if m.source is None:
            continue
        v = verdicts[m.label]
        h = v["hidden"]
        good = h.rejected and h.first_names_it
        ok &= _line(good, "mutant %s (%s) is rejected and named (%r)%s%s" % (
            m.label, m.kind, m.expect,
            "" if good else (": every hidden test passes" if not h.rejected
                             else "; first failure: " + h.first[:200]),
            "" if m.kind == "behavioural" else "; public tests: %s" % (
                "reject it" + (", naming it" if v["public"].some_names_it else "")
                if v["public"].rejected else "pass it")))
    if not found:
        print("note: tests/%s/mutants/ holds no mutant" % lab.dir)

    catalogue = degenerate.load(labs, lab)
    verdicts = degenerate.grade(catalogue, ctx)
    for v in catalogue:
        if v.source is None or v.label not in verdicts:
            ok &= _line(False, "degenerate %s: %s" % (v.label, v.error or "not graded"))
            continue
        h, p = verdicts[v.label]["hidden"], verdicts[v.label]["public"]
        ok &= _line(not h.unearned and not p.unearned,
                    "degenerate %s earns no point beyond weight draws%s%s" % (
                        v.label, "" if not h.unearned else "; it earns " + ", ".join(h.unearned),
                        "" if not p.unearned else "; it passes the public " +
                        ", ".join(p.unearned)))
    print("lab %d checked in %.0f s: %s" % (lab.number, time.time() - t0,
                                              "all holds" if ok else "FAILED (above)"))
    return 0 if ok else 1
