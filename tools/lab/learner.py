"""The learner's commands: ./lab status, watch, hint, and grade in the kit.

    ./lab status            each lab: not started / failing (and why) / passing, and the next one
    ./lab watch [N]         re-run lab N's public tests every time you save its file
    ./lab hint N            the next hint for lab N (--all: every hint; --reset: start over)
    ./lab grade             in the learner's kit: a provisional scoreboard from the public tests

A lab is "not started" while its file is byte for byte the stub (the sha256
recorded in labs/labs.json), whatever git says: committing your work does not
reset it. status, watch and grade run the public tests, `bazel test
//labs/NN_name/...`, in this folder with Bazel's usual output base, so they
share its cache with your own `bazel test` runs; status and grade run every
lab they look at in one Bazel invocation.

When a file does not compile, status and watch print the compiler's first
error that points into your own file (file:line: message), also when the
error is reported inside a library header that your line instantiated, and
the warnings about your file (-Wall -Wextra -Wshadow, common/lab.bzl), one
line. Bazel prints a file's warnings only when it compiles it: those seen are
kept in .cache/warnings.json for that content of the file, and a file that
Bazel compiled outside ./lab (your own bazel test) is compiled once more with
Bazel's own command line (bazel aquery) and -fsyntax-only to see them.

Bazel's server: a ./lab command that finds no Bazel server running for this
folder shuts the one it started down when it ends (also on Ctrl-C), so no
./lab command leaves a process behind. One that finds a server running (you
ran bazel by hand) uses it and leaves it running: yours stays warm.
Hints seen are remembered in .cache/hints.json.
"""
import argparse
import getpass
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import messages
from labs import ROOT, find_lab, load_labs, sha256

CACHE = os.path.join(ROOT, ".cache")
HINTS_STATE = os.path.join(CACHE, "hints.json")
WARNINGS_STATE = os.path.join(CACHE, "warnings.json")
NOT_IMPLEMENTED = "is not implemented yet"
WIDTH = 100

# Exit statuses of the learner's commands.
OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130


def _err(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- Bazel

def _startup():
    """Bazel's startup options: MHA_BAZEL_OUTPUT_BASE picks another output base
    and MHA_BAZEL_STARTUP adds any (for running beside another build of this
    folder, as the kit self-test does); learners leave both unset."""
    opts = []
    if os.environ.get("MHA_BAZEL_OUTPUT_BASE"):
        opts.append("--output_base=" + os.environ["MHA_BAZEL_OUTPUT_BASE"])
    opts += os.environ.get("MHA_BAZEL_STARTUP", "").split()
    return opts


def output_base(startup=None, root=ROOT):
    """The output base Bazel uses for this folder: --output_base if given, else
    <output user root>/<md5 of the workspace path> as Bazel computes it."""
    startup = _startup() if startup is None else startup
    user_root = None
    for o in startup:
        if o.startswith("--output_base="):
            return o.split("=", 1)[1]
        if o.startswith("--output_user_root="):
            user_root = o.split("=", 1)[1]
    if user_root is None:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = str(os.getuid())
        user_root = os.path.join(os.path.expanduser("~"), ".cache", "bazel", "_bazel_" + user)
    return os.path.join(user_root, hashlib.md5(os.path.realpath(root).encode()).hexdigest())


def server_pid(base=None):
    """The pid of the Bazel server of this folder's output base, or None."""
    base = base or output_base()
    try:
        with open(os.path.join(base, "server", "server.pid.txt")) as f:
            pid = int(f.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmdline = f.read()
    except (OSError, ValueError):
        return None
    return pid if base.encode() in cmdline else None


def _stop(proc):
    """Ends a Bazel client after Ctrl-C: the terminal sent it SIGINT too, and it
    cancels its command; if it was not told (SIGINT to us alone), tell it."""
    for sig, wait_s in ((None, 2), (signal.SIGINT, 15), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            return
        if sig is not None:
            try:
                proc.send_signal(sig)
            except OSError:
                return
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            pass


class Bazel:
    """Bazel for one ./lab command: `with Bazel() as bz: bz.run([...])`. If no
    server was running for this folder when the command began, the one it
    started is shut down when the command ends, whatever happens."""

    def __init__(self):
        self.cmd = ["bazel"] + _startup()
        self.owned = None

    def __enter__(self):
        self.owned = server_pid() is None
        return self

    def run(self, args, capture=True, stdout_only=False):
        """(exit status, output) of `bazel ARGS`: stdout and stderr together, or
        stdout alone (stderr dropped) with stdout_only."""
        stderr = subprocess.DEVNULL if stdout_only else subprocess.STDOUT
        try:
            proc = subprocess.Popen(self.cmd + args, cwd=ROOT, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE if capture else None,
                                    stderr=stderr if capture else None,
                                    text=True, errors="replace")
        except FileNotFoundError:
            return 127, "bazel: command not found; run tools/setup.sh"
        try:
            out, _ = proc.communicate()
        except KeyboardInterrupt:
            _stop(proc)
            raise
        return proc.returncode, out or ""

    def shutdown(self):
        if not self.owned or server_pid() is None:
            return
        # Its own session: a Ctrl-C at the terminal now must not cut it short.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            subprocess.run(self.cmd + ["shutdown"], cwd=ROOT, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            signal.signal(signal.SIGINT, old)

    def __exit__(self, *exc):
        self.shutdown()
        return False


# --------------------------------------------------------------------------- labs

def _lab_arg(labs, key):
    lab = find_lab(labs, key) if key is not None else None
    if lab is None:
        _err("lab: there is no lab %r; the labs are %d to %d (./lab status lists them)"
             % (key, labs[0].number, labs[-1].number))
    return lab


def _sha256_file(path):
    try:
        with open(path, "rb") as f:
            return sha256(f.read())
    except OSError:
        return None


def is_stub(lab, root=ROOT):
    """True while the learner file is the untouched stub, recognised by its
    content (the registry's stub_sha256), not by git history. A missing file is
    not the stub (the build will say it is missing)."""
    try:
        with open(os.path.join(root, lab.learner_file), "rb") as f:
            return lab.is_stub(f.read())
    except OSError:
        return False


def is_started(lab, root=ROOT):
    if not lab.stub_sha256:
        # No hash recorded: fall back on the stub's own words.
        try:
            with open(os.path.join(root, lab.learner_file), errors="replace") as f:
                return NOT_IMPLEMENTED not in f.read()
        except OSError:
            return True
    return not is_stub(lab, root)


# --------------------------------------------------------------------------- compiler output

def relevant_warnings(warnings, source_text):
    """The warnings worth a learner's attention: an unused parameter of a
    function that still throws "is not implemented yet" is the stub's, not a
    slip, and is left out."""
    lines = source_text.splitlines()
    out = []
    for w in warnings:
        m = re.match(r"^[^:]+:(\d+): warning: unused parameter", w)
        if m:
            body = []
            for line in lines[int(m.group(1)) - 1:]:
                body.append(line)
                if line.startswith("}"):
                    break
            if NOT_IMPLEMENTED in "\n".join(body):
                continue
        out.append(w)
    return out


def _load_json(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_json(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass   # remembering is a convenience, never a reason to fail


def _digests(labs, root=ROOT):
    """{learner file: sha256 of its current content, None if unreadable}."""
    return {lab.learner_file: _sha256_file(os.path.join(root, lab.learner_file))
            for lab in labs}


def _note_warnings(state, output, labs, digests):
    """Updates the warnings cache `state` with what this output shows."""
    files = {lab.learner_file for lab in labs}
    seen = messages.warnings_in(output, files)
    compiled = set(seen)
    for line in output.splitlines():
        for f in files:
            if f in line and ("Compiling " + f) in line:
                compiled.add(f)
    for f in compiled:
        state[f] = {"sha256": digests[f], "warnings": seen.get(f, [])}


def remember_warnings(output, labs, state_path=WARNINGS_STATE, root=ROOT):
    """Keeps the warnings this output shows for each learner file, keyed by the
    file's content; returns {file: [warnings]} for the current contents."""
    digests = _digests(labs, root)
    state = _load_json(state_path)
    _note_warnings(state, output, labs, digests)
    _save_json(state_path, state)
    return _known(state, labs, digests)


def syntax_only_command(arguments, source):
    """Bazel's compile command for `source` (its argument list, from aquery)
    turned into a check that writes nothing: -fsyntax-only instead of -c, no
    object or dependency file."""
    out, skip = [], False
    for a in arguments:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF"):
            skip = True
            continue
        if a in ("-MD", "-MMD"):
            continue
        out.append("-fsyntax-only" if a == "-c" else a)
    return out if source in out else None


def recheck_warnings(labs, bazel, state_path=WARNINGS_STATE, root=ROOT, state=None,
                     digests=None):
    """Bazel prints a file's warnings only when it compiles it. For the learner
    files of `labs` whose current content has no entry in the warnings cache
    (compiled by your own `bazel test`, say), run the compiler again, exactly as
    Bazel does (bazel aquery) but with -fsyntax-only, and remember what it says.
    Given the cache already read as `state` (and the files' `digests`), it
    updates that dict rather than reading the file again."""
    if state is None:
        state = _load_json(state_path)
    if digests is None:
        digests = _digests(labs, root)
    todo = [lab for lab in labs
            if (state.get(lab.learner_file) or {}).get("sha256") != digests[lab.learner_file]]
    if not todo:
        return
    query = "mnemonic('CppCompile', set(%s))" % " ".join(
        "//labs/%s:%s" % (lab.dir, lab.target) for lab in todo)
    rc, out = bazel.run(["aquery", "--color=no", "--output=jsonproto", query], stdout_only=True)
    irc, execroot = bazel.run(["info", "execution_root"], stdout_only=True)
    if rc != 0 or irc != 0:
        return
    try:
        actions = json.loads(out).get("actions", [])
    except ValueError:
        return
    execroot = execroot.strip()
    for lab in todo:
        for action in actions:
            cmd = syntax_only_command(action.get("arguments", []), lab.learner_file)
            if not cmd:
                continue
            try:
                p = subprocess.run(cmd, cwd=execroot, stdin=subprocess.DEVNULL,
                                   env=dict(os.environ, LC_ALL="C"),   # Bazel's plain quotes
                                   capture_output=True, text=True, errors="replace", timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                break
            if p.returncode == 0:   # a file that does not compile: Bazel said it all
                state[lab.learner_file] = {
                    "sha256": digests[lab.learner_file],
                    "warnings": messages.warnings_in(p.stderr, {lab.learner_file}).get(
                        lab.learner_file, [])}
            break
    _save_json(state_path, state)


def _known(state, labs, digests):
    out = {}
    for lab in labs:
        entry = state.get(lab.learner_file)
        if isinstance(entry, dict) and entry.get("warnings") and \
                entry.get("sha256") == digests[lab.learner_file]:
            out[lab.learner_file] = list(entry["warnings"])
    return out


def known_warnings(labs, state_path=WARNINGS_STATE, root=ROOT):
    return _known(_load_json(state_path), labs, _digests(labs, root))


# --------------------------------------------------------------------------- test results

_RESULT_RE = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED TO BUILD|FAILED|NO STATUS|"
                        r"TIMEOUT|FLAKY|INCOMPLETE|SKIPPED|REMOTE FAILURE|BUILD FAILURE)\b")


def parse_summary(output):
    """{test target: status} from Bazel's test summary."""
    out = {}
    for line in output.splitlines():
        m = _RESULT_RE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def parse_test_xml(text, keep_skipped=False):
    """[(case name, failure text or None)] of a test.xml (GoogleTest's, or the
    one Bazel writes for a test that wrote none: one case named after the target).
    A case that did not run (disabled, skipped) is left out, or with
    keep_skipped kept as not failing (the kit's check: nothing may pass on a stub)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return []
    cases = []
    for tc in root.iter("testcase"):
        if not keep_skipped and (tc.get("status", "run") != "run" or
                                 tc.find("skipped") is not None):
            continue
        name = tc.get("name", "?")
        if tc.get("classname"):
            name = "%s.%s" % (tc.get("classname"), name)
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        if bad is None:
            cases.append((name, None))
        else:
            cases.append((name, (bad.text or "").strip() or bad.get("message", "failed")))
    return cases


def count_tests(source_text):
    """How many TEST/TEST_F cases a GoogleTest file declares, counting the
    cases a macro of the file declares each time it is used."""
    per_macro = {}
    outside = []
    lines = source_text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*#\s*define\s+(\w+)\s*\(", lines[i])
        if m:
            body = [lines[i]]
            while body[-1].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                body.append(lines[i])
            per_macro[m.group(1)] = len(re.findall(r"\bTEST(?:_F)?\s*\(", "\n".join(body)))
        else:
            outside.append(lines[i])
        i += 1
    n = 0
    for line in outside:
        if re.match(r"^\s*TEST(?:_F)?\s*\(", line):
            n += 1
            continue
        m = re.match(r"^\s*(\w+)\s*\(", line)
        if m and per_macro.get(m.group(1)):
            n += per_macro[m.group(1)]
    return n


_SIGNALS = {
    6: "SIGABRT: an assertion, or an exception thrown where none may be?",
    8: "SIGFPE: an integer division by zero?",
    9: "SIGKILL: out of memory, or stopped?",
    11: "SIGSEGV: an index out of range, or a dangling reference?",
}


def exit_signal(message):
    """The signal a test program died of, from Bazel's "exited with error code N"."""
    m = re.search(r"exited with error code (\d+)", message or "")
    if m and int(m.group(1)) > 128:
        return int(m.group(1)) - 128
    return None


def parse_gtest_log(log_text):
    """([(case, failure text or None)], the case running when the program died
    or None) from a GoogleTest log: what a test.xml would have said, for a test
    program that crashed before writing one."""
    cases, running, body = [], None, []
    for line in log_text.splitlines():
        m = re.match(r"^\[ RUN      \] (\S+)", line)
        if m:
            running, body = m.group(1), []
            continue
        m = re.match(r"^\[ +(OK|FAILED) +\] (\S+)", line)
        if m and running == m.group(2):
            cases.append((running, None if m.group(1) == "OK" else "\n".join(body)))
            running = None
            continue
        if running:
            body.append(line)
    return cases, running


def crash_note(case, signum):
    what = _SIGNALS.get(signum, "signal %d" % signum if signum else "it exited early")
    return "%s crashed the test program (%s)" % (case or "a test", what)


def _script_message(log_text):
    """The line a test script (sh_test) failed with."""
    lines = [l.strip() for l in log_text.splitlines() if l.strip()]
    for l in lines:
        if NOT_IMPLEMENTED in l:
            return messages.printable(l, 300)
    for l in reversed(lines):
        if l.startswith("FAILED"):
            return messages.printable(l, 300)
    return messages.printable(lines[-1], 300) if lines else "failed"


class LabResult:
    """What one lab's public tests said."""

    def __init__(self, lab):
        self.lab = lab
        self.passed = 0
        self.total = 0
        self.first = ""            # the first failure, one line
        self.error = ""            # does not compile / link, or Bazel's complaint
        self.all_pass = False
        self.warnings = []
        self.notes = []            # a crash, when there was one besides the first failure

    @property
    def detail(self):
        if self.error:
            return self.error
        return self.first


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _generated_message(logdir):
    """The message of the test.xml Bazel wrote for a program that wrote none."""
    cases = parse_test_xml(_read(os.path.join(logdir, "test.xml")) or "")
    return cases[0][1] if len(cases) == 1 and cases[0][1] else ""


def _source_count(target):
    pkg, name = target[2:].split(":", 1)
    text = _read(os.path.join(ROOT, pkg, name + ".cc"))
    return count_tests(text) if text else 1


# Bazel's time limit of a test, in seconds, by its size or timeout attribute.
_SIZE_LIMITS = {"small": 60, "medium": 300, "large": 900, "enormous": 3600}
_TIMEOUT_LIMITS = {"short": 60, "moderate": 300, "long": 900, "eternal": 3600}
# Macros whose size defaults to "small" (common/lab.bzl); Bazel's own rules
# default to "medium".
_SMALL_BY_DEFAULT = ("lab_test", "graded_test")


def time_limit(target, root=ROOT):
    """The seconds Bazel gives `target` ("//pkg:name") before it calls it
    TIMEOUT, read from the package's BUILD file (None when it cannot tell)."""
    pkg, name = target[2:].split(":", 1)
    text = _read(os.path.join(root, pkg, "BUILD")) or ""
    for m in re.finditer(r"^(\w+)\(\n(.*?)^\)", text, re.M | re.S):
        body = m.group(2)
        if not re.search(r'^\s*name\s*=\s*"%s"' % re.escape(name), body, re.M):
            continue
        tm = re.search(r'^\s*timeout\s*=\s*"(\w+)"', body, re.M)
        if tm:
            return _TIMEOUT_LIMITS.get(tm.group(1))
        sm = re.search(r'^\s*size\s*=\s*"(\w+)"', body, re.M)
        size = sm.group(1) if sm else ("small" if m.group(1) in _SMALL_BY_DEFAULT else "medium")
        return _SIZE_LIMITS.get(size)
    # lab_test() and graded_test() name their test after the lab's target
    # (<target>_public_test, <target>_test: common/lab.bzl), not in BUILD.
    macro = "lab_test" if name.endswith("_public_test") else "graded_test"
    m = re.search(r"^%s\((.*?)\)\n" % macro, text + "\n", re.M | re.S)
    if m and not re.search(r'^\s*name\s*=', m.group(1), re.M):
        sm = re.search(r'\bsize\s*=\s*"(\w+)"', m.group(1))
        return _SIZE_LIMITS.get(sm.group(1) if sm else "small")
    # lab_program(name = P) declares the small tests P_quick_test, P_flags_test
    # and the keys of its more_quick_tests.
    program = re.sub(r"_(quick|flags)_test$", "", name)
    if re.search(r'^\s*"%s"\s*:' % re.escape(name), text, re.M) or (
            program != name and re.search(r'^lab_program\(\s*name = "%s"' % re.escape(program),
                                          text, re.M)):
        return _SIZE_LIMITS["small"]
    return None


def timeout_message(target, root=ROOT):
    """What ./lab status says of a test that Bazel stopped at its time limit:
    the limit, and that working code can be too slow (a form the lesson calls
    correct but slow, lab 2's broadcasting attention_batched above all) as
    well as stuck in a loop."""
    name = target.split(":", 1)[1]
    limit = time_limit(target, root)
    took = "ran past its %d s limit" % limit if limit else "ran past its time limit"
    return ("%s %s: your code may be too slow rather than wrong (lab 2's broadcasting "
            "attention_batched, about 70x slower than one matrix product per head, is too slow "
            "for lab 10's training runs: see 'Fast enough for the later labs' in "
            "docs/02_batched_attention.md), or a loop never ends" % (name, took))


class _TargetResult:
    def __init__(self, name):
        self.name = name
        self.passed = self.total = 0
        self.first = ""
        self.notes = []
        self.built = True


def target_result(target, status, testlogs):
    """What one test target said: cases passed and run, its first failure."""
    pkg, name = target[2:].split(":", 1)
    t = _TargetResult(name)
    logdir = os.path.join(testlogs or "", pkg, name)
    if status == "TIMEOUT":
        t.total = _source_count(target)
        t.first = timeout_message(target)
        return t
    if status not in ("PASSED", "FLAKY", "FAILED"):   # FAILED TO BUILD, NO STATUS, ...
        t.total = _source_count(target)
        t.built = False
        t.first = "%s: %s" % (name, status.lower())
        return t
    cases = parse_test_xml(_read(os.path.join(logdir, "test.xml")) or "")
    generated = len(cases) == 1 and cases[0][0] == "%s/%s" % (pkg, name)
    if status == "FAILED" and (generated or not cases):
        log = _read(os.path.join(logdir, "test.log")) or ""
        if "[==========]" not in log and "[ RUN      ]" not in log:
            t.total = 1                                   # a script, not GoogleTest
            t.first = "%s: %s" % (name, _script_message(log))
            return t
        cases, running = parse_gtest_log(log)
        t.total = max(_source_count(target), len(cases) + bool(running))
        t.passed = sum(1 for _, f in cases if f is None)
        for case, failure in cases:
            if failure is not None and not t.first:
                t.first = "%s: %s" % (case, messages.summarise_failure(failure))
        note = crash_note(running, exit_signal(_generated_message(logdir)))
        if t.first:
            t.notes.append(note)
        else:
            t.first = note
        return t
    if not cases:
        cases = [(name, None if status != "FAILED" else "failed")]
    t.total = len(cases)
    t.passed = sum(1 for _, f in cases if f is None)
    for case, failure in cases:
        if failure is not None and not t.first:
            t.first = "%s: %s" % (case, messages.summarise_failure(failure))
    return t


def lab_results(labs, output, rc, testlogs, all_labs=None):
    """{lab number: LabResult} from one `bazel test` over the labs' packages.
    The score (passed/total) counts the lab's own public tests
    (//labs/NN_name:<target>_public_test); the package's other tests (lab 8's
    configurator, lab 10's program runs) must pass too for the lab to pass,
    and the first failure names them once the public tests pass."""
    summary = parse_summary(output)
    all_files = [l.learner_file for l in (all_labs or load_labs())]

    def build_error(lab):
        err = messages.first_error(output, lab.learner_file, all_files)
        if err:
            return "does not compile: " + err
        return (messages.linker_complaint(output) or _bazel_complaint(output) or
                "Bazel failed (exit %d)" % rc)

    results = {}
    for lab in labs:
        r = LabResult(lab)
        results[lab.number] = r
        prefix = "//labs/%s:" % lab.dir
        mine = sorted((t, s) for t, s in summary.items() if t.startswith(prefix))
        if not mine:
            r.error = build_error(lab)
            continue
        r.all_pass = all(s in ("PASSED", "FLAKY") for _, s in mine)
        main_target = "//labs/%s:%s_public_test" % (lab.dir, lab.target)
        scored = [(t, s) for t, s in mine if t == main_target] or mine
        others = [(t, s) for t, s in mine if (t, s) not in scored]
        for target, status in scored + others:
            t = target_result(target, status, testlogs)
            if (target, status) in scored:
                r.passed += t.passed
                r.total += t.total
            if not t.built and not r.error:
                r.error = build_error(lab)
            if t.first and not r.first:
                r.first = t.first
                r.notes += t.notes
    return results


def _bazel_complaint(output):
    for line in output.splitlines():
        if line.startswith("ERROR:") and "Build did NOT complete" not in line and \
                "build interrupted" not in line:
            text = re.sub(r"^ERROR: (/\S+: )?", "", line)
            return messages.printable(messages.clean_paths(text, [ROOT + "/"]), 300)
    return ""


_TEST_FLAGS = ["--keep_going", "--color=no", "--curses=no", "--test_summary=short"]


def run_public_tests(labs, bazel, test_output="summary"):
    """Runs the public tests of `labs` in ONE `bazel test --keep_going`.
    Returns ({lab number: LabResult}, exit status, Bazel's output)."""
    if not labs:
        return {}, 0, ""
    rc, out = bazel.run(["test"] + _TEST_FLAGS + ["--test_output=" + test_output] +
                        [lab.public_tests for lab in labs])
    testlogs = None
    if any(s in ("FAILED", "PASSED", "FLAKY") for s in parse_summary(out).values()):
        irc, info = bazel.run(["info", "--color=no", "bazel-testlogs"])
        testlogs = info.strip().splitlines()[-1] if irc == 0 and info.strip() else None
    all_labs = load_labs()
    results = lab_results(labs, out, rc, testlogs, all_labs)
    # The warnings cache is read once and each learner file hashed once.
    digests = _digests(all_labs)
    state = _load_json(WARNINGS_STATE)
    _note_warnings(state, out, all_labs, digests)
    _save_json(WARNINGS_STATE, state)
    recheck_warnings([r.lab for r in results.values() if not r.error], bazel,
                     WARNINGS_STATE, state=state, digests=digests)
    warned = _known(state, all_labs, digests)
    brc, bin_dir = bazel.run(["info", "--color=no", "bazel-bin"], stdout_only=True)
    bin_dir = bin_dir.strip().splitlines()[-1] if brc == 0 and bin_dir.strip() else ""
    for r in results.values():
        r.warnings = relevant_warnings(warned.get(r.lab.learner_file, []),
                                       _read(os.path.join(ROOT, r.lab.learner_file)) or "")
        if bin_dir and not r.error:
            r.warnings = surface_warnings(r.lab, all_labs, bin_dir) + r.warnings
    return results, rc, out


def _objects(bin_dir, lab):
    d = os.path.join(bin_dir, "labs", lab.dir, "_objs", lab.target)
    try:
        return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".o")]
    except OSError:
        return []


def _nm(args):
    try:
        p = subprocess.run(["nm"] + args, capture_output=True, text=True, errors="replace",
                           timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout if p.returncode == 0 else ""


def surface_warnings(lab, labs, bin_dir, root=ROOT):
    """Your file calls an earlier lab outside its call surface (labs/labs.json
    "calls"): what grading will reject, read from the object Bazel built."""
    import surface
    objs = _objects(bin_dir, lab)
    if not objs or lab.calls is None:
        return []
    undefined = surface.undefined_names(_nm(["-u", "-C"] + objs[:1]))
    owner = {}
    for e in builds_on(lab, labs, root):
        for line in _nm(["--defined-only", "-C"] + _objects(bin_dir, e)[:1]).splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[1] in "TW" and parts[2].startswith("mha::"):
                owner.setdefault(surface.qualified(parts[2]), e)
    out = []
    for name in dict.fromkeys(undefined):
        if name in owner and name not in lab.calls:
            out.append("warning: " + surface.reason(lab, name, owner[name]) +
                       "; grading will reject this file")
    return out


# --------------------------------------------------------------------------- status

def builds_on(lab, labs, root=ROOT):
    """The earlier labs whose code `bazel test //labs/NN_name/...` compiles, read
    from the lab's BUILD file (transitively)."""
    by_dir = {l.dir: l for l in labs}
    seen, todo = set(), [lab.dir]
    while todo:
        d = todo.pop()
        text = _read(os.path.join(root, "labs", d, "BUILD")) or ""
        for dep in re.findall(r'"//labs/([^:"/]+)[:"]', text):
            if dep != lab.dir and dep in by_dir and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted((by_dir[d] for d in seen), key=lambda l: l.number)


def lab_states(labs, bazel):
    """[(lab, state, LabResult or None)], state "not started", "failing" or "passing"."""
    started = [lab for lab in labs if is_started(lab)]
    results, _, _ = run_public_tests(started, bazel)
    states = []
    for lab in labs:
        if lab not in started:
            states.append((lab, "not started", None))
        else:
            r = results[lab.number]
            states.append((lab, "passing" if r.all_pass else "failing", r))
    return states


def next_lab(states):
    for lab, state, _ in states:
        if state != "passing":
            return lab
    return None


def _count(r):
    return "%d/%d public tests pass" % (r.passed, r.total) if r.total else ""


def status_lines(states, labs, width=WIDTH):
    """The text of ./lab status (without the "next:" line)."""
    state_of = {lab.number: state for lab, state, _ in states}
    tw = max(len(lab.title) for lab in labs)
    lines = []
    for lab, state, r in states:
        head = "lab %-2d  %-*s  %s" % (lab.number, tw, lab.title, state)
        if r is not None and state == "failing" and _count(r) and not r.error:
            head += ": " + _count(r)
        lines.append(head.rstrip())
        indent = " " * 8
        if r is not None and state == "passing":
            for w in r.warnings[:1]:
                lines += textwrap.wrap(w, width=width, initial_indent=indent,
                                       subsequent_indent=indent + "  ",
                                       break_on_hyphens=False, break_long_words=False)
            continue
        if r is None:
            continue
        behind = ["lab %d (%s)" % (d.number, state_of[d.number]) for d in builds_on(lab, labs)
                  if state_of.get(d.number) != "passing"]
        detail = r.detail
        if detail and not r.error:
            detail = "first failure: " + detail
        if behind:
            detail = "builds on %s; %s" % (", ".join(behind), detail)
        for text in [detail] + r.notes + r.warnings[:1]:
            if text:
                lines += textwrap.wrap(text, width=width, initial_indent=indent,
                                       subsequent_indent=indent + "  ",
                                       break_on_hyphens=False, break_long_words=False)
        if len(r.warnings) > 1:
            lines.append(indent + "(%d more warnings about %s)" % (len(r.warnings) - 1,
                                                                   lab.learner_file))
    return lines


def _next_line(lab):
    return "next: lab %d \u2014 %s \u2014 bazel test %s" % (lab.number, lab.title,
                                                          lab.public_tests)


def cmd_status(args):
    labs = load_labs()
    started = [lab for lab in labs if is_started(lab)]
    if started:
        _err("running the public tests of lab%s %s (the first build takes a few minutes)..."
             % ("s" if len(started) > 1 else "", ", ".join(str(l.number) for l in started)))
    with Bazel() as bz:
        states = lab_states(labs, bz)
    for line in status_lines(states, labs):
        print(line)
    nxt = next_lab(states)
    print()
    if nxt is None:
        print("every lab passes its public tests; ./lab grade shows the provisional scoreboard.")
    else:
        print(_next_line(nxt))
    return OK


# --------------------------------------------------------------------------- grade (kit)

def scoreboard_lines(rows, width=WIDTH):
    """The provisional scoreboard: rows are (lab, passed, total, message)."""
    tw = max([len(lab.title) for lab, _, _, _ in rows] + [5])
    lines = ["Provisional scoreboard: the public tests only. It is not your grade: your",
             "instructor grades with hidden tests that check more (other shapes and seeds,",
             "bad arguments, numbers compared with PyTorch), and those decide the grade.",
             ""]
    passed = total = full = 0
    for lab, p, t, msg in rows:
        passed += p
        total += t
        full += bool(t) and p == t
        score = "%d/%d" % (p, t)
        head = "lab %-2d  %-*s  %7s" % (lab.number, tw, lab.title, score)
        if t and p == t:
            lines.append(head + "  pass")
            continue
        if not msg:
            lines.append(head)
            continue
        if len(head) + 2 + len(msg) <= width:
            lines.append(head + "  " + msg)
        else:
            lines.append(head)
            lines += textwrap.wrap(msg, width=width, initial_indent=" " * 8,
                                   subsequent_indent=" " * 10, break_on_hyphens=False,
                                   break_long_words=False)
    lines.append("")
    lines += textwrap.wrap("public tests: %d/%d pass; %d of %d labs pass all of theirs. "
                           "Provisional: your instructor's hidden tests decide the grade."
                           % (passed, total, full, len(rows)), width=width)
    return lines


def cmd_provisional_grade(args):
    """./lab grade where the hidden tests are absent (the learner's kit)."""
    for opt in ("submission", "roster", "solutions", "csv", "gradescope", "prepare", "cumulative",
                "json", "out"):
        if getattr(args, opt, None):
            _err("lab: this copy has no hidden tests or solutions, so it can only show the "
                 "provisional scoreboard of its own labs: run ./lab grade with no arguments "
                 "(instructors grade submissions in their repository)")
            return USAGE
    labs = load_labs()
    _err("running the public tests of every lab (the first build takes a few minutes)...")
    with Bazel() as bz:
        results, rc, out = run_public_tests(labs, bz)
    if not any(r.total for r in results.values()) and rc not in (0, 3):
        _err("lab grade: Bazel could not run the tests (exit %d): %s"
             % (rc, _bazel_complaint(out) or "see `bazel test //labs/...`"))
        return FAILED
    rows = []
    for lab in labs:
        r = results[lab.number]
        msg = r.detail
        if not is_started(lab) and not r.passed:
            msg = "not started"
        rows.append((lab, r.passed if not r.error else 0, r.total, msg))
    for line in scoreboard_lines(rows):
        print(line)
    return OK


# --------------------------------------------------------------------------- watch

_NOISE = re.compile(r"^(Loading:|Analyzing:|\[[\d,]+ / [\d,]+\] |Starting local Bazel server|"
                    r"\s+currently loading|\s+Fetching |"
                    r"INFO: (Invocation ID|Analyzed|Found|Elapsed time|"
                    r"\d+ process|Build completed|Streaming build results|Current date)|"
                    r"Use --sandbox_debug|Target //|\s+bazel-bin/|Executed \d+ out of|"
                    r"There were tests whose specified size)")


def _watch_report(lab, result, rc, out, max_lines=60):
    """What watch prints after a run: the one-line error first, then Bazel's
    output (trimmed), then where things stand."""
    stamp = time.strftime("%H:%M:%S")
    if result.error:
        print(result.error if result.error.startswith("does not") else
              "error: " + result.error)
        for w in result.warnings[:1]:
            print(w)
        print("---- Bazel's output ----")
    lines = [l for l in out.splitlines() if l.strip() and not _NOISE.match(l)]
    for l in lines[:max_lines]:
        print(l)
    if len(lines) > max_lines:
        print("... %d more lines: bazel test %s shows them all" % (len(lines) - max_lines,
                                                                 lab.public_tests))
    if rc == 0 and result.all_pass:
        print("[%s] lab %d passes its public tests. Next: ./lab status; ./lab grade shows the "
              "provisional scoreboard." % (stamp, lab.number), flush=True)
        return
    if result.error:
        text = "[%s] lab %d %s" % (stamp, lab.number, result.error)
    else:
        text = "[%s] lab %d: %s; first failure: %s" % (stamp, lab.number, _count(result) or
                                                       "failing", result.first or "see above")
    for line in [text] + result.notes + result.warnings[:1]:
        print(textwrap.fill(line, width=WIDTH, subsequent_indent="    ",
                            break_on_hyphens=False, break_long_words=False))
    print("Save %s to run again; Ctrl-C stops." % lab.learner_file, flush=True)


def _run_tests_once(lab, bz):
    print("\n[%s] bazel test %s ..." % (time.strftime("%H:%M:%S"), lab.public_tests), flush=True)
    results, rc, out = run_public_tests([lab], bz, test_output="errors")
    _watch_report(lab, results[lab.number], rc, out)
    return rc


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
            raise RuntimeError("inotifywait stopped (exit %s)" % proc.poll())
        if line.strip() == name:
            hit = True
            if stop_on_hit:
                return hit


class _Stop(Exception):
    pass


def _on_signal(signum, frame):
    raise _Stop(signal.Signals(signum).name)


def cmd_watch(args):
    labs = load_labs()
    if shutil.which("inotifywait") is None:
        _err("lab watch: inotifywait is not installed; tools/setup.sh installs it "
             "(Debian's inotify-tools). Meanwhile: bazel test //labs/NN_name/...")
        return FAILED
    lab = None
    if args.lab is not None:
        lab = _lab_arg(labs, args.lab)
        if lab is None:
            return USAGE
    # Closing the terminal or `kill` ends the watch as Ctrl-C does: cleanly.
    # (SIGINT too, even where the shell that started us told it to ignore it.)
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    proc = None
    try:
        with Bazel() as bz:
            try:
                if lab is None:
                    _err("finding the first lab that does not pass yet...")
                    lab = next_lab(lab_states(labs, bz))
                    if lab is None:
                        print("every lab passes its public tests; ./lab watch N watches lab N")
                        return OK
                directory = os.path.join(ROOT, "labs", lab.dir)
                name = os.path.basename(lab.learner_file)
                print("watching %s (lab %d \u2014 %s); Ctrl-C stops"
                      % (lab.learner_file, lab.number, lab.title), flush=True)
                # The folder, not the file: editors often save by writing a new
                # file and renaming it over the old one, which ends a watch on the file.
                proc = subprocess.Popen(["inotifywait", "-q", "-m", "-e",
                                         "close_write,moved_to,create", "--format", "%f",
                                         directory], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True,
                                        start_new_session=True)
                _run_tests_once(lab, bz)
                while True:
                    if _drain(proc, name, 3600, stop_on_hit=True):
                        _drain(proc, name, 0.3)   # one run for a burst of writes
                        _run_tests_once(lab, bz)
            except (KeyboardInterrupt, _Stop):
                print("\nwatch: stopped", flush=True)
                return OK
            except RuntimeError as e:
                _err("lab watch: %s" % e)
                return FAILED
            finally:
                if proc is not None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=2)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# --------------------------------------------------------------------------- hints

def _load_seen():
    data = _load_json(HINTS_STATE)
    try:
        return {str(k): int(v) for k, v in data.get("seen", {}).items()}
    except (AttributeError, TypeError, ValueError):
        return {}


def _save_seen(seen):
    _save_json(HINTS_STATE, {"seen": seen})


def _print_hint(lab, i):
    print("Hint %d of %d for lab %d (%s):" % (i + 1, len(lab.hints), lab.number, lab.title))
    print(textwrap.fill(lab.hints[i], width=WIDTH, initial_indent="  ", subsequent_indent="  "))


def cmd_hint(args):
    labs = load_labs()
    if args.lab is None:
        _err("lab: which lab? ./lab hint N, N from %d to %d" % (labs[0].number, labs[-1].number))
        return USAGE
    lab = _lab_arg(labs, args.lab)
    if lab is None:
        return USAGE
    seen = _load_seen()
    key = lab.nn
    if args.reset:
        seen.pop(key, None)
        _save_seen(seen)
        print("lab %d: hints reset; ./lab hint %d shows the first one again" % (lab.number,
                                                                                lab.number))
        return OK
    if not lab.hints:
        print("lab %d has no hints yet; read docs/%s.md" % (lab.number, lab.dir))
        return OK
    n = len(lab.hints)
    if args.all:
        for i in range(n):
            _print_hint(lab, i)
            print()
        seen[key] = n
        _save_seen(seen)
        return OK
    shown = min(seen.get(key, 0), n)
    if shown >= n:
        _print_hint(lab, n - 1)
        print()
        print("That was the last hint. ./lab hint %d --all shows them all again; "
              "docs/%s.md, \"Classic mistakes\", lists what usually goes wrong."
              % (lab.number, lab.dir))
        return OK
    _print_hint(lab, shown)
    seen[key] = shown + 1
    _save_seen(seen)
    print()
    if shown + 1 < n:
        print("(%d more; run ./lab hint %d again for the next one)" % (n - shown - 1, lab.number))
    else:
        print("(that was the last hint for lab %d)" % lab.number)
    return OK


# --------------------------------------------------------------------------- ./lab in the kit

COMMANDS = [
    ("status", "", "each lab: not started, failing (and why) or passing; which lab is next"),
    ("watch", "[N]", "re-run lab N's public tests every time you save its file (default: the "
     "first lab not passing); Ctrl-C stops"),
    ("hint", "N", "the next hint for lab N, gentle first (--all: every hint; --reset: start "
     "over)"),
    ("grade", "", "a provisional scoreboard from the public tests (your instructor's hidden "
     "tests decide the grade)"),
    ("help", "", "this help"),
]


def help_text(labs):
    lines = ["usage: ./lab COMMAND", "",
             "The learner's commands (labs %d to %d; ./lab COMMAND -h for a command's options):"
             % (labs[0].number, labs[-1].number), ""]
    for name, arg, what in COMMANDS:
        lines += textwrap.wrap(what, width=WIDTH,
                               initial_indent="  %-22s" % ("./lab %s %s" % (name, arg)).strip(),
                               subsequent_indent=" " * 24)
    lines += ["", "By hand: bazel test //labs/%s/... runs lab %d's public tests."
              % (labs[0].dir, labs[0].number),
              "README.md has the loop; docs/NN_name.md each lab's lesson."]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        _err("lab: %s (./lab help lists the commands)" % message)
        sys.exit(USAGE)


def main(argv):
    """./lab in the learner's kit: only the commands that work there."""
    labs = load_labs()
    parser = _Parser(prog="./lab", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("status", help=COMMANDS[0][2]).set_defaults(func=cmd_status)
    w = sub.add_parser("watch", help=COMMANDS[1][2])
    w.add_argument("lab", nargs="?", help="the lab number (%d-%d)"
                   % (labs[0].number, labs[-1].number))
    w.set_defaults(func=cmd_watch)
    h = sub.add_parser("hint", help=COMMANDS[2][2])
    h.add_argument("lab", nargs="?", help="the lab number (%d-%d)"
                   % (labs[0].number, labs[-1].number))
    h.add_argument("--all", action="store_true", help="show every hint for the lab")
    h.add_argument("--reset", action="store_true", help="start the lab's hints over")
    h.set_defaults(func=cmd_hint)
    sub.add_parser("grade", help=COMMANDS[3][2]).set_defaults(func=cmd_provisional_grade)
    sub.add_parser("help", help="this help")
    if not argv or argv[0] in ("help", "-h", "--help"):
        print(help_text(labs))
        return OK
    args = parser.parse_args(argv)
    return args.func(args)
