"""./lab mutants [N]: grade the mutant catalogue and print what a learner would read.

Each tests/NN_name/mutants/<name>.cc is a complete learner file with one
classic mistake; its first line is `// mutant: <the mistake>`. For every
mutant this grades the file as that lab's learner file, exactly as
`./lab grade` does in isolated mode (earlier labs built from the reference
solutions, same private workspace, same Bazel cache, same sandbox), and
requires at least one hidden test to fail. It records the first failure
message a learner would see and whether that message names the mistake:
it does when it starts with "looks like" (a KnownMistake golden matched,
see common/testing.h) or points to a "Classic mistakes" section in docs/.

The last lines of the report are

    mutants rejected: X / Y
    first failure names the mistake: A / Y (P%)

and `./lab mutants` prints the whole table as Markdown.
"""
import os
import re
import sys
import time

import grade
import workspace
from labs import ROOT, find_lab, load_labs

MIN_MUTANTS_PER_LAB = 4   # the floor; the lab brief asks for five
MIN_MUTANTS_TOTAL = 28


class Mutant:
    def __init__(self, lab, path):
        self.lab = lab
        self.path = path                      # relative to ROOT
        self.name = os.path.splitext(os.path.basename(path))[0]
        with open(os.path.join(ROOT, path), "rb") as f:
            self.content = f.read()
        first = self.content.decode("utf-8", "replace").splitlines()[:1]
        m = re.match(r"\s*//\s*mutant:\s*(.*)", first[0]) if first else None
        self.description = m.group(1).strip() if m else ""
        # Filled in by run().
        self.error = None        # the build error when it does not compile
        self.failed = []         # names of the hidden tests that fail
        self.total = 0
        self.first_test = ""
        self.first_message = ""
        self.seconds = 0.0

    @property
    def label(self):
        return "%s/%s" % (self.lab.nn, self.name)

    @property
    def compiles(self):
        return self.error is None

    @property
    def rejected(self):
        return self.compiles and bool(self.failed)

    @property
    def names_mistake(self):
        return self.rejected and names_mistake(self.first_message)


def discover(labs, only=None):
    """Every mutant file, in lab order then name order."""
    found = []
    for lab in labs:
        if only is not None and lab.number != only.number:
            continue
        d = os.path.join(ROOT, "tests", lab.dir, "mutants")
        if not os.path.isdir(d):
            continue
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".cc"):
                found.append(Mutant(lab, os.path.join("tests", lab.dir, "mutants", fn)))
    return found


def names_mistake(message):
    """True when a failure message names a known mistake or its doc section."""
    return bool(re.match(r"\s*looks like\b", message)) or "Classic mistakes" in message


def learner_line(text):
    """The one line of a gtest failure that a learner reads first.

    `text` is a gtest failure (raw, or as the grader summarised it). A
    KnownMistake match reads "looks like <mistake>; see docs/... (checked
    against <golden>: <numbers>)": that keeps the part before the
    parenthesis. An EXPECT_TRUE(pred) failure keeps the predicate's own
    message ("Actual: false (<message>)"), an uncaught exception its
    description; anything else is joined into one line, without the
    file:line prefix and the restated source expression, and cut at 300
    characters.
    """
    flat = " ".join(text.split())
    m = re.search(r"\blooks like\b.*", flat)
    if m:
        return _cut(re.split(r" \(checked against ", m.group(0))[0].rstrip(") "))
    m = re.search(r'C\+\+ exception with description "(.*)" thrown', flat)
    if m:
        return _cut("uncaught exception: " + m.group(1))
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    lines = [l for l in lines if not re.match(r"^(\S+:\d+)(: Failure)?$|^unknown file", l)]
    flat = " ".join(" ".join(lines).split()) or flat
    # EXPECT_TRUE(pred): "Value of: <expr> Actual: false (<message>) Expected: true <streamed>"
    m = re.search(r"^Value of: .*? Actual: false \((.*)\) Expected: true(.*)$", flat)
    if m:
        return _cut((m.group(1) + m.group(2)).strip())
    return _cut(flat)


def _cut(line, n=300):
    """At most n characters; a closing doc pointer ("see docs/...") is kept."""
    if len(line) <= n:
        return line
    m = re.search(r";? see docs/\S+\.md.*$", line)
    tail = m.group(0) if m and len(m.group(0)) < n // 2 else ""
    return line[:n - 3 - len(tail)].rstrip() + "..." + tail


class _RawFailures:
    """While active, grade.run_tests keeps gtest's whole failure text, so the
    table can show the line a learner reads first (see learner_line)."""

    def __enter__(self):
        self._orig = getattr(grade, "_summarise_failure", None)
        if self._orig is not None:
            grade._summarise_failure = lambda text: text
        return self

    def __exit__(self, *exc):
        if self._orig is not None:
            grade._summarise_failure = self._orig
        return False


def _rounds(mutants):
    """Groups mutants so that a round holds at most one mutant of each lab.

    Isolated grading builds lab N on the reference solutions of the labs
    before it, so mutants of different labs cannot disturb one another and a
    whole round builds in one go (the compiler runs them in parallel).
    """
    by_lab = {}
    for m in mutants:
        by_lab.setdefault(m.lab.number, []).append(m)
    depth = max(len(v) for v in by_lab.values())
    return [[v[i] for _, v in sorted(by_lab.items()) if i < len(v)] for i in range(depth)]


def _build_round(labs, batch):
    """Places the round's mutants and builds their hidden tests.
    Returns {lab number: (binary or None, build error or None)}."""
    for m in batch:
        workspace.place_learner_file(m.lab, m.content)
    if hasattr(grade, "build_submission") and hasattr(grade, "default_context"):
        built = grade.build_submission(grade.default_context(labs), [m.lab for m in batch],
                                       "isolated")
        out = {}
        for m in batch:
            b = built.get(m.lab.dir, {})
            out[m.lab.number] = ((b["binary"], None) if b.get("binary") else
                                 (None, b.get("message") or "does not build"))
        return out
    return {m.lab.number: grade.build(m.lab, labs, "isolated") for m in batch}


def _judge(mutant, binary, err, tests):
    """Runs the mutant's tests. Returns True when the verdict is worth a second look:
    every test failed with one and the same message (the process, not a test,
    failed), which a glitch of the machine can cause as well as the mutant."""
    mutant.total = len(tests)
    mutant.error, mutant.failed, mutant.first_test, mutant.first_message = None, [], "", ""
    if err:
        mutant.error = err
        return False
    with _RawFailures():
        results = grade.run_tests(mutant.lab, binary, tests)
    mutant.failed = [t for t in tests if not results[t][0]]
    if mutant.failed:
        mutant.first_test = mutant.failed[0]
        mutant.first_message = learner_line(results[mutant.first_test][1])
    return len(tests) > 1 and len(mutant.failed) == len(tests) and \
        len({results[t][1] for t in tests}) == 1


def run(labs, only=None, progress=None):
    """Grades every mutant (of lab `only`, or of all labs). Returns the Mutants."""
    mutants = discover(labs, only)
    if not mutants:
        return mutants
    touched = sorted({m.lab.number for m in mutants})
    tests = {n: grade.expected_tests(find_lab(labs, n), labs) for n in touched}
    try:
        batches = _rounds(mutants)
        retried = set()
        while batches:
            batch = batches.pop(0)
            t0 = time.time()
            built = _build_round(labs, batch)
            share = (time.time() - t0) / len(batch)
            for m in batch:
                t1 = time.time()
                binary, err = built[m.lab.number]
                doubt = _judge(m, binary, err, tests[m.lab.number])
                m.seconds = share + time.time() - t1
                if doubt and m.label not in retried:
                    retried.add(m.label)   # once more, on its own, before believing it
                    batches.append([m])
                elif progress:
                    progress(m)
    finally:
        # Leave the grading workspace as grade() expects to find it.
        for n in touched:
            lab = find_lab(labs, n)
            workspace.place_learner_file(lab, workspace.stub_text(lab))
    return mutants


def status_word(m):
    if not m.compiles:
        return "DOES NOT COMPILE"
    return "rejected" if m.rejected else "SURVIVES"


def progress_line(m):
    if not m.compiles:
        return "mutant %s: DOES NOT COMPILE: %s" % (m.label, m.error)
    if not m.rejected:
        return "mutant %s: SURVIVES (all %d hidden tests pass): %s" % (
            m.label, m.total, m.description)
    return "mutant %s: rejected (%d/%d hidden tests fail, %.0f s); first: %s: %s [%s]" % (
        m.label, len(m.failed), m.total, m.seconds, m.first_test, m.first_message,
        "names the mistake" if m.names_mistake else "does not name it")


def summary_lines(mutants):
    y = len(mutants)
    x = sum(m.rejected for m in mutants)
    named = sum(m.names_mistake for m in mutants)
    pct = (100.0 * named / y) if y else 0.0
    return ["mutants rejected: %d / %d" % (x, y),
            "first failure names the mistake: %d / %d (%.0f%%)" % (named, y, pct)]


def _md(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(mutants):
    rows = ["| lab | mutant | mistake | hidden tests failed | first failure a learner sees | names the mistake? |",
            "| --- | --- | --- | --- | --- | --- |"]
    for m in mutants:
        if not m.compiles:
            first, failed = "does not compile: " + m.error, "-"
        elif not m.rejected:
            first, failed = "(survives: every hidden test passes)", "0/%d" % m.total
        else:
            first, failed = "`%s`: %s" % (m.first_test, m.first_message), "%d/%d" % (
                len(m.failed), m.total)
        rows.append("| %d | %s | %s | %s | %s | %s |" % (
            m.lab.number, _md(m.name), _md(m.description or "(no `// mutant:` line)"), failed,
            _md(first), "yes" if m.names_mistake else "no"))
    return "\n".join(rows)


def coverage_problems(labs, mutants, only=None):
    """Labs with too few mutants, and mutants without a description line."""
    problems = []
    counts = {lab.number: 0 for lab in labs}
    for m in mutants:
        counts[m.lab.number] += 1
        if not m.description:
            problems.append("%s has no first line `// mutant: <description>`" % m.path)
    for lab in labs:
        if only is not None and lab.number != only.number:
            continue
        if counts[lab.number] < MIN_MUTANTS_PER_LAB:
            problems.append("lab %d has %d mutants (tests/%s/mutants/), at least %d needed"
                            % (lab.number, counts[lab.number], lab.dir, MIN_MUTANTS_PER_LAB))
    if only is None and len(mutants) < MIN_MUTANTS_TOTAL:
        problems.append("%d mutants in all, at least %d needed" % (len(mutants), MIN_MUTANTS_TOTAL))
    return problems


def main(args):
    labs = load_labs()
    only = None
    if getattr(args, "lab", None):
        only = find_lab(labs, args.lab)
        if only is None:
            print("lab: unknown lab %r (1-%d)" % (args.lab, len(labs)), file=sys.stderr)
            return 2

    def progress(m):
        print(progress_line(m), file=sys.stderr)
        sys.stderr.flush()

    t0 = time.time()
    mutants = run(labs, only, progress=progress)
    if not mutants:
        print("no mutants found under tests/*/mutants/")
        return 1
    print(markdown_table(mutants))
    print()
    for line in summary_lines(mutants):
        print(line)
    for p in coverage_problems(labs, mutants, only):
        print("problem: " + p)
    print("(%.0f s)" % (time.time() - t0))
    return 0 if all(m.rejected for m in mutants) else 1


def selftest_checks(labs, make_check):
    """The mutant check of ./lab test: one Check per lab, plus the catalogue's size.

    Prints one line per mutant while it runs (first failure, and whether it
    names the mistake), then "mutants rejected: X / Y" on its own line.
    """
    def progress(m):
        print("      " + progress_line(m))
        sys.stdout.flush()

    mutants = run(labs, progress=progress)
    for line in summary_lines(mutants):
        print(line)
    sys.stdout.flush()
    checks = []
    for lab in labs:
        mine = [m for m in mutants if m.lab.number == lab.number]
        if not mine:
            continue
        c = make_check("the hidden tests of lab %d reject all %d of its mutants"
                       % (lab.number, len(mine)))
        for m in mine:
            if not m.compiles:
                c.fail("%s does not compile: %s" % (m.path, m.error))
            elif not m.rejected:
                c.fail("%s survives: every hidden test passes (%s)" % (m.path, m.description))
        checks.append(c)
    c = make_check("the mutant catalogue has at least %d mutants per lab and %d in all (%d found)"
                   % (MIN_MUTANTS_PER_LAB, MIN_MUTANTS_TOTAL, len(mutants)))
    for p in coverage_problems(labs, mutants):
        c.fail(p)
    checks.append(c)
    return checks
