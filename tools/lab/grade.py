"""Grading: build each lab's hidden tests against a submission, run them, score them.

    ./lab grade                 the learner files in this checkout
    ./lab grade DIR             one submission directory (any of the 7 learner files)
    ./lab grade --roster DIR    every submission directory in DIR

Isolated mode (the default) grades lab N with the reference solutions of the
labs it builds on, so one early bug does not cost every later lab;
--cumulative grades the learner's own code throughout. docs/INSTRUCTORS.md
explains what is isolated and what is trusted.

Where points come from: a hidden test earns its points only if (1) the
test harness in the test process reported it passed on the authenticated
channel (common/grading.h), and (2) every golden comparison the reference
run made in that test was made again and matches the golden, judged here,
outside the test process, against goldens the test process never saw.
Nothing else the process does (exit status, output, files) counts.
"""
import glob
import os
import re
import time

import judge
import objcheck
import protocol
import reference
import rubric as rubric_mod
import sandbox
import workspace
from labs import ROOT, load_labs

COMPILE_TIMEOUT_S = 1800   # one Bazel invocation (all labs of a submission)


class Context:
    """What a grading session computes once: workspace, reference, rubric."""

    def __init__(self, labs=None, log=None, rubric_path=None, limits=None):
        workspace.lock(log)
        self.labs = labs or load_labs()
        self.static_checks = True   # the selftest turns them off to test the other defences
        self.limits_override = dict(limits or {})
        self.log = log or (lambda msg: None)
        self.graph = workspace.sync_suite(self.labs)
        self.reference = reference.load_or_build(self.labs, self.graph, self.log)
        self.rubric = rubric_mod.load(self.labs, self.reference,
                                      rubric_path or rubric_mod.PATH)
        self.goldens = judge.Goldens(ROOT)
        self.isolation = sandbox.strategy()
        self.compile_isolation = workspace.linux_sandbox_available()
        self._libs = None

    def system_libraries(self):
        if self._libs is None:
            libs = sandbox._ldconfig_map()
            names = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
                     "libopenblas.so.0", "libgfortran.so.5", "libpthread.so.0", "libdl.so.2"]
            self._libs = [libs[n] for n in names if n in libs]
        return self._libs

    def ref_lab(self, lab):
        return self.reference["labs"].get(lab.dir, {"status": "no_tests",
                                                    "message": "no reference data"})


# ---------------------------------------------------------------------------
# Messages a learner reads


def _clean(text):
    """Removes machine-specific paths, so reports do not depend on where grading ran."""
    for p in sorted({workspace.WS, workspace.EXECROOT, workspace.CACHE, ROOT}, key=len,
                    reverse=True):
        text = text.replace(p + "/", "").replace(p, "")
    text = re.sub(r"bazel-out/[^/\s]+/bin/", "", text)
    return text


_MEMORY_MB = None   # the memory limit of the lab being judged, for messages


def summarise_failure(text, memory_mb=None):
    """The line of a gtest failure that a learner should read first."""
    memory_mb = memory_mb or _MEMORY_MB
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("C++ exception with description"):
            m = re.match(r'C\+\+ exception with description "(.*)" thrown', l)
            what = m.group(1) if m else l
            if "bad_alloc" in what:
                return "killed: memory limit (the test tried to use more than %s MiB; %s)" % (
                    memory_mb or "the allowed", what)
            return what
    informative = [l for l in lines if not re.match(r"^(unknown file|\S+:\d+): Failure$", l)]
    if informative and informative[0].startswith("Value of:") and len(informative) > 1:
        m = re.match(r"Actual: false \((.*)\)$", informative[1], re.S)
        if m:
            return m.group(1)[:400]
    return " ".join(informative[:3])[:400] if informative else (lines[0] if lines else "failed")


def _summarise_failure(text):
    """Hook: mutants.py replaces it to see gtest's whole failure text."""
    return summarise_failure(text)


_ERROR_LINE = re.compile(r"^(\S+?):(\d+:)?(\d+:)? (fatal error|error|Error): ")


def _compile_error(stderr, lab):
    """The compiler's first error about the learner's file, in one line.

    Errors located in a file other than the learner's, a lab header,
    common/ or a system header are not quoted: they would show the learner
    the text of a file they had no business including.
    """
    stderr = _clean(stderr)
    lines = stderr.splitlines()
    if any("Killed signal terminated program" in l or "CPU time limit" in l or
           "out of memory allocating" in l or "virtual memory exhausted" in l for l in lines):
        return ("does not compile: the compiler was stopped (limit of %d s CPU time, %d MiB "
                "memory)" % (workspace.COMPILE_CPU_S, workspace.COMPILE_MEMORY_MB))
    if any("Assembler messages" in l for l in lines):
        return "does not compile: the assembler failed (inline assembly is not allowed)"
    errors = [l for l in lines if _ERROR_LINE.match(l) and not l.startswith(("ERROR:", "INFO:"))]
    mine = [l for l in errors if l.startswith(lab.learner_file + ":")]
    for l in mine or errors:
        where = _ERROR_LINE.match(l).group(1)
        if where.startswith(("labs/", "common/", "/usr/include/", "/usr/lib/gcc")):
            return "does not compile: " + l.strip()[:400]
        return ("does not compile: an error in a file outside labs/, common/ and the system "
                "headers (only those may be included)")
    for l in lines:
        if re.search(r"\b(fatal )?error: ", l) and not l.startswith(("ERROR:", "INFO:")):
            return "does not compile: " + l.strip()[:400]
    if "the build ran longer than" in stderr:
        return "does not compile: the build ran longer than %d s" % COMPILE_TIMEOUT_S
    for l in lines:
        if l.startswith("ERROR:") and ("labs/%s" % lab.dir) in l:
            return "does not compile: " + re.sub(r"\s*\(Exit \d+\).*", "", l[7:].strip())[:400]
    return "does not compile (the build failed without a compiler message)"


def _link_error(stderr, lab):
    stderr = _clean(stderr)
    lines = stderr.splitlines()
    for key in ("undefined reference", "multiple definition"):
        for l in lines:
            if key in l:
                m = re.search(r"((undefined reference|multiple definition) .*)$", l)
                return "does not link: " + (m.group(1) if m else l.strip())[:400]
    for l in lines:
        if re.search(r"(fatal )?error: ", l) and not l.startswith(("ERROR:", "INFO:")):
            return "does not build: " + l.strip()[:400]
    if "the build ran longer than" in stderr:
        return "does not build: the build ran longer than %d s" % COMPILE_TIMEOUT_S
    return "the hidden tests of lab %d do not build with this submission" % lab.number


def _outcome(res, limits):
    """Why a test process stopped, in a learner's words."""
    if res.timed_out:
        if res.timeout_s == limits["test_seconds"]:
            return "timed out after %g s" % res.timeout_s
        return "the lab's time limit (%g s) ran out" % res.timeout_s
    if res.overflow:
        return "killed: the test process wrote too much"
    sig = res.signal_name()
    if sig == "SIGKILL":
        return "killed: memory limit (%d MiB) or CPU time limit" % limits["memory_mb"]
    if sig == "SIGXCPU":
        return "timed out: CPU time limit"
    if sig == "SIGXFSZ":
        return "killed: wrote more than %d MiB to a file" % (sandbox.FILE_LIMIT >> 20)
    if sig:
        detail = ""
        m = re.search(r"what\(\):\s*(.*)", res.output)
        if sig == "SIGABRT" and m:
            detail = " (uncaught exception: %s)" % m.group(1).strip()[:200]
        return "crashed: %s%s" % (sig, detail)
    return "exited with status %s" % res.returncode


# ---------------------------------------------------------------------------
# Running one lab's tests


def _run_lab_tests(ctx, lab, binary, limits, visible):
    """{test: (passed, message)} for every expected test, and notes.

    Tests run in as few processes as possible: one, unless some test must
    see a golden that others compare against (then it runs in its own
    group). After a crash, a hang or an early exit, the remaining tests of
    the group run in a fresh process, within the lab's time limit.
    """
    global _MEMORY_MB
    _MEMORY_MB = limits["memory_mb"]
    ref = ctx.ref_lab(lab)
    expected = list(ref["tests"])
    exposes = ref.get("exposes", {})
    groups = []
    for name in expected:
        key = tuple(exposes.get(name, []))
        for k, members in groups:
            if k == key:
                members.append(name)
                break
        else:
            groups.append((key, [name]))
    results, notes = {}, []
    budget = [float(limits["lab_seconds"])]
    counts = [0, 0]
    for key, members in groups:
        files = dict(visible)
        for rel in key:
            files[rel] = os.path.join(ROOT, rel)
        results.update(_run_group(ctx, lab, binary, limits, files, members,
                                  whole=len(groups) == 1, budget=budget, counts=counts))
    rejected, lost = counts
    if rejected:
        notes.append("%d line(s) on the grader's result channel failed authentication: "
                     "something in the test process wrote there (evidence of tampering)"
                     % rejected)
    if lost:
        notes.append("%d authentic result line(s) were destroyed in the test process" % lost)
    return {name: results[name] for name in expected}, notes


def _run_group(ctx, lab, binary, limits, files, members, whole, budget, counts):
    results = {}
    remaining = list(members)
    attempt = 0
    while remaining and budget[0] > 0.5:
        flt = "*" if (attempt == 0 and whole) else ":".join(remaining)
        attempt += 1
        res = sandbox.run(binary, files, ["--gtest_filter=" + flt], limits["test_seconds"],
                          budget[0], limits["memory_mb"], protocol.new_secret())
        budget[0] -= res.seconds
        counts[0] += res.rejected
        counts[1] += res.lost
        started, ended = _collect(res.events)
        progress = False
        for name in started:
            if name not in remaining:
                continue
            progress = True
            remaining.remove(name)
            if name in ended and ended[name]["count"] > 1:
                results[name] = (False, "the test reported more than one result")
            elif name in ended:
                results[name] = _verdict(ctx, lab, name, ended[name], limits)
            else:
                where = _outcome(res, limits)
                if res.signal_name() and not res.timed_out and where.startswith("crashed"):
                    where = where.replace("crashed: %s" % res.signal_name(),
                                          "crashed: %s in %s" % (res.signal_name(), name), 1)
                if not (res.timed_out or res.signal_name()):
                    where = ("the test process %s in the middle of this test (did the code call "
                             "exit()?)" % where)
                results[name] = (False, where)
        if not progress:
            why = _outcome(res, limits)
            if not any(e.kind == "H" for e in res.events):
                why = ("the test process %s before the tests started (in a static initializer of "
                       "the code?)" % why) if not res.timed_out else why + " before the tests started"
            else:
                why = "did not run (the test process %s)" % why
            for name in remaining:
                results[name] = (False, why)
            remaining = []
    for name in remaining:
        results[name] = (False, "did not run: the lab's time limit (%g s) ran out"
                         % limits["lab_seconds"])
    return results


def _collect(events):
    """Per test: its events between S and E (ordered), and its E."""
    started, ended, current = {}, {}, None
    for ev in events:
        f = ev.fields
        if ev.kind == "S" and f:
            current = f[0]
            started.setdefault(current, [])
        elif ev.kind in ("G", "F") and current is not None and f and f[0] == current:
            started[current].append(ev)
        elif ev.kind == "E" and len(f) >= 2:
            e = ended.setdefault(f[0], {"count": 0})
            e["count"] += 1
            e["verdict"] = f[1]
            e["message"] = f[2] if len(f) > 2 else ""
            e["events"] = list(started.get(f[0], []))
            current = None
    return started, ended


def _verdict(ctx, lab, name, end, limits):
    refs = ctx.ref_lab(lab)["comparisons"].get(name, [])
    k = 0
    for ev in end["events"]:
        if ev.kind == "F":
            return False, _summarise_failure(ev.fields[1] if len(ev.fields) > 1 else "")
        if k >= len(refs):
            return False, "the test compared more values than the reference run did"
        ref = refs[k]
        k += 1
        try:
            c = reference._comparison(ev.fields)
            values = judge.decode_values(c["data"])
        except (ValueError, IndexError):
            return False, "unreadable comparison record"
        if c["golden"] != ref["golden"]:
            return False, "compared with %s where the reference run compared with %s" % (
                c["golden"], ref["golden"])
        if len(values) != _prod(c["shape"]):
            return False, "unreadable comparison record"
        ok, msg = judge.matches_golden(c["shape"], values, ref, ctx.goldens)
        if not ok:
            return False, msg
    if end["verdict"] != "P":
        return False, _summarise_failure(end["message"]) or "failed"
    if k < len(refs):
        return False, "the test stopped before comparing with %s" % refs[k]["golden"]
    return True, ""


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------
# Building


def _learner_objects(lab):
    return sorted(glob.glob(os.path.join(workspace.BIN, "labs", lab.dir, "_objs",
                                         "grading_learner", "*.o")))


def _learner_archive(lab):
    for ext in (".lo", ".a", ".pic.lo", ".pic.a"):
        p = os.path.join(workspace.BIN, "labs", lab.dir, "libgrading_learner" + ext)
        if os.path.exists(p):
            return p
    return None


def _stamp(paths):
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((p, None))
    return out


def _remove_outputs(paths):
    for p in paths:
        try:
            os.chmod(p, 0o644)
            os.remove(p)
        except OSError:
            pass


def build_submission(ctx, labs, mode):
    """Compiles the learner files (step A), checks them, builds the tests (step B).

    Returns {lab dir: {"binary": path} or {"status": ..., "message": ...}}.
    """
    out = {}
    graded = [lab for lab in labs if ctx.ref_lab(lab).get("status") == "ok"]
    if mode == "cumulative":   # every lab a graded lab builds on is the learner's too
        need = set()
        for lab in graded:
            need |= ctx.graph.test_labs(lab.dir)
        compile_labs = [lab for lab in ctx.labs if lab.dir in need]
    else:
        compile_labs = graded
    for lab in compile_labs:
        _remove_outputs(_learner_objects(lab) + glob.glob(os.path.join(
            workspace.BIN, "labs", lab.dir, "libgrading_learner*")))
    targets = ["//labs/%s:grading_learner" % lab.dir for lab in compile_labs]
    pa = workspace.bazel(["build"] + workspace.build_flags() + workspace.sandbox_flags("learner") +
                         targets, timeout=COMPILE_TIMEOUT_S) if targets else None
    compiled = {}
    for lab in compile_labs:
        if _learner_archive(lab) and _learner_objects(lab):
            compiled[lab.dir] = True
        else:
            compiled[lab.dir] = False
            out[lab.dir] = {"status": "compile_error", "message": _compile_error(pa.stderr, lab)}
    # Static checks on what was compiled (made outside any learner process).
    for lab in compile_labs:
        if not compiled[lab.dir]:
            continue
        with open(os.path.join(workspace.WS, lab.learner_file), "rb") as f:
            source = f.read()
        if not ctx.static_checks:
            out[lab.dir] = {"review": []}
            continue
        findings = objcheck.check(_learner_objects(lab), ctx.system_libraries(), source)
        rejects = [f.what for f in findings if f.severity == "reject"]
        review = [f.what for f in findings if f.severity == "review"]
        if rejects:
            compiled[lab.dir] = False
            out[lab.dir] = {"status": "rejected", "review": review,
                            "message": "not graded: the code %s (graded lab code may not use "
                                       "the test framework, process or system functions, or "
                                       "inline assembly)" % rejects[0],
                            "findings": rejects}
        else:
            out[lab.dir] = {"review": review}
    stamps = {lab.dir: _stamp(_learner_objects(lab)) for lab in compile_labs
              if compiled[lab.dir]}
    # Step B: the tests, linked with step A's objects.
    name = "cum" if mode == "cumulative" else "iso"
    tests = []
    for lab in graded:
        if out.get(lab.dir, {}).get("status"):
            continue
        needs = ctx.graph.test_labs(lab.dir) if mode == "cumulative" else {lab.dir}
        broken = sorted(d for d in needs if not compiled.get(d, False))
        if broken:
            nums = [ctx.graph.labs[d].number for d in broken]
            out[lab.dir] = {"status": "compile_error", "review": out[lab.dir].get("review", []),
                            "message": "not graded: lab %s, which this lab builds on, does not "
                                       "compile or was rejected" % ", ".join(map(str, nums))}
            continue
        tests.append(lab)
        _remove_outputs([workspace.output_file("tests/%s/%s" % (lab.dir, name))])
    pb = workspace.bazel(["build"] + workspace.build_flags() + workspace.sandbox_flags("tests") +
                         ["//tests/%s:%s" % (lab.dir, name) for lab in tests],
                         timeout=COMPILE_TIMEOUT_S) if tests else None
    for lab in tests:
        binary = workspace.output_file("tests/%s/%s" % (lab.dir, name))
        if not os.path.exists(binary):
            out[lab.dir].update(status="compile_error", message=_link_error(pb.stderr, lab))
            continue
        out[lab.dir]["binary"] = binary
    for d, st in stamps.items():
        if _stamp([s[0] for s in st]) != st:
            out[d].setdefault("notes", []).append(
                "grader warning: the learner's object was rebuilt while the tests were built")
    return out


# ---------------------------------------------------------------------------
# Grading


def _lab_result(ctx, lab, submitted):
    ref = ctx.ref_lab(lab)
    return {"lab": lab.number, "dir": lab.dir, "title": lab.title, "status": "graded",
            "submitted": submitted, "passed": 0, "total": len(ref.get("tests", [])),
            "points": 0.0, "max_points": 0.0, "first_failure": "", "tests": [],
            "notes": [], "review": []}


def _score(ctx, lab, r, results):
    tests = []
    for name in ctx.ref_lab(lab).get("tests", []):
        ok, msg = results[name]
        pts = ctx.rubric.points(lab.dir, name)
        tests.append({"name": name, "passed": ok, "points": pts if ok else 0.0,
                      "max_points": pts, "message": "" if ok else msg})
    r["tests"] = tests
    r["passed"] = sum(1 for t in tests if t["passed"])
    r["total"] = len(tests)
    r["points"] = float(sum(t["points"] for t in tests))
    r["max_points"] = float(sum(t["max_points"] for t in tests))
    first = next((t for t in tests if not t["passed"]), None)
    r["first_failure"] = "%s: %s" % (first["name"], first["message"]) if first else ""


def grade_submission(ctx, files, mode="isolated", name="submission", ignored=(), notes=()):
    """The report of one submission ({lab number: bytes}; missing labs get the stub)."""
    t0 = time.time()
    labs = ctx.labs
    report = {"submission": name, "mode": mode, "suite": ctx.reference["suite"],
              "isolation": {"tests": sandbox.describe_strategy(ctx.isolation),
                            "compiler": "linux-sandbox with solutions and tests hidden"
                            if ctx.compile_isolation else
                            "none (Bazel's linux-sandbox is unavailable here)"},
              "ignored_files": list(ignored), "notes": list(notes),
              "rubric_errors": list(ctx.rubric.errors), "labs": []}
    results = {lab.dir: _lab_result(ctx, lab, files.get(lab.number) is not None) for lab in labs}
    try:
        workspace.sync_suite(labs, ctx.graph)
        for lab in labs:
            content = files.get(lab.number)
            workspace.place_learner_file(lab, content if content is not None
                                         else workspace.stub_text(lab))
        built = build_submission(ctx, labs, mode)
    except Exception as e:  # a grader fault: every lab says so, the report is still written
        built = {lab.dir: {"status": "grader_error",
                           "message": "grader error (not your code): %s: %s"
                                      % (type(e).__name__, _clean(str(e)))} for lab in labs}
    for lab in labs:
        r = results[lab.dir]
        ref = ctx.ref_lab(lab)
        try:
            if not r["submitted"]:
                r["notes"].append("no %s in the submission: graded the untouched stub"
                                  % os.path.basename(lab.learner_file))
            if ref.get("status") == "no_tests":
                r["status"] = "no_tests"
                r["first_failure"] = "not graded: " + ref.get("message", "no hidden tests")
                continue
            if ref.get("status") != "ok":
                r["status"] = "grader_error"
                r["first_failure"] = "grader error (not your code): " + ref.get("message", "")
                continue
            for t, msg in sorted(ref.get("reference_failures", {}).items()):
                r["notes"].append("grader warning: the reference solution fails %s (%s); the "
                                  "test is not counted" % (t, msg[:200]))
            b = built.get(lab.dir, {})
            r["review"] = b.get("review", [])
            r["notes"] += b.get("notes", [])
            if b.get("status"):
                r["status"] = b["status"]
                msg = b["message"]
                _score(ctx, lab, r, {t: (False, msg) for t in ref["tests"]})
                if b["status"] == "rejected":
                    r["review"] = b.get("findings", []) + r["review"]
                continue
            limits = dict(ctx.rubric.limits(lab.dir), **ctx.limits_override)
            visible = {rel: os.path.join(ROOT, rel) for rel in ref.get("visible", [])}
            per_test, run_notes = _run_lab_tests(ctx, lab, b["binary"], limits, visible)
            r["notes"] += run_notes
            if run_notes and any("authentication" in n for n in run_notes):
                r["review"].append("wrote on the grader's result channel")
            _score(ctx, lab, r, {t: (ok, _clean(msg)) for t, (ok, msg) in per_test.items()})
        except Exception as e:  # this lab only: a grader fault never costs the learner silently
            r["status"] = "grader_error"
            msg = "grader error (not your code): %s: %s" % (type(e).__name__, _clean(str(e)))
            _score(ctx, lab, r, {t: (False, msg) for t in ref.get("tests", [])})
            r["first_failure"] = msg
    report["labs"] = [results[lab.dir] for lab in labs]
    report["points"] = float(sum(r["points"] for r in report["labs"]))
    report["max_points"] = float(sum(r["max_points"] for r in report["labs"]))
    report["seconds"] = round(time.time() - t0, 1)   # not part of the deterministic report
    return report


def grade(submission_files, mode="isolated", labs=None, ctx=None):
    """Grades `submission_files` ({lab number: bytes or None for the stub}); the per-lab
    results (a list of dicts with lab, passed, total, points, first_failure, tests...)."""
    ctx = ctx or default_context(labs)
    report = grade_submission(ctx, {k: v for k, v in submission_files.items() if v is not None},
                              mode=mode)
    return report["labs"]


def checkout_submission(labs):
    files = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
            files[lab.number] = f.read()
    return files


# ---------------------------------------------------------------------------
# The per-lab interface of the first grader (used by mutants.py): it grades
# whatever learner files are in the grading workspace.

_CTX = None


def default_context(labs=None):
    global _CTX
    if _CTX is None or (labs is not None and
                        [l.number for l in labs] != [l.number for l in _CTX.labs]):
        _CTX = Context(labs)
    return _CTX


def expected_tests(lab, labs):
    """The hidden test names, from the trusted reference run (no learner code runs)."""
    ref = default_context(labs).ref_lab(lab)
    if ref.get("status") != "ok":
        raise RuntimeError("lab %d cannot be graded: %s" % (lab.number, ref.get("message", "")))
    return list(ref["tests"])


def build(lab, labs, mode):
    """Builds the lab's hidden test against the learner file now in the grading
    workspace. Returns (binary path, None) or (None, the learner's build error)."""
    ctx = default_context(labs)
    b = build_submission(ctx, [lab], mode).get(lab.dir, {})
    if b.get("binary"):
        return b["binary"], None
    return None, b.get("message", "does not build")


def run_tests(lab, binary, tests):
    """Runs and judges the built binary: {test name: (passed, message)}."""
    ctx = default_context()
    results, _ = _run_lab_tests(ctx, lab, binary, ctx.rubric.limits(lab.dir),
                                {rel: os.path.join(ROOT, rel)
                                 for rel in ctx.ref_lab(lab).get("visible", [])})
    return {t: results.get(t, (False, "not a hidden test")) for t in tests}
