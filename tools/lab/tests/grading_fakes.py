"""Fakes for the grading core's unit tests: no root, no Bazel, no real compiler.

  make_labs(root)        two made-up labs (Lab objects) with committed stubs under root
  FakeToolchain          the build steps: "compiles" a file by copying it, "links"
                         objects into a shell script that prints them
  FakeIsolation          runs the trusted binary directly as you and every build
                         step through the FakeToolchain; records each job it ends
  make_suite(...)        the real Suite with made-up artefacts: each lab's trusted
                         test binary is a Python script (trusted_binary) that
                         runs the learner's program and writes the result stream
  make_grading(...)      a grade.Grading from all of the above and a real rubric

A learner "source" here is a list of lines the trusted binary reads from the
learner's program: "PASS <test>" passes it; "HANG <test>" sleeps there (the
lab's time limit ends it); "CRASH <test>" exits there; a test with no line
fails with "<test>: wrong answer"; "SAY <test> <words>" fails it with the
learner's own words (any bytes, as an exception message carries them).
"#error" in a source fails its compile.
"""
import json
import os
import stat
import sys
import textwrap

from grader import grade
from grader import process
from grader.course_key import CourseKey
from grader.suite import LabArtefacts, Suite
from grader.workspace import Workspace
from labs import Lab, sha256
from reports import rubric as rubric_mod

TESTS = {1: ["A.Shape", "A.Values"], 2: ["B.Shape", "B.Values", "B.Edge"]}
PUBLIC = {1: ["A.Shape"], 2: ["B.Shape"]}


def stub_source(number):
    return ("// lab %d stub: not implemented\n" % number).encode()


def passing_source(number):
    return "".join("PASS %s\n" % t for t in TESTS[number]).encode()


def make_labs(root):
    """Two labs under root with their stubs committed; lab 2 may call nothing."""
    labs = []
    for number, d, target in ((1, "01_alpha", "alpha"), (2, "02_beta", "beta")):
        os.makedirs(os.path.join(root, "labs", d), exist_ok=True)
        with open(os.path.join(root, "labs", d, target + ".cc"), "wb") as f:
            f.write(stub_source(number))
        with open(os.path.join(root, "labs", d, target + ".h"), "w") as f:
            f.write("// lab %d's interface\n" % number)
        labs.append(Lab({"number": number, "dir": d, "target": target, "title": d,
                         "stub_sha256": sha256(stub_source(number)), "calls": []}, str(root)))
    return labs


class FakeToolchain:
    """Build steps by argv: g++ -c (copy the file), readelf, nm, g++ -o server (a
    script printing its objects). `compiles` counts compiles; `links` keeps
    each link's argv and the objects' contents at that moment."""

    def __init__(self):
        self.compiles = 0
        self.links = []
        self.canned = {}      # tool name: a Result to return instead

    def __call__(self, argv, cwd):
        tool = argv[0] if argv[0] != "g++" else ("g++ -c" if "-c" in argv else "g++ -o")
        if tool in self.canned:
            return self.canned[tool]
        if tool == "g++ -c":
            self.compiles += 1
            src = argv[argv.index("-c") + 1]
            with open(os.path.join(cwd, src), "rb") as f:
                data = f.read()
            if b"#error" in data:
                return process.Result(1, "%s/%s:1:2: error: #error not implemented\n" % (
                    cwd, src), False, 0.01)
            with open(os.path.join(cwd, argv[argv.index("-o") + 1]), "wb") as f:
                f.write(data)
            return process.Result(0, "", False, 0.01)
        if tool == "g++ -o":
            objects = [a for a in argv if a.endswith(".o")]
            contents = []
            for o in objects:
                with open(os.path.join(cwd, o), "rb") as f:
                    contents.append(f.read())
            self.links.append({"argv": list(argv), "objects": contents})
            exe = os.path.join(cwd, "server")
            with open(exe, "wb") as f:
                f.write(b"#!/bin/sh\ncat <<'EOF'\n" + b"".join(contents) + b"EOF\n")
            os.chmod(exe, 0o755)
            return process.Result(0, "", False, 0.01)
        if tool in ("readelf", "nm"):
            return process.Result(0, "", False, 0.0)
        raise AssertionError("the fake toolchain does not know %r" % (argv,))


class FakeJob:
    def __init__(self, slot):
        self.slot = slot


class FakeIsolation:
    """The sandbox's methods, applied to nothing: commands run as you."""
    setuid = False

    def __init__(self, toolchain):
        self.toolchain = toolchain
        self.jobs = []
        self.ended = []
        self.trusted = []     # (argv, env) of each trusted run

    wall = "fake"

    def describe(self):
        return {"summary": "fake isolation (unit tests)"}

    def build_wall(self):
        return self.wall

    def new_job(self, slot, mnt):
        job = FakeJob(slot)
        self.jobs.append(job)
        return job

    def end_job(self, job):
        self.ended.append(job)

    def give_to_job(self, path, job):
        os.makedirs(path, exist_ok=True)

    def run_build(self, job, argv, cwd, timeout, ro=()):
        return self.toolchain(argv, cwd)

    def run_trusted(self, job, argv, cwd, timeout, env, memory_mb):
        self.trusted.append((list(argv), dict(env)))
        return process.run(argv, cwd=cwd, timeout=timeout, env=env)

    def learner_argv(self, jail, job, memory_mb):
        return [os.path.join(jail, "server")]

    def check_private(self, paths):
        pass


TRUSTED = textwrap.dedent('''\
    #!%(python)s -IS
    # A made-up trusted test binary (tools/lab/tests/grading_fakes.py).
    import json, os, subprocess, sys, time
    TESTS = %(tests)r
    if "--gtest_list_tests" in sys.argv:
        suites = {}
        for t in TESTS:
            suites.setdefault(t.split(".")[0], []).append(t.split(".")[1])
        for s, names in suites.items():
            print(s + ".")
            for n in names:
                print("  " + n)
        sys.exit(0)
    learner = subprocess.run(os.environ["MHA_REMOTE_ARGV"].split("\\n"),
                             capture_output=True).stdout.decode(
                                 "utf-8", "surrogateescape").splitlines()
    said = {l.split(" ", 2)[1]: l.split(" ", 2)[2] for l in learner
            if l.startswith("SAY ") and l.count(" ") >= 2}
    failed = 0
    # Bytes, as common/grading/test_results.cc writes them: a message's bytes
    # above 0x7f go through as they are.
    with open(os.environ["MHA_RESULTS_FILE"], "a", encoding="utf-8",
              errors="surrogateescape") as f:
        for t in TESTS:
            if "HANG " + t in learner:
                time.sleep(60)
            if "CRASH " + t in learner:
                print("Segmentation fault in " + t)
                sys.exit(139)
            ok = "PASS " + t in learner
            failed += not ok
            message = "" if ok else said.get(t, t + ": wrong answer")
            f.write(json.dumps({"name": t, "passed": ok, "ms": 1, "message": "@MSG@"},
                               ensure_ascii=False).replace(
                                   "@MSG@", message.replace("\\\\", "").replace('"', "'"))
                    + "\\n")
            f.flush()
    sys.exit(1 if failed else 0)
    ''')


def write_trusted(path, tests):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(TRUSTED % {"python": sys.executable, "tests": list(tests)})
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    os.makedirs(path + ".runfiles/mha_labs", exist_ok=True)


def make_suite(labs, workspace, bin_dir, fingerprint="suite-v1"):
    """The real Suite holding made-up artefacts: trusted binaries written by
    write_trusted, runtimes of one made-up archive per lab and mode."""
    suite = Suite(labs, workspace.stage_dir, lambda m: None)
    for lab in labs:
        a = LabArtefacts(lab, bin_dir)
        write_trusted(a.hidden, TESTS[lab.number])
        write_trusted(a.public, PUBLIC[lab.number])
        a.hidden_test_names = list(TESTS[lab.number])
        a.public_test_names = list(PUBLIC[lab.number])
        a.runtime = {m: [("whole", "/stage/runtime/%s-%s.a" % (lab.dir, m)),
                         ("flag", "-lopenblas")] for m in ("isolated", "cumulative")}
        suite.artefacts[lab.number] = a
    suite.libroot = os.path.join(workspace.stage_dir, "libroot")
    os.makedirs(suite.libroot, exist_ok=True)
    suite.fingerprint = fingerprint
    return suite


def make_grading(root, rubric=None, mode="isolated", jobs=2):
    """A Grading of two made-up labs under root, every piece a fake but the rubric."""
    root = str(root)
    os.chmod(root, 0o711)       # the job users must reach the work folder (workspace.py)
    labs = make_labs(os.path.join(root, "checkout"))
    workspace = Workspace.create(os.path.join(root, "work"))
    toolchain = FakeToolchain()
    isolation = FakeIsolation(toolchain)
    suite = make_suite(labs, workspace, os.path.join(root, "bazel-bin"))
    path = os.path.join(root, "rubric.json")
    with open(path, "w") as f:
        json.dump(rubric or {"default_points": 2}, f)
    tests = {lab.dir: TESTS[lab.number] for lab in labs}
    logged = []
    g = grade.Grading(labs, workspace, isolation, suite, rubric_mod.load(labs, tests, path),
                      grade.Options(mode, jobs), logged.append,
                      course_key=CourseKey(b"\x07" * 32), suite_hash="fake-suite-1")
    g.logged = logged
    return g
