"""The hostile corpus (tests/hostile/): submissions that try to cheat or break grading.

Each tests/hostile/<case>/ holds one learner file with one trick and an
expect.json:

    {"lab": 1, "class": "forge" | "leak" | "hurt", "trick": "...",
     "max_points": 0             (or "control": true: the case is graded without
                                  its trick too; the trick may not pass any test
                                  that the file without it does not)
     "honest": ["split_heads"]   (optional: these definitions come from
                                  honest/<target>.cc, the honest part of the file)
     "min_points": 1             (optional: the honest part must still earn points)
     "message": "..." or [...]   (optional: the first failure contains one of these)
     "mode": "cumulative"        (optional: graded in that mode; isolated by default)
     "with": [2]                 (optional: the solutions of these labs are submitted
                                  too, as the learner's own: cumulative mode links them)
     "with_files": {"2": "f.cc"} (optional: these labs are submitted from these files
                                  of the case's folder instead; they, and in cumulative
                                  mode the labs that link them, need not earn marks)
     "max_seconds": 60           (optional: the hostile lab's grading takes at most this)}

The case's file is the whole learner file, or, when it has `//@` lines, a
trick written on its lab's stub; assemble() makes the one file a learner
would submit from it (tests/hostile/README.md describes the `//@` lines).
`@ROOT@`, `@WORK@` and `@CANARY@` in a file are replaced before grading by the
checkout's path, the grader's work directory and a secret file that the
self-test plants inside the suite, so the tricks aim at real files;
`@HOSTSECRET@` by a file planted in a host secret place (made private as
grade.host_secrets makes Gradescope's /autograder) and `@READABLE@` by a file
every user may read outside any: a mount namespace or Landlock must refuse it
(where the compiler's wall is file modes alone it is not a secret, and says so).
MHA_HOSTILE_CASES=name,name grades only those cases (to try a few by hand,
e.g. under `capsh --drop=cap_sys_admin --`, where no namespace is allowed).

check() grades every case twice (with the grader's second layer, the source
scan and object checks, and without it: the wall must hold on its own) and
requires, each time:
  * no unearned points for the hostile lab;
  * the next lab (graded from the solution in the same submission) keeps full marks,
    and so do the labs of "with";
  * no secret in any report: the canary, any distinctive line of a solution,
    any line of /etc/shadow;
  * grading finished within CASE_SECONDS.
roster_check() runs ./lab grade --roster on generated submissions: one that
.incbin's another learner's file, one that reads a classmate's report.json
from the output directory at compile time (__has_include, a split .incbin), a
1,100-level deep tree, and names with terminal escape codes; the roster must
finish, write its gradebook, keep the victim's marks, leak nothing, write
every file and directory private (0700/0600) and print nothing unsafe.
check() also requires that no process of any job's one-off user is left
once the corpus is graded (orphans, zombies, a used-up process count).
"""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

import surface
from grader import grade, uids, workspace
from labs import ROOT
from reports import report

HOSTILE = os.path.join(ROOT, "tests", "hostile")
CASE_SECONDS = 240


class Case:
    def __init__(self, name, lab, path, expect):
        self.name = name
        self.lab = lab
        self.path = path
        self.expect = expect


def load_cases(labs):
    by_number = {lab.number: lab for lab in labs}
    cases = []
    for name in sorted(os.listdir(HOSTILE)):
        d = os.path.join(HOSTILE, name)
        if not os.path.isfile(os.path.join(d, "expect.json")):
            continue
        with open(os.path.join(d, "expect.json")) as f:
            expect = json.load(f)
        lab = by_number[expect["lab"]]
        cases.append(Case(name, lab, os.path.join(d, lab.target + ".cc"), expect))
    return cases


# ---------------------------------------------------------------------------
# A case's one learner file


def assemble(case, trick=True):
    """The one learner file `case` submits, as text.

    A case file without `//@` lines is the whole file. One with them is a trick
    written on its lab's stub: the stub, then the definitions its expect.json
    names in "honest" taken from honest/<target>.cc, then (trick=True) the
    trick's sections. trick=False gives its control: the same file without the
    trick. The submission stays one file, as a learner sends it."""
    path = case.path
    text = _pasted(path, 0)
    honest = case.expect.get("honest", [])
    if "\n//@ " not in "\n" + text:
        if honest or case.expect.get("control"):
            raise ValueError("%s: \"honest\" and \"control\" need a trick on the stub "
                             "(//@ lines)" % _rel(path))
        return text
    lines = _read(os.path.join(ROOT, case.lab.learner_file)).split("\n")
    if honest:
        where = os.path.join(HOSTILE, "honest", case.lab.target + ".cc")
        src = _read(where).split("\n")
        includes = [l for l in src if l.startswith("#include") and l not in lines]
        _after_includes(lines, [""] + includes if includes else [])
        for name in honest:
            first, last = _definition(src, name, where)
            lines = _replace(lines, name, src[first:last + 1], case.lab.learner_file)
    if not trick:
        return "\n".join(lines)
    head, sections = [], []
    for line in text.split("\n"):
        if line.startswith("//@ "):
            sections.append((line[4:].strip(), []))
        else:
            (sections[-1][1] if sections else head).append(line)
    while lines and lines[0].startswith("//"):      # the stub's own header comment
        lines.pop(0)
    for directive, body in sections:
        while body and not body[-1].strip():
            body.pop()
        if directive == "after includes":
            _after_includes(lines, [""] + body)
        elif directive.startswith("at the start of "):
            name = directive[len("at the start of "):]
            first, last = _definition(lines, name, case.lab.learner_file)
            opening = next(i for i in range(first, last + 1) if "{" in lines[i])
            if opening == last:
                raise ValueError("%s: %s is one line in the stub: write it whole "
                                 "(//@ instead of %s)" % (_rel(path), name, name))
            lines[opening + 1:opening + 1] = body
        elif directive.startswith("instead of "):
            name = directive[len("instead of "):]
            lines = _replace(lines, name, body, case.lab.learner_file)
        else:
            raise ValueError("%s: unknown line //@ %s (expected: after includes, at the start "
                             "of NAME, instead of NAME, paste FILE)" % (_rel(path), directive))
    return "\n".join(head + lines)


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _rel(path):
    return os.path.relpath(path, ROOT)


def _after_includes(lines, new):
    at = max(i for i, l in enumerate(lines) if l.startswith("#include"))
    lines[at + 1:at + 1] = new


def _pasted(path, depth):
    """`path`'s text with each `//@ paste FILE` line (FILE in tests/hostile/) replaced by FILE's."""
    if depth > 4:
        raise ValueError("%s: //@ paste nested more than 4 deep" % _rel(path))
    out = []
    for line in _read(path).split("\n"):
        if line.startswith("//@ paste "):
            out.append(_pasted(os.path.join(HOSTILE, line[len("//@ paste "):].strip()), depth + 1)
                       .rstrip("\n"))
        else:
            out.append(line)
    return "\n".join(out)


def _definition(lines, name, where):
    """(first, last) line of the one definition of function `name` in `lines`
    (house style: it starts at column 0 and ends on its line or at a line "}")."""
    call = re.compile(r"(?<![\w:~])" + re.escape(name) + r"\(")
    starts = [i for i, l in enumerate(lines)
              if l[:1].isalpha() and call.search(l) and not l.rstrip().endswith(";")]
    if len(starts) != 1:
        raise ValueError("%s: %d definitions of %s, not one" % (_rel(where), len(starts), name))
    first = starts[0]
    opening = next(i for i in range(first, len(lines)) if "{" in lines[i])
    if lines[opening].rstrip().endswith("}"):
        return first, opening
    return first, next(i for i in range(opening + 1, len(lines)) if lines[i].rstrip() == "}")


def _replace(lines, name, definition, where):
    first, last = _definition(lines, name, where)
    return lines[:first] + list(definition) + lines[last + 1:]


def plant_canary():
    """A secret inside the suite (readable by root only once grading protected it)."""
    path = os.path.join(ROOT, ".cache", "hostile-canary.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    token = "MHA-CANARY-" + secrets.token_hex(12)
    with open(path, "w") as f:
        f.write(token + "\n")
    return path, token


def secret_needles(labs, canary_token):
    """Strings that must never appear in a report."""
    needles = {canary_token: "the canary planted inside the suite"}
    for lab in labs:
        with open(os.path.join(ROOT, lab.solution_file), errors="replace") as f:
            sol = f.read()
        with open(os.path.join(ROOT, lab.learner_file), errors="replace") as f:
            stub = f.read()
        for line in sol.splitlines():
            s = line.strip()
            if len(s) >= 40 and s not in stub and not s.startswith("#include"):
                needles[s] = "a line of " + lab.solution_file
    try:
        with open("/etc/shadow", errors="replace") as f:
            for line in f:
                if len(line.strip()) >= 12:
                    needles[line.strip()[:40]] = "a line of /etc/shadow"
    except OSError:
        pass
    return needles


def plant_host_secrets(ctx):
    """(directory, {placeholder: (path, token)}): a file in a host secret place,
    made private as open_grading makes /autograder, and one every user may read."""
    # Beside the work root, whose parent others may enter (workspace.check_traversable).
    base = tempfile.mkdtemp(prefix="mha-hostile-host-",
                            dir=os.path.dirname(os.path.abspath(ctx.workspace.root)))
    os.chmod(base, 0o755)
    planted = {}
    for placeholder, rel in (("@HOSTSECRET@", "autograder/submission_metadata.json"),
                             ("@READABLE@", "elsewhere/notes.txt")):
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        os.chmod(os.path.dirname(path), 0o755)
        token = "MHA-HOST-" + secrets.token_hex(12)
        with open(path, "w") as f:
            f.write('{"previous_submissions": "%s"}\n' % token)
        os.chmod(path, 0o644)
        planted[placeholder] = (path, token)
    ctx.isolation.protect(grade.host_secrets(ctx.workspace.root,
                                             [os.path.join(base, "autograder")]), ctx.log)
    return base, planted


def _source(case, canary_path, work_root, trick=True, planted=None):
    data = assemble(case, trick).encode()
    for placeholder, (path, _) in (planted or {}).items():
        data = data.replace(placeholder.encode(), path.encode())
    return (data.replace(b"@ROOT@", ROOT.encode()).replace(b"@WORK@", work_root.encode())
            .replace(b"@CANARY@", canary_path.encode()))


def _solution(lab):
    with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
        return f.read()


def check(ctx, labs, make_check, second_layer=True):
    """One Check per case."""
    canary_path, token = plant_canary()
    needles = secret_needles(labs, token)
    host_dir, planted = plant_host_secrets(ctx)
    needles[planted["@HOSTSECRET@"][1]] = "the host secret (as /autograder/submission_metadata.json)"
    wall = ctx.isolation.build_wall() if hasattr(ctx.isolation, "build_wall") else ""
    if wall != "file modes":
        needles[planted["@READABLE@"][1]] = ("a file outside the suite that the compiler's wall "
                                             "(%s) must refuse" % wall)
    cases = load_cases(labs)
    only = [n for n in os.environ.get("MHA_HOSTILE_CASES", "").split(",") if n]
    if only:
        cases = [c for c in cases if c.name in only]
    ctx.builder.second_layer = second_layer
    subs, witnesses = [], {}
    for case in cases:
        own = {int(n): f for n, f in case.expect.get("with_files", {}).items()}
        nxt = [l for l in labs if (l.number == case.lab.number + 1 or
               l.number in case.expect.get("with", [])) and l.number not in own]
        files = {case.lab.number: _source(case, canary_path, workspace.work_root(),
                                          planted=planted)}
        for l in nxt:
            files[l.number] = _solution(l)
        for number, name in own.items():
            with open(os.path.join(os.path.dirname(case.path), name), "rb") as f:
                files[number] = f.read()
        sub = grade.Submission("hostile " + case.name, files, labs=set(files))
        sub.mode = case.expect.get("mode", "isolated")
        subs.append(sub)
        witnesses[case.name] = nxt
        if case.expect.get("control"):
            ctrl = grade.Submission("control " + case.name, {
                case.lab.number: _source(case, canary_path, workspace.work_root(), trick=False,
                                         planted=planted)},
                labs={case.lab.number})
            ctrl.mode = case.expect.get("mode", "isolated")
            subs.append(ctrl)
    t0 = time.time()
    logs = []
    old_log = ctx.log
    ctx.log = lambda m: logs.append(m)
    started = {}

    def progress(rep, sub):
        started[rep["submission"]] = rep["seconds"]

    by_sub = {}
    try:
        for mode in ("isolated", "cumulative"):
            batch = [sub for sub in subs if sub.mode == mode]
            for rep in grade.grade_all(ctx, batch, progress, mode=mode) if batch else []:
                by_sub[rep["submission"]] = rep
    finally:
        ctx.log = old_log
        ctx.builder.second_layer = True
        subprocess.run(["rm", "-rf", host_dir])
    layer = "with" if second_layer else "without"
    out = []
    for case in cases:
        c = make_check("hostile %s (%s, %s the second layer): gains nothing, leaks nothing"
                       % (case.name, case.expect.get("class", "?"), layer))
        rep = by_sub["hostile " + case.name]
        mine = [r for r in rep["labs"] if r["lab"] == case.lab.number][0]
        if case.expect.get("control"):
            ctrl = [r for r in by_sub["control " + case.name]["labs"]
                    if r["lab"] == case.lab.number][0]
            ok_tests = {t["name"] for t in ctrl["tests"] if t["passed"]}
            extra = [t["name"] for t in mine["tests"] if t["passed"] and t["name"] not in ok_tests]
            if extra:
                c.fail("passes what its honest control does not: %s" % ", ".join(extra[:3]))
        elif mine["points"] > case.expect.get("max_points", 0):
            c.fail("earned %g points (at most %g)" % (mine["points"],
                                                       case.expect.get("max_points", 0)))
        if mine["points"] < case.expect.get("min_points", 0):
            c.fail("earned %g points, fewer than its honest part earns (%g): %s" % (
                mine["points"], case.expect["min_points"], mine["first_failure"]))
        limit = case.expect.get("max_seconds")
        took = mine.get("timing", {}).get("total_s", 0)
        if limit and took > limit:
            c.fail("its grading took %.0f s (at most %d s)" % (took, limit))
        wanted = case.expect.get("message")
        if wanted and second_layer:
            wanted = [wanted] if isinstance(wanted, str) else wanted
            if not any(w in mine["first_failure"] for w in wanted):
                c.fail("first failure %r does not mention %s" % (
                    mine["first_failure"][:200], " or ".join(repr(w) for w in wanted)))
        # Labs submitted from the case's own files ("with_files"), and in
        # cumulative mode the labs that link them, need not earn marks.
        own = {int(n) for n in case.expect.get("with_files", {})}
        by_number = {l.number: l for l in labs}
        exempt = own | {n for n, l in by_number.items() if own and
                        case.expect.get("mode") == "cumulative" and
                        any(e.number in own for e in surface.linked_labs(l, labs))}
        for r in rep["labs"]:
            if (r["lab"] != case.lab.number and r["lab"] not in exempt and
                    r["points"] != r["max_points"]):
                c.fail("lab %d lost points beside it: %s" % (r["lab"], r["first_failure"]))
        text = json.dumps(rep) + report.scoreboard(rep) + json.dumps(report.gradescope(rep))
        text += "\n".join(l for l in logs if case.name in l)
        for needle, what in needles.items():
            if needle in text:
                c.fail("the report contains %s" % what)
        if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", report.scoreboard(rep)):
            c.fail("the scoreboard contains control characters")
        out.append(c)
    left = make_check("no process of any job's one-off user (orphans, zombies, a used-up "
                      "process count) outlives its job (%s the second layer)" % layer)
    # Killed processes are reaped by their parent: PID 1 where no pid
    # namespace held them, which may take a moment (or, in a container
    # without an init, for ever: a zombie of a uid no job uses again).
    for _ in range(30):
        alive = uids.processes_of(uids.claimed(), zombies=False)
        if not alive:
            break
        time.sleep(0.1)
    if alive:
        left.fail("%d processes of job users are still running (pids %s)" % (
            len(alive), ", ".join(str(p) for p in sorted(alive)[:5])))
    zombies = uids.processes_of(uids.claimed())
    if zombies:
        left.details.append("%d zombies of retired job users wait for PID 1 to reap them" %
                            len(zombies))
    out.append(left)
    total = make_check("the hostile corpus (%s the second layer) was graded within %d s"
                       % (layer, CASE_SECONDS))
    elapsed = time.time() - t0
    if elapsed > CASE_SECONDS:
        total.fail("took %.0f s" % elapsed)
    total.name += " (isolation: %s)" % ctx.isolation.describe()["summary"]
    out.append(total)
    return out


# ---------------------------------------------------------------------------
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
    _write(victim_file, _solution(lab1) + ("\n// %s\n" % token).encode())
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
    _write(os.path.join(roster, classmate, lab1.target + ".cc"), _solution(lab1))
    _write(os.path.join(roster, classmate, report_secret + ".txt"), b"notes\n")
    _write(os.path.join(roster, "zzz-report-spy", lab1.target + ".cc"), spy)
    p = os.path.join(roster, "deep")
    os.mkdir(p)
    try:
        for _ in range(1100):           # iteratively: os.makedirs recurses once per level
            p = os.path.join(p, "d")
            os.mkdir(p)
        with open(os.path.join(p, lab1.target + ".cc"), "wb") as f:
            f.write(_solution(lab1))
    except OSError:
        pass                            # a path limit: the tree stops where it must
    esc = os.path.join(roster, "esc\x1b[31mape\x07")
    _write(os.path.join(esc, lab1.target + ".cc"), _solution(lab1))
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
