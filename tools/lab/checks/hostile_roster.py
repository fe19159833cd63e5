"""The hostile cases that are whole rosters or whole gradings, graded through
./lab grade as an instructor runs it (hostile.py grades the corpus of files).

roster_check(): a roster of generated submissions: one that .incbin's another
learner's file, one that reads a classmate's report.json from the output
directory at compile time (__has_include, a split .incbin), a 1,100-level
deep tree, and names with terminal escape codes; the roster must finish,
write its gradebook, keep the victim's marks, leak nothing, write every file
and directory private (0700/0600) and print nothing unsafe.

identity_check(): each roster case of tests/hostile/ (class "identity",
twin_names: "alice", "alice " and a third folder really named "alice (2)",
and two names that differ in a byte that is not UTF-8): one row per folder,
each with the grade its own file gets graded alone, labels and folders
distinct, and every label that prints alike saying so.

drift_check(): each "drift" case: one file with a mistake that only some
fresh inputs meet, graded on two work roots (two MHA_GRADE_DIRs, as two
machines) with one course key (byte-identical reports), then with another
key (the report names the other key, and the grading says so).
"""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

from checks.hostile import solution
from checks.hostile_cases import honest_file, load_cases, source
from grader import course_key, grade, roster
from labs import ROOT

MAIN = [sys.executable, os.path.join(ROOT, "tools", "lab", "main.py")]


# Rosters


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def roster_check(labs, make_check, jobs=None):
    """./lab grade --roster on hostile submissions beside an honest one."""
    c = make_check("a hostile roster (another learner's file stolen with .incbin, a classmate's "
                   "report.json read from --out at compile time, a 1,100-level tree, terminal "
                   "escapes in names) finishes, keeps the honest marks, leaks nothing, writes "
                   "only private files and prints nothing unsafe")
    lab1 = [l for l in labs if l.number == 1][0]
    tmp = tempfile.mkdtemp(prefix="mha-roster-")
    # Traversable like an instructor's folder of grades: the output directory
    # inside must be private on its own (made 0700 before any learner code).
    os.chmod(tmp, 0o711)
    roster = os.path.join(tmp, "roster")
    out = os.path.join(tmp, "out")
    token = "MHA-VICTIM-" + secrets.token_hex(8)
    victim_file = os.path.join(roster, "victim", lab1.target + ".cc")
    _write(victim_file, solution(lab1) + ("\n// %s\n" % token).encode())
    thief = (('#include "labs/%s/%s.h"\n' % (lab1.dir, lab1.target)).encode() +
             b'#include <stdexcept>\n#include <string>\n'
             b'#define MHA_GLUE(a, b) a##b\n'
             b'MHA_GLUE(__as, m__)(".section .rodata\\n.global stolen\\nstolen:\\n.incb" "in \\"'
             + victim_file.encode() + b'\\"\\n.byte 0\\n.previous");\n'
             b'extern "C" const char stolen[];\nnamespace mha {\n'
             b'Tensor3 split_heads(const Tensor2&, int) { throw std::invalid_argument(stolen); }\n'
             b'Tensor2 combine_heads(const Tensor3&) { throw std::invalid_argument(stolen); }\n}\n')
    _write(os.path.join(roster, "thief", lab1.target + ".cc"), thief)
    # A classmate's report, read from the output directory at compile time:
    # __has_include to see it, .incbin (its name split across string
    # literals, which the source scan does not see) to embed it, returned in
    # the failure message. "aaa-" is graded first, "zzz-" last.
    # The spy knows the classmate's name (it names the path); what it must not
    # learn is what only the classmate's report holds: the name of a file the
    # classmate's submission ignored, carrying a second secret.
    classmate = "aaa-classmate"
    report_secret = "MHA-CLASSMATE-" + secrets.token_hex(8)
    report_path = os.path.join(out, classmate, "report.json")
    half = len(report_path) // 2
    spy = (('#include "labs/%s/%s.h"\n' % (lab1.dir, lab1.target)).encode() +
           b'#include <stdexcept>\n#include <string>\n'
           b'#if __has_include("' + report_path.encode() + b'")\n'
           b'#define MHA_GLUE(a, b) a##b\n'
           b'MHA_GLUE(__as, m__)(".section .rodata\\n.global seen\\nseen:\\n.incb" "in \\"'
           + report_path[:half].encode() + b'" "' + report_path[half:].encode() +
           b'\\"\\n.byte 0\\n.previous");\n'
           b'extern "C" const char seen[];\n'
           b'static std::string Seen() { return std::string("MHA-SAW-A-REPORT ") + seen; }\n'
           b'#else\nstatic std::string Seen() { return "no report to read"; }\n#endif\n'
           b'namespace mha {\n'
           b'Tensor3 split_heads(const Tensor2&, int) { throw std::invalid_argument(Seen()); }\n'
           b'Tensor2 combine_heads(const Tensor3&) { throw std::invalid_argument(Seen()); }\n}\n')
    _write(os.path.join(roster, classmate, lab1.target + ".cc"), solution(lab1))
    _write(os.path.join(roster, classmate, report_secret + ".txt"), b"notes\n")
    _write(os.path.join(roster, "zzz-report-spy", lab1.target + ".cc"), spy)
    p = os.path.join(roster, "deep")
    os.mkdir(p)
    try:
        for _ in range(1100):           # iteratively: os.makedirs recurses once per level
            p = os.path.join(p, "d")
            os.mkdir(p)
        with open(os.path.join(p, lab1.target + ".cc"), "wb") as f:
            f.write(solution(lab1))
    except OSError:
        pass                            # a path limit: the tree stops where it must
    esc = os.path.join(roster, "esc\x1b[31mape\x07")
    _write(os.path.join(esc, lab1.target + ".cc"), solution(lab1))
    _write(os.path.join(esc, "\x1b]0;pwned\x07.txt"), b"x")
    cmd = [sys.executable, os.path.join(ROOT, "tools", "lab", "main.py"), "grade", "--roster",
           roster, "--out", out]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=1800)
    seconds = time.time() - t0
    text = p.stdout + p.stderr
    if p.returncode not in (0, 2):
        c.fail("./lab grade --roster exited %d: %s" % (p.returncode, text[-400:]))
    if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", p.stdout):
        c.fail("its output contains control characters")
    gradebook = os.path.join(out, "gradebook.csv")
    if not os.path.exists(gradebook):
        c.fail("no gradebook was written")
    else:
        with open(gradebook, "rb") as f:
            g = f.read()
        if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", g):
            c.fail("the gradebook contains control characters")
        rows = g.decode("utf-8", "replace").splitlines()
        if len(rows) != 7:
            c.fail("the gradebook has %d rows, not a header and 6 submissions" % len(rows))
    everything = text
    for dirpath, _, filenames in os.walk(out):
        for fn in filenames:
            with open(os.path.join(dirpath, fn), "rb") as f:
                everything += f.read()
    if token.encode() in everything:
        c.fail("the victim's file leaked into the reports")
    # The spy's own reports may hold nothing of the classmate's.
    spied = b""
    for dirpath, _, filenames in os.walk(os.path.join(out, "zzz-report-spy")):
        for fn in filenames:
            with open(os.path.join(dirpath, fn), "rb") as f:
                spied += f.read()
    if not spied:
        c.fail("the report spy has no report")
    if b"MHA-SAW-A-REPORT {" in spied or report_secret.encode() in spied:
        c.fail("a classmate's report.json leaked into another learner's report")
    for dirpath, dirnames, filenames in os.walk(out):
        for n in dirnames + filenames:
            mode = os.lstat(os.path.join(dirpath, n)).st_mode
            if mode & 0o077:
                c.fail("%s was written with mode %o: reports must be private (0700/0600)" % (
                    os.path.relpath(os.path.join(dirpath, n), out), mode & 0o777))
                break
    if os.stat(out).st_mode & 0o077:
        c.fail("the output directory was created with mode %o, not 0700" % (
            os.stat(out).st_mode & 0o777))
    try:
        with open(os.path.join(out, "report.json")) as f:
            data = json.load(f)
        by = {s["submission"]: s for s in data["submissions"]}
        v = by.get("victim")
        l1 = [r for r in v["labs"] if r["lab"] == 1][0] if v else None
        if not l1 or l1["points"] != l1["max_points"]:
            c.fail("the victim lost points on lab 1: %s" % (l1 and l1["first_failure"]))
        t = by.get("thief")
        if t and [r for r in t["labs"] if r["lab"] == 1][0]["points"] > 0:
            c.fail("the thief earned points")
        s = by.get("zzz-report-spy")
        if not s or [r for r in s["labs"] if r["lab"] == 1][0]["points"] > 0:
            c.fail("the report spy was not graded or earned points")
        if not any(s.startswith("esc") for s in by):
            c.fail("the submission with escape codes in its name was not graded")
    except (OSError, ValueError, KeyError, TypeError) as e:
        c.fail("the roster report is missing or broken: %s" % e)
    c.details.append("roster of 6 graded in %.0f s" % seconds) if c.ok else None
    subprocess.run(["rm", "-rf", tmp])   # shutil.rmtree recurses once per level too
    return [c]


# ---------------------------------------------------------------------------
# One identity per folder


def roster_files(case, labs):
    """[(folder name, learner file bytes)] of a roster case (its "roster")."""
    lab = case.lab
    others = {c.name: c for c in load_cases(labs)}
    out = []
    for entry in case.expect["roster"]:
        name = entry.get("folder")
        if name is None:
            name = os.fsdecode(bytes.fromhex(entry["folder_hex"]))
        what = entry["file"]
        if what == "@HONEST@":
            data = honest_file(lab)
        elif what == "@STUB@":
            with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
                data = f.read()
        else:
            data = source(others[what], {})
        out.append((name, data))
    return out


def write_roster(case, labs, directory):
    """Writes a roster case's folders into `directory`; its [(name, bytes)]."""
    files = roster_files(case, labs)
    for name, data in files:
        _write(os.path.join(directory, name, case.lab.target + ".cc"), data)
    return files


def identity_check(ctx, labs, make_check):
    out = []
    for case in [c for c in load_cases(labs) if c.kind == "roster"]:
        c = make_check("hostile roster %s (%s): one row per folder, each with its own file's "
                       "grade; labels and folders distinct" % (case.name, case.expect["class"]))
        tmp = tempfile.mkdtemp(prefix="mha-identity-")
        os.chmod(tmp, 0o711)
        try:
            files = write_roster(case, labs, os.path.join(tmp, "roster"))
            cmd = MAIN + ["grade", "--roster", os.path.join(tmp, "roster"), "--out",
                          os.path.join(tmp, "out"), "--labs", str(case.lab.number),
                          "--course-key", ctx.course_key.path]
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
            if p.returncode not in (0, 2):
                c.fail("./lab grade --roster exited %d: %s" % (p.returncode, p.stderr[-300:]))
            else:
                _check_identities(c, ctx, case, files, os.path.join(tmp, "out"))
        finally:
            subprocess.run(["rm", "-rf", tmp])
        out.append(c)
    return out


def own_points(ctx, lab, data):
    """What `data` earns in `lab` graded alone, with the same key."""
    rep = grade.grade_all(ctx, [grade.Submission("alone", {lab.number: data})], labs=[lab])[0]
    return rep["points"]


def _check_identities(c, ctx, case, files, out):
    with open(os.path.join(out, "report.json")) as f:
        data = json.load(f)
    by_id = {s.get("submission_id"): s for s in data["submissions"]}
    expected = {roster.shown_id(name): own_points(ctx, case.lab, d) for name, d in files}
    if sorted(by_id) != sorted(expected):
        c.fail("the roster report's identities %s are not its folders %s" % (
            sorted(by_id), sorted(expected)))
        return
    for ident, points in sorted(expected.items()):
        if by_id[ident]["points"] != points:
            c.fail('folder "%s" got %g points; its own file earns %g' % (
                ident, by_id[ident]["points"], points))
    labels = [s["submission"] for s in data["submissions"]]
    if len(set(labels)) != len(labels):
        c.fail("two rows have one label: %s" % labels)
    for name, _ in files:
        label = by_id[roster.shown_id(name)]["submission"]
        alike = [n for n, _ in files
                 if roster.look(roster.plain_label(n)) == roster.look(roster.plain_label(name))]
        if len(alike) > 1 and "print alike" not in label:
            c.fail("the label %r does not say that %d folders print alike" % (label, len(alike)))
        if len(alike) == 1 and label != roster.plain_label(name) and not name.endswith("]"):
            c.fail("folder %r is labelled %r, not its own name" % (name, label))
    with open(os.path.join(out, "gradebook.csv"), encoding="utf-8") as f:
        rows = f.read().splitlines()
    if len(rows) != len(files) + 1:
        c.fail("the gradebook has %d rows for %d folders" % (len(rows) - 1, len(files)))
    folders = {}
    for folder in os.listdir(out):
        path = os.path.join(out, folder, "report.json")
        if os.path.exists(path):
            with open(path) as f:
                folders.setdefault(json.load(f).get("submission_id"), []).append(folder)
    if sorted(folders) != sorted(expected) or any(len(v) != 1 for v in folders.values()):
        c.fail("the output folders do not hold one report per folder: %s" % folders)
    c.details.append("%d folders, %d rows, points %s" % (
        len(files), len(rows) - 1, ", ".join("%s=%g" % (k, v) for k, v in sorted(
            expected.items()))))


# ---------------------------------------------------------------------------
# The same grade on every machine


def drift_check(labs, make_check):
    out = []
    for case in [c for c in load_cases(labs) if c.kind == "drift"]:
        c = make_check("hostile %s (drift): graded on two work roots with one course key, the "
                       "reports are byte-identical; with another key, the report says so"
                       % case.name)
        tmp = tempfile.mkdtemp(prefix="mha-drift-", dir="/var/tmp")
        os.chmod(tmp, 0o711)
        try:
            _drift(c, case, tmp)
        finally:
            subprocess.run(["rm", "-rf", tmp])
        out.append(c)
    return out


def _drift(c, case, tmp):
    sub = os.path.join(tmp, "submission")
    _write(os.path.join(sub, case.lab.target + ".cc"), source(case, {}))
    keys = [os.path.join(tmp, k) for k in ("a.key", "b.key")]
    for k in keys:
        course_key.new(k)

    def graded(root, key, json_path):
        env = dict(os.environ, MHA_GRADE_DIR=os.path.join(tmp, root))
        env.pop(course_key.ENV, None)
        p = subprocess.run(MAIN + ["grade", sub, "--labs", str(case.lab.number), "--json",
                                   json_path, "--course-key", key], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=1800)
        if p.returncode not in (0, 2):
            raise RuntimeError("./lab grade exited %d: %s" % (p.returncode, p.stderr[-300:]))
        with open(json_path, "rb") as f:
            return f.read(), p.stdout
    try:
        first, _ = graded("root1", keys[0], os.path.join(tmp, "first.json"))
        second, _ = graded("root2", keys[0], os.path.join(tmp, "second.json"))
        other, said = graded("root2", keys[1], os.path.join(tmp, "first.json"))
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        c.fail(str(e))
        return
    if first != second:
        c.fail("one key, two work roots, two reports (%d and %d bytes differ)" % (
            len(first), sum(a != b for a, b in zip(first, second))))
    a, b = json.loads(first), json.loads(other)
    if a.get("course_key") == b.get("course_key") or not a.get("suite"):
        c.fail("the reports do not name two keys and the suite: %s / %s" % (
            a.get("course_key"), b.get("course_key")))
    if "was graded with course key %s" % a.get("course_key") not in said:
        c.fail("the grading with another key did not say so: %s" % said.strip()[-200:])
    c.details.append("key %s: %g points on both roots; key %s: %g points" % (
        a.get("course_key"), a["points"], b.get("course_key"), b["points"]))
