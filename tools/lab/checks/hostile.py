"""The hostile corpus (tests/hostile/; hostile_cases.py reads its cases):
submissions that try to cheat or break grading, graded as learner files.

Before grading, the placeholders of a case's file are replaced: `@ROOT@`,
`@WORK@` and `@CANARY@` by the checkout's path, the grader's work directory
and a secret file planted inside the suite, so the tricks aim at real files;
`@HOSTSECRET@` by a file planted in a host secret place (made private as
grade.host_secrets makes Gradescope's /autograder) and `@READABLE@` by a file
every user may read outside any (a mount namespace or Landlock must refuse
it; where the compiler's wall is file modes alone it is not a secret, and
says so); `@PORT@` by a TCP port on 127.0.0.1 where the self-test listens
and counts every connection it is offered (none may come), `@UDPPORT@` by a
UDP port there that answers and counts every datagram, and `@ABSTRACT@` by
the name of an abstract UNIX socket where it listens too.
MHA_HOSTILE_CASES=name,name grades only those cases (to try a few by hand,
e.g. under `capsh --drop=cap_sys_admin --`, where no namespace is allowed).

check() grades every case of the corpus twice (with the grader's second
layer, the source scan and object checks, and without it: the wall must hold
on its own) and requires, each time:
  * no unearned points for the hostile lab;
  * the next lab (graded from the solution in the same submission) keeps full marks,
    and so do the labs of "with";
  * no secret in any report: the canary, any distinctive line of a solution,
    any line of /etc/shadow;
  * no connection or datagram offered to the listener;
  * grading finished within CASE_SECONDS;
and that no process of any job's one-off user is left once the corpus is
graded (orphans, zombies, a used-up process count). The roster cases and the
grade that must not move with the machine are hostile_roster.py's.
"""
import json
import os
import re
import secrets
import socket
import subprocess
import tempfile
import threading
import time

import surface
from checks.hostile_cases import load_cases, source
from grader import grade, uids, workspace
from labs import ROOT
from reports import report

CASE_SECONDS = 240


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


class Listener:
    """Services on the grading machine's loopback (as the Slurm daemons and
    Bazel servers are, a DNS cache, another job's process) that count what
    they are offered: a TCP port and a UDP port on 127.0.0.1 (which answers
    every datagram) and an abstract UNIX socket."""

    def __init__(self):
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp_port = self.udp.getsockname()[1]
        self.abstract = "mha-hostile-" + secrets.token_hex(8)
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract)
        self.unix.listen(16)
        for s in (self.tcp, self.udp, self.unix):
            s.settimeout(0.2)
        self.offered = {"tcp": 0, "udp": 0, "abstract": 0}
        self._stop = False
        self._threads = [threading.Thread(target=self._serve, args=(kind, s), daemon=True)
                         for kind, s in (("tcp", self.tcp), ("udp", self.udp),
                                         ("abstract", self.unix))]
        for t in self._threads:
            t.start()

    def _serve(self, kind, sock):
        while not self._stop:
            try:
                if kind == "udp":
                    _, sender = sock.recvfrom(64)
                    sock.sendto(b"ok", sender)
                else:
                    conn, _ = sock.accept()
                    conn.close()
            except OSError:
                continue
            self.offered[kind] += 1

    def close(self):
        self._stop = True
        for t in self._threads:
            t.join()
        for s in (self.tcp, self.udp, self.unix):
            s.close()


# What a case's "needs" names, and the kind of service it must not reach.
WALLS = {"network wall": "tcp", "udp wall": "udp", "abstract socket wall": "abstract"}


def walled(isolation, kind):
    """Whether a learner's process here reaches no `kind` of loopback service
    (tcp, udp, abstract): its own network namespace, the launcher's seccomp
    filter (no socket at all), or a Landlock domain with network rules (ABI
    4+: TCP) or scopes (ABI 6+: abstract sockets)."""
    if getattr(isolation, "namespaces", False) or getattr(isolation, "seccomp", False):
        return True
    abi = getattr(isolation, "learner_landlock", 0)
    return kind == "tcp" and abi >= 4 or kind == "abstract" and abi >= 6


def solution(lab):
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
    listener = Listener()
    replacements = {"@ROOT@": ROOT, "@WORK@": workspace.work_root(), "@CANARY@": canary_path,
                    "@PORT@": str(listener.port), "@UDPPORT@": str(listener.udp_port),
                    "@ABSTRACT@": listener.abstract}
    replacements.update({k: path for k, (path, _) in planted.items()})
    cases = [c for c in load_cases(labs) if c.kind == "corpus"]
    only = [n for n in os.environ.get("MHA_HOSTILE_CASES", "").split(",") if n]
    if only:
        cases = [c for c in cases if c.name in only]
    layer = "with" if second_layer else "without"
    out = []
    for case in [c for c in cases if c.expect.get("needs") in WALLS]:
        if not walled(ctx.isolation, WALLS[case.expect["needs"]]):
            c = make_check("hostile %s (%s, %s the second layer)" % (
                case.name, case.expect.get("class", "?"), layer))
            c.skip("no %s here: no network namespace, no seccomp filter and no Landlock rule "
                   "for it for the learner's process (docs/INSTRUCTORS.md)"
                   % case.expect["needs"])
            out.append(c)
            cases.remove(case)
    ctx.builder.second_layer = second_layer
    subs = []
    for case in cases:
        own = {int(n): f for n, f in case.expect.get("with_files", {}).items()}
        nxt = [l for l in labs if (l.number == case.lab.number + 1 or
               l.number in case.expect.get("with", [])) and l.number not in own]
        files = {case.lab.number: source(case, replacements)}
        for l in nxt:
            files[l.number] = solution(l)
        for number, name in own.items():
            with open(os.path.join(os.path.dirname(case.path), name), "rb") as f:
                files[number] = f.read()
        sub = grade.Submission("hostile " + case.name, files, labs=set(files))
        sub.mode = case.expect.get("mode", "isolated")
        subs.append(sub)
        if case.expect.get("control"):
            ctrl = grade.Submission("control " + case.name, {
                case.lab.number: source(case, replacements, trick=False)},
                labs={case.lab.number})
            ctrl.mode = case.expect.get("mode", "isolated")
            subs.append(ctrl)
    t0 = time.time()
    logs = []
    old_log = ctx.log
    ctx.log = lambda m: logs.append(m)
    by_sub = {}
    try:
        for mode in ("isolated", "cumulative"):
            batch = [sub for sub in subs if sub.mode == mode]
            for rep in grade.grade_all(ctx, batch, mode=mode) if batch else []:
                by_sub[rep["submission"]] = rep
    finally:
        ctx.log = old_log
        ctx.builder.second_layer = True
        subprocess.run(["rm", "-rf", host_dir])
        listener.close()
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
        for test, words in sorted(case.expect.get("test_messages", {}).items()):
            said = [t.get("message", "") for t in mine["tests"] if t["name"] == test]
            if not said or words not in said[0]:
                c.fail("%s's message %r does not mention %r" % (
                    test, (said or ["(no such test)"])[0][:300], words))
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
        kind = WALLS.get(case.expect.get("needs"))
        if kind and listener.offered[kind]:
            c.fail("a learner's process reached the self-test's loopback service: %d %s" % (
                listener.offered[kind], {"tcp": "TCP connection(s)", "udp": "UDP datagram(s)",
                                         "abstract": "abstract socket connection(s)"}[kind]))
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


