"""The grading workspace's BUILD files, generated from the suite's own.

Grading never uses the suite's lab/test BUILD files as they are: it reads
them (trusted: they are the suite's, never a submission's) and writes, in
the private grading workspace, one graph that holds every configuration at
once, so one Bazel configuration and two Bazel invocations grade a whole
submission:

  //labs/NN:grading_headers    the lab's header (the contract), no code
  //labs/NN:grading_learner    the learner's file, compiled against headers only
  //solutions/NN:grading_solution   the reference file, same headers
  //tests/NN:iso   hidden test: learner's lab NN + reference for the labs it builds on
  //tests/NN:cum   hidden test: the learner's code throughout (--cumulative)
  //tests/NN:ref   hidden test: reference code throughout (the trusted run)

Because a learner library depends on headers only, compiling the learner's
code needs no other lab's source, so the grader can compile it while every
solution and test file is hidden from the compiler (see workspace.py).
Every test links statically and uses //common:grading_main.
"""
import fnmatch
import os

_PASS_THROUGH = ("copts", "linkopts", "defines", "local_defines", "includes", "features",
                 "size", "timeout")
_MAIN_REPLACEMENTS = {"@system//:gtest_main": "//common:grading_main"}


class BuildFileError(Exception):
    pass


class _Recorder(dict):
    """Locals of an evaluated BUILD file: unknown names become rule recorders."""

    def __init__(self, calls, known):
        super().__init__()
        self.calls = calls
        self.known = known

    def __missing__(self, name):
        if name in self.known or name in self.known["__builtins__"]:
            raise KeyError(name)  # found in the globals instead
        def rule(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return rule


def evaluate(path):
    """Evaluates a (simple, trusted) BUILD file. Returns [(rule kind, args, kwargs)]."""
    pkg_dir = os.path.dirname(path)
    calls = []

    def glob(include, exclude=(), **_):
        out = []
        for dirpath, _, filenames in os.walk(pkg_dir):
            for fn in filenames:
                rel = os.path.relpath(os.path.join(dirpath, fn), pkg_dir)
                if any(fnmatch.fnmatch(rel, p) for p in include) and \
                        not any(fnmatch.fnmatch(rel, p) for p in exclude):
                    out.append(rel)
        return sorted(out)

    def select(d, **_):
        return d.get("//conditions:default", [])

    glb = {"__builtins__": {"True": True, "False": False, "None": None, "len": len,
                            "range": range, "sorted": sorted, "list": list, "dict": dict,
                            "str": str, "int": int, "enumerate": enumerate},
           "load": lambda *a, **k: None, "glob": glob, "select": select,
           "package": lambda **k: None, "exports_files": lambda *a, **k: None,
           "licenses": lambda *a, **k: None}
    loc = _Recorder(calls, glb)
    with open(path) as f:
        src = f.read()
    try:
        exec(compile(src, path, "exec"), glb, loc)  # noqa: S102 (suite file, trusted)
    except Exception as e:  # a BUILD file this evaluator cannot read
        raise BuildFileError("%s: %s: %s" % (path, type(e).__name__, e))
    return calls


def _label(dep, pkg):
    """Absolute form of a label written in package `pkg`."""
    if dep.startswith(":"):
        return "//%s%s" % (pkg, dep)
    if dep.startswith("//") or dep.startswith("@"):
        if dep.startswith("//") and ":" not in dep:
            return dep + ":" + dep.rsplit("/", 1)[-1]
        return dep
    return "//%s:%s" % (pkg, dep)


class LabGraph:
    """What the suite's BUILD files say about each lab and its hidden test."""

    def __init__(self, root, labs):
        self.labs = {lab.dir: lab for lab in labs}
        self.lib_deps = {}      # lab dir -> (lab deps [dirs], other deps [labels])
        self.tests = {}         # lab dir -> cc_test kwargs (absolute labels) or None
        self.test_errors = {}   # lab dir -> why the hidden test package is unusable
        by_label = {"//labs/%s:%s" % (lab.dir, lab.target): lab.dir for lab in labs}
        self.by_label = by_label
        for lab in labs:
            pkg = "labs/" + lab.dir
            calls = evaluate(os.path.join(root, pkg, "BUILD"))
            deps = None
            for kind, _, kw in calls:
                if kind == "lab_library" and kw.get("name") == lab.target:
                    deps = [_label(d, pkg) for d in kw.get("deps", [])]
            if deps is None:
                raise BuildFileError("%s/BUILD declares no lab_library(name = \"%s\")"
                                     % (pkg, lab.target))
            self.lib_deps[lab.dir] = ([by_label[d] for d in deps if d in by_label],
                                      [d for d in deps if d not in by_label])
        for lab in labs:
            pkg = "tests/" + lab.dir
            build = os.path.join(root, pkg, "BUILD")
            if not os.path.exists(build):
                self.tests[lab.dir] = None
                self.test_errors[lab.dir] = "the hidden tests of lab %d (%s) are not written yet" \
                    % (lab.number, build[len(root) + 1:])
                continue
            try:
                calls = evaluate(build)
            except BuildFileError as e:
                self.tests[lab.dir] = None
                self.test_errors[lab.dir] = str(e)
                continue
            want = lab.target + "_test"
            found = [kw for kind, _, kw in calls if kind == "cc_test" and kw.get("name") == want]
            if not found:
                self.tests[lab.dir] = None
                self.test_errors[lab.dir] = "%s/BUILD has no cc_test named %s" % (pkg, want)
                continue
            kw = dict(found[0])
            kw["deps"] = [_label(d, pkg) for d in kw.get("deps", [])]
            srcs = kw.get("srcs", [])
            if any(s.startswith(("//", ":", "@")) for s in srcs):
                self.tests[lab.dir] = None
                self.test_errors[lab.dir] = "%s/BUILD: hidden test srcs must be files of the " \
                    "package" % pkg
                continue
            kw["data_files"] = sorted("%s/%s" % (pkg, f) for f in kw.get("data", [])
                                      if not f.startswith(("//", ":", "@")))
            self.tests[lab.dir] = kw

    def closure(self, lab_dirs):
        """Every lab the given labs build on, themselves included."""
        out, todo = set(), list(lab_dirs)
        while todo:
            d = todo.pop()
            if d in out:
                continue
            out.add(d)
            todo.extend(self.lib_deps[d][0])
        return out

    def test_labs(self, lab_dir):
        """The labs whose code a lab's hidden test links (its own lab first)."""
        kw = self.tests[lab_dir]
        direct = [self.by_label[d] for d in kw["deps"] if d in self.by_label]
        return self.closure(direct + [lab_dir])


def _fmt(v):
    if isinstance(v, str):
        return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"')
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (_fmt(k), _fmt(x)) for k, x in v.items()) + "}"
    raise BuildFileError("cannot write %r in a generated BUILD file" % (v,))


def _rule(kind, **kw):
    lines = ["%s(" % kind]
    for k, v in kw.items():
        lines.append("    %s = %s," % (k, _fmt(v)))
    lines.append(")")
    return "\n".join(lines) + "\n"


_HEADER = ('# Generated by tools/lab/buildgen.py for the private grading workspace.\n'
           'load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")\n\n'
           'package(default_visibility = ["//visibility:public"])\n\n')


def generate(graph, labs):
    """{relative BUILD path: content} for the grading workspace."""
    out = {}
    for lab in labs:
        lab_deps, other = graph.lib_deps[lab.dir]
        hdr_deps = ["//labs/%s:grading_headers" % d for d in lab_deps] + other + ["//common:tensor"]
        out["labs/%s/BUILD" % lab.dir] = _HEADER + _rule(
            "cc_library", name="grading_headers", hdrs=[lab.target + ".h"],
            deps=sorted(set(hdr_deps))) + "\n" + _rule(
            "cc_library", name="grading_learner", srcs=[lab.target + ".cc"],
            deps=[":grading_headers"], linkstatic=True, alwayslink=True)
        out["solutions/%s/BUILD" % lab.dir] = _HEADER + _rule(
            "cc_library", name="grading_solution", srcs=[lab.target + ".cc"],
            deps=["//labs/%s:grading_headers" % lab.dir], linkstatic=True,
            alwayslink=True)
    for lab in labs:
        kw = graph.tests.get(lab.dir)
        if kw is None:
            continue
        base = []
        for d in kw["deps"]:
            if d in graph.by_label:
                base.append("//labs/%s:grading_headers" % graph.by_label[d])
            else:
                base.append(_MAIN_REPLACEMENTS.get(d, d))
        if "//common:grading_main" not in base:
            base.append("//common:grading_main")
        linked = sorted(graph.test_labs(lab.dir))
        extra = {k: kw[k] for k in _PASS_THROUGH if k in kw}
        text = _HEADER
        for name, impl in (("iso", lambda d: "learner" if d == lab.dir else "solution"),
                           ("cum", lambda d: "learner"),
                           ("ref", lambda d: "solution")):
            impls = []
            for d in linked:
                impls.append("//labs/%s:grading_learner" % d if impl(d) == "learner"
                             else "//solutions/%s:grading_solution" % d)
            text += _rule("cc_test", name=name, srcs=list(kw.get("srcs", [])),
                          deps=sorted(set(base + impls)), linkstatic=True, **extra) + "\n"
        out["tests/%s/BUILD" % lab.dir] = text
    return out
