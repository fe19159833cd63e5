"""Learner tooling: ./lab hint, ./lab status, ./lab watch.

    ./lab hint N            the next hint for lab N you have not seen yet
    ./lab hint N --all      every hint for lab N
    ./lab hint N --reset    forget which hints of lab N you have seen
    ./lab status            each lab: not started / failing / passing, and what to do next
    ./lab watch [N]         re-run lab N's public tests every time you save its file

Hints live in labs/labs.json next to each lab's title; which ones you have
seen is remembered in .cache/hints.json (not committed). status and watch
run the public tests, `bazel test //labs/NN_name/...`, in this checkout with
Bazel's normal cache, exactly as you would by hand.
"""
import json
import os
import re
import select
import shutil
import subprocess
import sys
import textwrap
import time

from labs import ROOT, find_lab, load_labs

HINTS_STATE = os.path.join(ROOT, ".cache", "hints.json")
NOT_IMPLEMENTED = "is not implemented yet"


def _bazel():
    """The bazel command. MHA_BAZEL_OUTPUT_BASE picks another output base
    (for running beside another build of this checkout); learners leave it unset."""
    cmd = ["bazel"]
    if os.environ.get("MHA_BAZEL_OUTPUT_BASE"):
        cmd.append("--output_base=" + os.environ["MHA_BAZEL_OUTPUT_BASE"])
    return cmd


def _lab_arg(labs, key):
    lab = find_lab(labs, key)
    if lab is None:
        print("lab: unknown lab %r; the labs are 1-%d (./lab status lists them)"
              % (key, len(labs)), file=sys.stderr)
    return lab


# --------------------------------------------------------------------------- hints

def _load_seen():
    try:
        with open(HINTS_STATE) as f:
            data = json.load(f)
        return {str(k): int(v) for k, v in data.get("seen", {}).items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def _save_seen(seen):
    os.makedirs(os.path.dirname(HINTS_STATE), exist_ok=True)
    tmp = HINTS_STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"seen": seen}, f, indent=1, sort_keys=True)
    os.replace(tmp, HINTS_STATE)


def _print_hint(lab, i):
    print("Hint %d of %d for lab %d (%s):" % (i + 1, len(lab.hints), lab.number, lab.title))
    print(textwrap.fill(lab.hints[i], width=100, initial_indent="  ", subsequent_indent="  "))


def cmd_hint(args):
    labs = load_labs()
    lab = _lab_arg(labs, args.lab)
    if lab is None:
        return 2
    seen = _load_seen()
    key = lab.nn
    if args.reset:
        seen.pop(key, None)
        _save_seen(seen)
        print("lab %d: hints reset; ./lab hint %d shows the first one again" % (lab.number,
                                                                                lab.number))
        return 0
    if not lab.hints:
        print("lab %d has no hints yet; read docs/%s.md" % (lab.number, lab.dir))
        return 0
    n = len(lab.hints)
    if args.all:
        for i in range(n):
            _print_hint(lab, i)
            print()
        seen[key] = n
        _save_seen(seen)
        return 0
    shown = min(seen.get(key, 0), n)
    if shown >= n:
        _print_hint(lab, n - 1)
        print()
        print("That was the last hint. ./lab hint %d --all shows them all again; "
              "docs/%s.md, \"Classic mistakes\", lists what usually goes wrong."
              % (lab.number, lab.dir))
        return 0
    _print_hint(lab, shown)
    seen[key] = shown + 1
    _save_seen(seen)
    print()
    if shown + 1 < n:
        print("(%d more; run ./lab hint %d again for the next one)" % (n - shown - 1, lab.number))
    else:
        print("(that was the last hint for lab %d)" % lab.number)
    return 0


# --------------------------------------------------------------------------- status

def _committed_stub(lab):
    try:
        return subprocess.run(["git", "-C", ROOT, "show", "HEAD:" + lab.learner_file],
                              check=True, capture_output=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


def is_started(lab):
    """False while the learner file is the committed stub, or still throws
    "is not implemented yet" in as many places as the stub does."""
    path = os.path.join(ROOT, lab.learner_file)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return False
    stub = _committed_stub(lab)
    if stub is not None and text == stub:
        return False
    marks = text.decode("utf-8", "replace").count(NOT_IMPLEMENTED)
    stub_marks = stub.decode("utf-8", "replace").count(NOT_IMPLEMENTED) if stub else 0
    if marks and marks >= max(stub_marks, 1):
        return False
    return True


_RESULT_RE = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|FAILED TO BUILD|NO STATUS|"
                        r"TIMEOUT|FLAKY|INCOMPLETE|SKIPPED|REMOTE FAILURE|BUILD FAILURE)\b")


def _testlogs():
    p = subprocess.run(_bazel() + ["info", "bazel-testlogs"], cwd=ROOT, capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else os.path.join(ROOT, "bazel-testlogs")


def _failed_cases(target, testlogs):
    """Names of the failing test cases of `target`, read from its test.xml."""
    pkg, name = target[2:].split(":", 1)
    xml = os.path.join(testlogs, pkg, name, "test.xml")
    try:
        with open(xml, errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    failed = []
    for m in re.finditer(r'<testcase name="([^"]+)"[^>]*?classname="([^"]+)"[^>]*>(.*?)</testcase>',
                         text, re.S):
        if "<failure" in m.group(3):
            failed.append("%s.%s" % (m.group(2), m.group(1)))
    return failed


def run_public_tests(labs):
    """One `bazel test --keep_going` over the labs given. Returns
    {lab number: (passed?, detail)} and the bazel output."""
    if not labs:
        return {}, ""
    cmd = _bazel() + ["test", "--keep_going", "--test_summary=short", "--test_output=summary"] + \
        [lab.public_tests for lab in labs]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, errors="replace")
    out = p.stdout + "\n" + p.stderr
    per_target = {}
    for line in out.splitlines():
        m = _RESULT_RE.match(line.strip())
        if m:
            per_target[m.group(1)] = m.group(2)
    results = {}
    testlogs = None
    for lab in labs:
        prefix = "//labs/%s:" % lab.dir
        mine = {t: s for t, s in per_target.items() if t.startswith(prefix)}
        if not mine:
            if p.returncode == 0:
                results[lab.number] = (True, "no public tests")
            else:
                results[lab.number] = (False, _build_error(out, lab) or "bazel failed (exit %d)"
                                       % p.returncode)
            continue
        bad = {t: s for t, s in mine.items() if s not in ("PASSED", "FLAKY")}
        if not bad:
            results[lab.number] = (True, "%d test target(s) pass" % len(mine))
            continue
        details = []
        for t, s in sorted(bad.items()):
            if s == "FAILED":
                if testlogs is None:
                    testlogs = _testlogs()
                cases = _failed_cases(t, testlogs)
                details.append("%s fails%s" % (t.split(":")[1], (": " + ", ".join(cases[:3]))
                                               if cases else ""))
            elif s in ("FAILED TO BUILD", "NO STATUS", "BUILD FAILURE"):
                details.append("does not compile: " + (_build_error(out, lab) or t))
            else:
                details.append("%s %s" % (t.split(":")[1], s.lower()))
        results[lab.number] = (False, "; ".join(dict.fromkeys(details)))
    return results, out


def _build_error(out, lab):
    lines = out.splitlines()
    for line in lines:
        if "error:" in line and lab.learner_file in line:
            return line.strip()
    for line in lines:
        if "error:" in line and "labs/" in line:
            return line.strip()
    return ""


def builds_on(lab, labs):
    """The earlier labs whose code `bazel test //labs/NN_name/...` compiles, read
    from the lab's BUILD file (transitively)."""
    by_dir = {l.dir: l for l in labs}
    seen, todo = set(), [lab.dir]
    while todo:
        d = todo.pop()
        try:
            with open(os.path.join(ROOT, "labs", d, "BUILD")) as f:
                text = f.read()
        except OSError:
            continue
        for dep in re.findall(r'"//labs/([^:"/]+)[:"]', text):
            if dep != lab.dir and dep in by_dir and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted((by_dir[d] for d in seen), key=lambda l: l.number)


def lab_states(labs):
    """[(lab, state, detail)], state one of "not started", "failing", "passing"."""
    started = [lab for lab in labs if is_started(lab)]
    results, _ = run_public_tests(started)
    states = []
    for lab in labs:
        if lab not in started:
            states.append((lab, "not started", ""))
        else:
            ok, detail = results[lab.number]
            states.append((lab, "passing" if ok else "failing", "" if ok else detail))
    state_of = {lab.number: state for lab, state, _ in states}
    for i, (lab, state, detail) in enumerate(states):
        if state != "failing":
            continue
        behind = ["lab %d (%s)" % (d.number, state_of[d.number]) for d in builds_on(lab, labs)
                  if state_of[d.number] != "passing"]
        if behind:
            states[i] = (lab, state, "builds on %s; %s" % (", ".join(behind), detail))
    return states


def next_lab(states):
    for lab, state, _ in states:
        if state != "passing":
            return lab
    return None


def _next_line(lab):
    return "next: lab %d \u2014 %s \u2014 bazel test %s" % (lab.number, lab.title, lab.public_tests)


def cmd_status(args):
    labs = load_labs()
    if any(is_started(lab) for lab in labs):
        print("running the public tests of the labs you have started...", file=sys.stderr,
              flush=True)
    states = lab_states(labs)
    width = max(len(lab.title) for lab in labs)
    for lab, state, detail in states:
        line = "lab %d  %-*s  %-11s%s" % (lab.number, width, lab.title, state,
                                          ("  " + detail[:150]) if detail else "")
        print(line.rstrip())
    nxt = next_lab(states)
    print()
    if nxt is None:
        print("every lab passes its public tests. Instructors grade with ./lab grade.")
    else:
        print(_next_line(nxt))
    return 0


# --------------------------------------------------------------------------- watch

def _run_tests_once(lab):
    print("\n[%s] bazel test %s" % (time.strftime("%H:%M:%S"), lab.public_tests), flush=True)
    cmd = _bazel() + ["test", lab.public_tests]
    p = subprocess.run(cmd, cwd=ROOT)
    if p.returncode == 0:
        print("[%s] lab %d passes its public tests. Grade with ./lab grade; next lab: ./lab status"
              % (time.strftime("%H:%M:%S"), lab.number), flush=True)
    else:
        print("[%s] lab %d: not there yet (exit %d). Save %s to run again; Ctrl-C stops."
              % (time.strftime("%H:%M:%S"), lab.number, p.returncode, lab.learner_file),
              flush=True)
    return p.returncode


def _drain(proc, name, wait_s, stop_on_hit=False):
    """Reads inotify events for up to wait_s; True if `name` was written.
    With stop_on_hit, returns as soon as it was."""
    hit = False
    deadline = time.time() + wait_s
    while True:
        left = deadline - time.time()
        if left <= 0:
            return hit
        r, _, _ = select.select([proc.stdout], [], [], left)
        if not r:
            return hit
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("inotifywait stopped")
        if line.strip() == name:
            hit = True
            if stop_on_hit:
                return hit


def cmd_watch(args):
    labs = load_labs()
    if shutil.which("inotifywait") is None:
        print("lab watch: inotifywait not found; install inotify-tools "
              "(tools/setup.sh --dev installs it)", file=sys.stderr)
        return 1
    if args.lab:
        lab = _lab_arg(labs, args.lab)
        if lab is None:
            return 2
    else:
        print("finding the first lab that does not pass yet...", file=sys.stderr)
        lab = next_lab(lab_states(labs))
        if lab is None:
            print("every lab passes its public tests; ./lab watch N watches lab N")
            return 0
    directory = os.path.join(ROOT, "labs", lab.dir)
    name = os.path.basename(lab.learner_file)
    print("watching %s (lab %d \u2014 %s); Ctrl-C stops" % (lab.learner_file, lab.number,
                                                             lab.title), flush=True)
    # Watch the directory, not the file: editors often save by writing a new
    # file and renaming it over the old one, which ends a watch on the file.
    proc = subprocess.Popen(["inotifywait", "-q", "-m", "-e", "close_write,moved_to,create",
                             "--format", "%f", directory], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        _run_tests_once(lab)
        while True:
            if _drain(proc, name, 3600, stop_on_hit=True):
                _drain(proc, name, 0.3)   # one run for a burst of writes
                _run_tests_once(lab)
    except KeyboardInterrupt:
        print("\nwatch: stopped")
        return 0
    except RuntimeError as e:
        print("watch: %s" % e, file=sys.stderr)
        return 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
