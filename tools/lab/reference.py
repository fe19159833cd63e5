"""The trusted reference data: what each hidden test is, and what it compares.

Built once per version of the suite (cached by suite_hash) by running every
hidden test linked with the reference solutions only (no learner code), in
grading mode, with all of its data files. From that run, per lab:

  tests        the hidden tests, in gtest order (the expected list; a test
               the reference fails is left out and reported)
  comparisons  per test, the golden comparisons it makes, in order: golden
               path, tolerance, axis names, known mistakes (so the judge
               never takes these from a learner's process)
  inputs       data files the tests load as inputs
  hidden       goldens used as expected values: never shown to a learner's
               test process, except that a test which loads one as its input
               (exposes) gets it, in a process of its own
"""
import json
import os

import judge
import protocol
import sandbox
import workspace
from labs import ROOT

REF_TEST_TIMEOUT = 60
REF_LAB_TIMEOUT = 300
REF_MEMORY_MB = 4096


class ReferenceError(Exception):
    pass


def _parse_run(events):
    """{test: {"verdict", "message", "comparisons": [...], "loads": [...]}} in run order."""
    tests, order, current = {}, [], None
    loads_outside = []
    done = False
    for ev in events:
        f = ev.fields
        if ev.kind == "S":
            current = f[0]
            order.append(current)
            tests[current] = {"verdict": None, "message": "", "comparisons": [], "loads": []}
        elif ev.kind == "L":
            (tests[current]["loads"] if current in tests else loads_outside).append(f[1])
        elif ev.kind == "G" and current in tests:
            tests[current]["comparisons"].append(_comparison(f))
        elif ev.kind == "F" and current in tests and not tests[current]["message"]:
            tests[current]["message"] = f[1] if len(f) > 1 else ""
        elif ev.kind == "E" and f and f[0] in tests:
            tests[f[0]]["verdict"] = f[1] if len(f) > 1 else "F"
            if not tests[f[0]]["message"] and len(f) > 2:
                tests[f[0]]["message"] = f[2]
            current = None
        elif ev.kind == "D":
            done = True
    return order, tests, loads_outside, done


def _comparison(f):
    """Decodes a G line: test, golden, shape, atol, rtol, n, axes..., m, (path, msg)..., data."""
    golden, dims = f[1], f[2]
    atol, rtol = judge.float_from_bits(f[3]), judge.float_from_bits(f[4])
    n = int(f[5])
    axes = f[6:6 + n]
    i = 6 + n
    m = int(f[i])
    mistakes = [{"golden": f[i + 1 + 2 * k], "message": f[i + 2 + 2 * k]} for k in range(m)]
    shape = [int(x) for x in dims.split(",")] if dims else []
    return {"golden": golden, "shape": shape, "atol": atol, "rtol": rtol, "axes": axes,
            "mistakes": mistakes, "data": f[-1]}


def _path(h):
    return os.path.join(workspace.REFERENCE, h + ".json")


def load_or_build(labs, graph, log=None):
    h = workspace.suite_hash(labs)
    path = _path(h)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    data = build(labs, graph, h, log)
    os.makedirs(workspace.REFERENCE, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return data


def build(labs, graph, h, log=None):
    data = {"suite": h, "labs": {}}
    with_tests = [lab for lab in labs if graph.tests.get(lab.dir) is not None]
    for lab in labs:
        if graph.tests.get(lab.dir) is None:
            data["labs"][lab.dir] = {"status": "no_tests", "message": graph.test_errors[lab.dir]}
    if not with_tests:
        return data
    if log:
        log("grade: building the reference (once per version of the suite)...")
    targets = ["//tests/%s:ref" % lab.dir for lab in with_tests]
    p = workspace.bazel(["build"] + workspace.build_flags() + workspace.sandbox_flags("tests") +
                        targets, timeout=3600)
    goldens = judge.Goldens(ROOT)
    for lab in with_tests:
        binary = workspace.output_file("tests/%s/ref" % lab.dir)
        if not os.path.exists(binary):
            data["labs"][lab.dir] = {"status": "error", "message": _build_error(p.stderr, lab)}
            continue
        try:
            data["labs"][lab.dir] = _run_lab(lab, graph, binary, goldens)
        except Exception as e:  # one broken lab must not stop the others
            data["labs"][lab.dir] = {"status": "error",
                                     "message": "%s: %s" % (type(e).__name__, e)}
    return data


def _build_error(stderr, lab):
    lines = [l for l in stderr.splitlines() if ("error" in l.lower()) and lab.dir in l]
    first = lines[0].strip() if lines else "the build failed"
    return "the reference build of lab %d fails: %s" % (lab.number, first[:400])


def _run_lab(lab, graph, binary, goldens):
    kw = graph.tests[lab.dir]
    files = {}
    for rel in kw["data_files"]:
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            files[rel] = src
    res = sandbox.run(binary, files, ["--gtest_filter=*"], REF_TEST_TIMEOUT, REF_LAB_TIMEOUT,
                      REF_MEMORY_MB, protocol.new_secret())
    order, tests, loads_outside, done = _parse_run(res.events)
    if not done:
        raise ReferenceError("the reference run of lab %d did not finish (exit status %s): %s"
                             % (lab.number, res.returncode, res.output[-400:]))
    failures, expected, comparisons = {}, [], {}
    loaded, compared = set(loads_outside), set()
    for name in order:
        t = tests[name]
        loaded.update(t["loads"])
        for c in t["comparisons"]:
            compared.add(c["golden"])
            compared.update(m["golden"] for m in c["mistakes"])
        if t["verdict"] != "P":
            failures[name] = t["message"] or "failed"
            continue
        bad = None
        for c in t["comparisons"]:
            ok, msg = judge.matches_golden(c["shape"], judge.decode_values(c["data"]), c, goldens)
            if not ok:
                bad = msg
                break
        if bad:
            failures[name] = bad
            continue
        expected.append(name)
        comparisons[name] = [{k: v for k, v in c.items() if k != "data"}
                             for c in t["comparisons"]]
    # A golden that one test loads as input and another compares against is
    # shown only to the tests that load it (run in their own process).
    visible = sorted(set(files) - compared)
    exposes, self_exposed = {}, []
    for name in expected:
        e = sorted(set(tests[name]["loads"]) & compared)
        if e:
            exposes[name] = e
            mine = {c["golden"] for c in comparisons[name]}
            if mine & set(e):
                self_exposed.append(name)
    return {"status": "ok", "tests": expected, "reference_failures": failures,
            "comparisons": comparisons, "inputs": sorted(loaded), "hidden": sorted(compared),
            "visible": visible, "exposes": exposes, "self_exposed": self_exposed,
            "protected": sum(1 for n in expected if comparisons[n])}
