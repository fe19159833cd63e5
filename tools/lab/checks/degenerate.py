"""The degenerate catalogue: answers that compute nothing, which no test may reward.

A mutant (mutants.py) is one classic mistake; a degenerate file is a
learner file in which every graded function of the lab does nothing useful,
yet knows everything a careful cheat could know: the right shapes, the
argument checks, the seeded weights. Each is written from the lab's own
files when it is graded, so a new lab has its catalogue with no work:

  * the solution (solutions/NN_name/<target>.cc): every function the lab's
    remote interface names (tests/NN_name/remote.cc) keeps its body, which
    gives the shapes and the errors, and then returns nothing computed
    (tools/lab/checks/degenerate_prelude.h.in says how);
  * the headers (labs/*/*.h) and the remote states (MHA_REMOTE_STATE in
    tests/*/remote.h): what a returned struct and an object hold.

The variants of a lab (names as `./lab degenerate N` prints them):

    zeros, ones, uniform   every number 0, 1, or 1/n along the last axis
                           (uniform attention weights; a constant elsewhere)
    -inf                   every number minus infinity (a mask that hides all)
    arg1, arg2, ...        the numbers of the call's k-th tensor argument,
                           repeated: the input passed through, a copy of q,
                           k or v, the upstream gradient as every gradient
    label:<word>           a function that returns a word returns this one,
                           every number 0 (each quoted word of the lab's
                           header: lab 7's head labels)
    inert                  where a class has methods that change it (a cache,
                           a decoder, an optimiser): they check their
                           arguments and then leave the object, and every
                           argument they may write, as it was; its other methods
                           tell the truth about that unchanged object (a
                           cache that ignores every append); every other
                           number 0

each with the weights drawn (the solution's constructor) and, where a class
of the lab has public weights, with zero weights too. Requirements (checked
by `./lab test`): no variant earns a hidden point, apart from the tests the
rubric names under "weight_draws" (drawing the seeded weights is real work);
argument checks earn nothing without a passing computation (the rubric's
"argument_checks", reports/rubric.py); and no public test passes, argument
checks and weight draws aside. Every variant must build and run: a file
that does not compile scores 0 and proves nothing.
"""
import os
import re
import sys

import surface
from checks import cxx_outline
from checks.degenerate_source import DegenerateError, TENSOR, element, write
from grader import grade as grade_mod
from labs import ROOT, labs_and_chosen, load_labs

_WORD = re.compile(r'"([a-z][a-z-]*)"')


class Variant:
    def __init__(self, lab, fill, argument=0, word="", zero_weights=False):
        self.lab = lab
        self.fill = fill                   # zeros, ones, uniform, -inf, argument, label, inert
        self.argument = argument           # 0-based, for fill == "argument"
        self.word = word                   # for fill == "label"
        self.zero_weights = zero_weights
        self.source = None                 # the learner file (bytes), once written
        self.error = ""

    @property
    def name(self):
        base = {"argument": "arg%d" % (self.argument + 1),
                "label": "label:" + self.word}.get(self.fill, self.fill)
        return base + (" (zero weights)" if self.zero_weights else "")

    @property
    def label(self):
        return "%s/%s" % (self.lab.nn, self.name)


def _read(rel, root=ROOT):
    with open(os.path.join(root, rel)) as f:
        return f.read()


class Outline:
    """What the catalogue needs of one lab: its solution's graded definitions,
    the fields of every class and struct, the remote states."""

    def __init__(self, lab, labs, root=ROOT):
        self.lab = lab
        self.solution = _read(lab.solution_file, root)
        units = set(surface.units(lab, root))
        self.graded = [d for d in cxx_outline.definitions(self.solution)
                       if d.qualified in units]
        missing = units - {d.qualified for d in self.graded}
        if missing:
            raise DegenerateError("%s: no definition of %s found to wrap" % (
                lab.solution_file, ", ".join(sorted(missing))))
        headers, states = [], []
        for other in labs:
            d = os.path.join(root, "labs", other.dir)
            for fn in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if fn.endswith(".h") and not fn.endswith("_test_util.h"):
                    headers.append(_read(os.path.join("labs", other.dir, fn), root))
            for fn in ("remote.h", "remote.cc"):
                p = os.path.join(root, "tests", other.dir, fn)
                if os.path.isfile(p):
                    states.append(_read(os.path.join("tests", other.dir, fn), root))
        self.headers = "\n".join(headers)
        self.header = _read(lab.header_file, root)
        self.states = cxx_outline.remote_states(states)
        self._fields = {}
        self.writing_in = None        # the class whose definition is being written
        self.private_fields = set()   # (class, type, name) reached from another class

    def fields(self, type_):
        """[Field] of a type that travels with a remote state, [] for any other."""
        if type_ not in self._fields:
            names = self.states.get(type_)
            found = cxx_outline.class_fields(self.headers, type_) if names else None
            by_name = {f.name: f for f in found or []}
            self._fields[type_] = [by_name[n] for n in names or [] if n in by_name]
        return self._fields[type_]

    def tensor_arguments(self, d):
        return [name for type_, name in d.params
                if name and re.search(r"\bTensor[123]\b", type_) and "vector" not in type_]

    def has_public_weights(self, type_, seen=()):
        """True when an object of type_ holds a public tensor, directly or inside."""
        for f in self.fields(type_):
            inner = element(f.type)
            if f.public and (TENSOR.match(inner) or
                             (inner not in seen and self.has_public_weights(inner, seen + (type_,)))):
                return True
        return False

    def mutable_classes(self):
        """The classes with a graded method that changes the object."""
        return {d.cls for d in self.graded if d.cls and not d.const and not d.is_constructor}

    def words(self):
        if not any(d.ret and "string" in d.ret for d in self.graded):
            return []
        return list(dict.fromkeys(_WORD.findall(self.header)))


def variants(lab, outline):
    """Every variant of `lab`'s catalogue (sources not yet written)."""
    fills = [("zeros", 0, ""), ("ones", 0, ""), ("uniform", 0, ""), ("-inf", 0, "")]
    n_args = max([len(outline.tensor_arguments(d)) for d in outline.graded] + [0])
    fills += [("argument", k, "") for k in range(n_args)]
    fills += [("label", 0, w) for w in outline.words()]
    if outline.mutable_classes():
        fills.append(("inert", 0, ""))
    weights = [False]
    if any(d.is_constructor and outline.has_public_weights(d.cls) for d in outline.graded):
        weights.append(True)
    return [Variant(lab, f, a, w, z) for z in weights for f, a, w in fills]


def load(labs=None, only=None, root=ROOT):
    """Every variant of every lab (or of `only`), with .source written (or .error)."""
    labs = labs or load_labs()
    out = []
    for lab in labs:
        if only and lab.number != only.number:
            continue
        try:
            outline = Outline(lab, labs, root)
        except (OSError, ValueError) as e:
            v = Variant(lab, "zeros")
            v.error = "the catalogue cannot be written: %s" % e
            out.append(v)
            continue
        for v in variants(lab, outline):
            try:
                v.source = write(outline, v).encode()
            except (OSError, ValueError) as e:
                v.error = str(e)
            out.append(v)
    return out


# ---------------------------------------------------------------------------
# Grading the catalogue


class Verdict:
    """How one kind of tests (hidden or public) treated one variant: what it
    earned and which tests passed that must not."""

    def __init__(self, lab_report, rubric, kind):
        lab_dir = lab_report["dir"]
        self.status = lab_report["status"]
        self.first = lab_report["first_failure"]
        self.passed = [t["name"] for t in lab_report["tests"] if t["passed"]]
        draws = [t for t in self.passed if rubric.is_weight_draw(lab_dir, t)]
        self.weight_draws = draws
        self.points = sum(t["points"] for t in lab_report["tests"])
        self.draw_points = sum(t["points"] for t in lab_report["tests"]
                               if t["name"] in draws)
        if kind == "hidden":
            # What it earned beyond the draws: every test the rubric scored.
            self.unearned = [t["name"] for t in lab_report["tests"]
                             if t["points"] > 0 and t["name"] not in draws]
        else:
            # Public tests have no points: any pass that is not an argument check or a draw.
            self.unearned = [t for t in self.passed if t not in draws and
                             not rubric.is_argument_check(lab_dir, t)]


def grade(variants_, ctx):
    """{variant label: {"hidden": Verdict, "public": Verdict}}."""
    ready = [v for v in variants_ if v.source is not None]
    by_label = {"degenerate " + v.label: v for v in ready}
    out = {}
    for kind in ("hidden", "public"):
        for lab in ctx.graded_labs:
            group = [grade_mod.Submission("degenerate " + v.label, {lab.number: v.source})
                     for v in ready if v.lab.number == lab.number]
            if not group:
                continue
            for rep in grade_mod.grade_all(ctx, group, kind=kind, labs=[lab]):
                v = by_label[rep["submission"]]
                out.setdefault(v.label, {})[kind] = Verdict(rep["labs"][0], ctx.rubric, kind)
    return out


def best_by_lab(variants_, verdicts, kind="hidden"):
    """{lab number: (best variant label, its points, of which weight draws)}."""
    best = {}
    for v in variants_:
        if v.label not in verdicts:
            continue
        h = verdicts[v.label][kind]
        if v.lab.number not in best or h.points > best[v.lab.number][1]:
            best[v.lab.number] = (v.name, h.points, h.draw_points)
    return best


def table(variants_, verdicts):
    rows = ["| variant | hidden points | of which weight draws | unearned hidden | public "
            "passes that must fail | first failure |", "| --- | --- | --- | --- | --- | --- |"]
    for v in variants_:
        if v.source is None or v.label not in verdicts:
            rows.append("| %s | - | - | - | - | %s |" % (v.label, v.error or "not graded"))
            continue
        h, p = verdicts[v.label]["hidden"], verdicts[v.label]["public"]
        rows.append("| %s | %g | %g | %s | %s | %s |" % (
            v.label, h.points, h.draw_points, ", ".join(h.unearned) or "none",
            ", ".join(p.unearned) or "none", h.first.replace("|", "\\|")[:160]))
    return "\n".join(rows)


def summary(variants_, verdicts, labs):
    """The lines ./lab test and ./lab degenerate end with, and whether all holds."""
    best = best_by_lab(variants_, verdicts)
    lines = []
    total = draws = 0.0
    for lab in labs:
        if lab.number in best:
            name, pts, d = best[lab.number]
            total += pts
            draws += d
            lines.append("lab %d: best do-nothing file %s earns %g hidden points (%g for "
                         "weight draws)" % (lab.number, name, pts, d))
    broken = [v for v in variants_ if v.source is None or v.label not in verdicts]
    # A file that does not build scores 0 and proves nothing: each must be
    # graded, its tests run, for its 0 to mean that no test rewards it.
    unbuilt = [v for v in variants_ if v.label in verdicts and
               any(verdicts[v.label][k].status != "graded" for k in verdicts[v.label])]
    for v in unbuilt:
        h = next(verdicts[v.label][k] for k in ("hidden", "public")
                 if verdicts[v.label][k].status != "graded")
        lines.append("%s was not graded (%s): %s" % (v.label, h.status.replace("_", " "),
                                                     h.first[:300]))
    unearned = [v for v in variants_ if v.label in verdicts and
                (verdicts[v.label]["hidden"].unearned or verdicts[v.label]["public"].unearned)]
    lines.append("degenerate files: %d; the best per lab earn %g hidden points in all, %g of "
                 "them for weight draws; %d earn a point they must not; %d not graded (a "
                 "compile or link error proves nothing)" % (
                     len(variants_), total, draws, len(unearned), len(unbuilt) + len(broken)))
    return lines, not broken and not unbuilt and not unearned


def main(args):
    labs, only = labs_and_chosen(args.lab)
    catalogue = load(labs, only)
    if args.variant:
        catalogue = [v for v in catalogue if args.variant in v.name]
    if args.write:
        # To read or compile them by hand; nothing is graded.
        os.makedirs(args.write, exist_ok=True)
        for v in catalogue:
            if v.source is None:
                print("%s: %s" % (v.label, v.error), file=sys.stderr)
                continue
            name = re.sub(r"[^\w.-]+", "_", v.label) + ".cc"
            with open(os.path.join(args.write, name), "wb") as f:
                f.write(v.source)
        print("wrote %d files to %s" % (len(catalogue), args.write))
        return 0
    ctx = grade_mod.open_grading(labs, lambda m: print(m, file=sys.stderr),
                                 only=None if only is None else [only.number])
    verdicts = grade(catalogue, ctx)
    print(table(catalogue, verdicts))
    print()
    lines, ok = summary(catalogue, verdicts, [l for l in labs if only is None or l is only])
    for line in lines:
        print(line)
    return 0 if ok else 1
