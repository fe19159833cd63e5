"""The mutant catalogue: one classic mistake each, as an edit of the solution.

    tests/NN_name/mutants/<name>.diff

    Mistake: scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)
    Expect: 1/sqrt(d_model)
    Kind: numeric

    --- a/solutions/02_batched_attention/attention.cc
    +++ b/solutions/02_batched_attention/attention.cc
    @@ ... @@

The header (ignored by `git apply`) names the mistake, the words (`Expect`)
that the failure message a learner reads must contain, and its kind:
numeric (wrong numbers), validation (wrong or missing errors), or
behavioural (numbers right, method wrong: only hidden tests that measure
memory or time can see it). The edit is applied to the current solution; a
mutant that no longer applies fails the self-test.

`./lab mutants [N]` grades every mutant as that lab's learner file, exactly
as `./lab grade` does (isolated mode), once with the hidden tests and once
with the public tests, and prints what a learner would read. Requirements
(checked by `./lab test`): the hidden tests reject every mutant and their
first failure contains Expect; the public tests reject at least
PUBLIC_TARGET of the numeric and validation mutants, naming them.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from grader import grade as grade_mod
from labs import ROOT, labs_and_chosen, load_labs

PUBLIC_TARGET = 0.90
KINDS = ("numeric", "validation", "behavioural")


class MutantError(ValueError):
    pass


class Mutant:
    def __init__(self, lab, path, text):
        self.lab = lab
        self.path = path                     # relative to the repository
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.text = text
        self.source = None                   # the mutated learner file (bytes)
        self.error = ""                      # why it could not be made
        try:
            self.mistake, self.expect, self.kind = parse_header(text, path)
        except MutantError as e:
            self.mistake, self.expect, self.kind = "", "", "numeric"
            self.error = str(e)

    @property
    def label(self):
        return "%s/%s" % (self.lab.nn, self.name)


def parse_header(text, path="mutant"):
    """(mistake, expect, kind) from the lines before the diff."""
    fields = {}
    for line in text.splitlines():
        if line.startswith(("--- ", "diff ")):
            break
        m = re.match(r"^(Mistake|Expect|Kind):\s*(.*?)\s*$", line)
        if m:
            fields[m.group(1).lower()] = m.group(2)
    for f in ("mistake", "expect"):
        if not fields.get(f):
            raise MutantError("%s: the header has no %s: line" % (path, f.capitalize()))
    kind = fields.get("kind", "numeric")
    if kind not in KINDS:
        raise MutantError("%s: Kind: %s is not one of %s" % (path, kind, ", ".join(KINDS)))
    return fields["mistake"], fields["expect"], kind


def apply(mutant, solution_bytes):
    """The solution with the mutant's edit applied (bytes); raises MutantError."""
    d = tempfile.mkdtemp(prefix="mha-mutant-")
    try:
        target = os.path.join(d, mutant.lab.solution_file)
        os.makedirs(os.path.dirname(target))
        with open(target, "wb") as f:
            f.write(solution_bytes)
        patch = os.path.join(d, "edit.diff")
        with open(patch, "w") as f:
            f.write(mutant.text)
        p = subprocess.run(["git", "apply", "--unidiff-zero", "--include=" +
                            mutant.lab.solution_file, patch], cwd=d, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise MutantError("%s no longer applies to %s: %s" % (
                mutant.path, mutant.lab.solution_file, p.stderr.strip().splitlines()[-1:]))
        with open(target, "rb") as f:
            out = f.read()
        if out == solution_bytes:
            raise MutantError("%s changes nothing in %s" % (mutant.path, mutant.lab.solution_file))
        return out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def load(labs=None, only=None):
    """Every mutant, with .source set (or .error when its edit does not apply)."""
    labs = labs or load_labs()
    out = []
    for lab in labs:
        if only and lab.number != only.number:
            continue
        d = os.path.join(ROOT, lab.mutants_dir)
        if not os.path.isdir(d):
            continue
        with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
            solution = f.read()
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".diff"):
                continue
            rel = os.path.relpath(os.path.join(d, fn), ROOT)
            with open(os.path.join(ROOT, rel)) as f:
                text = f.read()
            m = Mutant(lab, rel, text)
            if not m.error:
                try:
                    m.source = apply(m, solution)
                except MutantError as e:
                    m.error = str(e)
            out.append(m)
    return out


class Verdict:
    """How one kind of tests (hidden or public) treated one mutant."""

    def __init__(self, lab_report, expect):
        self.status = lab_report["status"]
        self.failed = [t["name"] for t in lab_report["tests"] if not t["passed"]]
        self.first = lab_report["first_failure"]
        messages = [t["message"] for t in lab_report["tests"] if not t["passed"]]
        self.rejected = bool(self.failed) or self.status != "graded"
        self.first_names_it = expect.lower() in self.first.lower()
        self.some_names_it = self.first_names_it or any(expect.lower() in m.lower()
                                                        for m in messages)


def grade(mutants, ctx):
    """{mutant label: {"hidden": Verdict, "public": Verdict}} for every mutant with a source."""
    ready = [m for m in mutants if m.source is not None]
    subs = {}
    for m in ready:
        subs.setdefault(m.lab.number, []).append(
            grade_mod.Submission("mutant " + m.label, {m.lab.number: m.source}))
    out = {}
    by_label = {"mutant " + m.label: m for m in ready}
    for kind in ("hidden", "public"):
        for number, group in sorted(subs.items()):
            lab = [l for l in ctx.labs if l.number == number]
            for rep in grade_mod.grade_all(ctx, group, kind=kind, labs=lab):
                m = by_label[rep["submission"]]
                out.setdefault(m.label, {})[kind] = Verdict(rep["labs"][0], m.expect)
    return out


def summary(mutants, verdicts):
    """The lines ./lab test and ./lab mutants end with, and whether all holds."""
    ready = [m for m in mutants if m.source is not None]
    hidden_rejects = sum(1 for m in ready if verdicts[m.label]["hidden"].rejected)
    names = sum(1 for m in ready if verdicts[m.label]["hidden"].first_names_it)
    visible = [m for m in ready if m.kind != "behavioural"]
    public_rejects = sum(1 for m in visible if verdicts[m.label]["public"].rejected)
    public_names = sum(1 for m in visible if verdicts[m.label]["public"].rejected and
                       verdicts[m.label]["public"].some_names_it)
    behavioural = [m for m in ready if m.kind == "behavioural"]
    n = len(mutants)
    lines = [
        "mutants rejected: %d / %d" % (hidden_rejects, n),
        "first failure names the mistake: %d / %d (%d%%)" % (names, n, 100 * names // max(1, n)),
        "public tests reject %d / %d mutants (%d%%; %d behavioural mutants, counted apart: "
        "public tests cannot see them)" % (public_rejects, len(visible),
                                           100 * public_rejects // max(1, len(visible)),
                                           len(behavioural)),
        "public failures name the mistake: %d / %d" % (public_names, len(visible)),
    ]
    ok = (hidden_rejects == n and names == n and
          public_rejects >= PUBLIC_TARGET * len(visible))
    return lines, ok


def table(mutants, verdicts):
    """Markdown: every mutant and the first failure a learner reads."""
    rows = ["| mutant | kind | hidden | public | first failure a learner sees |",
            "| --- | --- | --- | --- | --- |"]
    for m in mutants:
        if m.source is None:
            rows.append("| %s | %s | - | - | %s |" % (m.label, m.kind, m.error))
            continue
        v = verdicts[m.label]
        h, p = v["hidden"], v["public"]
        rows.append("| %s | %s | %s | %s | %s |" % (
            m.label, m.kind, "rejected" if h.rejected else "PASSES",
            ("rejected" if p.rejected else "passes"), h.first.replace("|", "\\|")[:200]))
    return "\n".join(rows)


def main(args):
    labs, only = labs_and_chosen(args.lab)
    mutants = load(labs, only)
    # Only the lab asked for: its grading code alone is built (all 13 labs' is minutes).
    ctx = grade_mod.open_grading(labs, lambda m: print(m, file=sys.stderr),
                                 only=None if only is None else [only.number])
    verdicts = grade(mutants, ctx)
    print(table(mutants, verdicts))
    print()
    lines, ok = summary(mutants, verdicts)
    for l in lines:
        print(l)
    return 0 if ok else 1
