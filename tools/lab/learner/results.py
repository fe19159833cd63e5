"""What `bazel test` said, read for a learner: the test summary, GoogleTest's
test.xml and log (also of a program that crashed before writing its XML),
time limits, and each lab's score and first failure (LabResult)."""
import os
import re
import xml.etree.ElementTree as ET

import limits
from labs import ROOT, bin_path, load_labs
from learner import i18n
from learner.files import NOT_IMPLEMENTED, read_text
from learner.i18n import N_, _, test_text
from reports import messages

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
    6: N_("SIGABRT: an assertion, or an exception thrown where none may be?"),
    8: N_("SIGFPE: an integer division by zero?"),
    9: N_("SIGKILL: out of memory, or stopped?"),
    11: N_("SIGSEGV: an index out of range, or a dangling reference?"),
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
    if signum in _SIGNALS:
        what = _(_SIGNALS[signum])
    else:
        what = _("signal %d") % signum if signum else _("it exited early")
    return _("%(case)s crashed the test program (%(what)s)") % {"case": case or _("a test"),
                                                                 "what": what}


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

def _generated_message(logdir):
    """The message of the test.xml Bazel wrote for a program that wrote none."""
    cases = parse_test_xml(read_text(os.path.join(logdir, "test.xml")) or "")
    return cases[0][1] if len(cases) == 1 and cases[0][1] else ""


def _source_count(target):
    text = read_text(os.path.join(ROOT, bin_path(target) + ".cc"))
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
    pkg, name = os.path.split(bin_path(target))
    text = read_text(os.path.join(root, pkg, "BUILD")) or ""
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
    took = _("ran past its %d s limit") % limit if limit else _("ran past its time limit")
    return _("%(test)s %(took)s: your code may be too slow rather than wrong (lab 2's "
             "broadcasting attention_batched, about 70x slower than one matrix product per "
             "head, is too slow for lab 10's training runs: see 'Fast enough for the later "
             "labs' in %(lesson)s), or a loop never ends") % {
        "test": name, "took": took, "lesson": i18n.page("docs/02_batched_attention.md")}


class _TargetResult:
    def __init__(self, name):
        self.name = name
        self.passed = self.total = 0
        self.first = ""
        self.notes = []
        self.built = True


def target_result(target, status, testlogs):
    """What one test target said: cases passed and run, its first failure."""
    name = os.path.basename(bin_path(target))
    t = _TargetResult(name)
    logdir = os.path.join(testlogs or "", bin_path(target))
    if status == "TIMEOUT":
        t.total = _source_count(target)
        t.first = timeout_message(target)
        return t
    if status not in ("PASSED", "FLAKY", "FAILED"):   # FAILED TO BUILD, NO STATUS, ...
        t.total = _source_count(target)
        t.built = False
        t.first = "%s: %s" % (name, status.lower())
        return t
    cases = parse_test_xml(read_text(os.path.join(logdir, "test.xml")) or "")
    generated = len(cases) == 1 and cases[0][0] == bin_path(target)
    if status == "FAILED" and (generated or not cases):
        log = read_text(os.path.join(logdir, "test.log")) or ""
        if "[==========]" not in log and "[ RUN      ]" not in log:
            t.total = 1                                   # a script, not GoogleTest
            t.first = "%s: %s" % (name, _script_message(log))
            return t
        cases, running = parse_gtest_log(log)
        t.total = max(_source_count(target), len(cases) + bool(running))
        t.passed = sum(1 for _, f in cases if f is None)
        for case, failure in cases:
            if failure is not None and not t.first:
                t.first = "%s: %s" % (case, messages.summarise_failure(failure, limit=None))
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
            t.first = "%s: %s" % (case, messages.summarise_failure(failure, limit=None))
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
        return (messages.linker_complaint(output) or bazel_complaint(output) or
                _("Bazel failed (exit %d)") % rc)

    results = {}
    for lab in labs:
        r = LabResult(lab)
        results[lab.number] = r
        prefix = lab.package + ":"
        mine = sorted((t, s) for t, s in summary.items() if t.startswith(prefix))
        if not mine:
            r.error = build_error(lab)
            continue
        r.all_pass = all(s in ("PASSED", "FLAKY") for _, s in mine)
        scored = [(t, s) for t, s in mine if t == lab.public_test] or mine
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


def bazel_complaint(output):
    for line in output.splitlines():
        if line.startswith("ERROR:") and "Build did NOT complete" not in line and \
                "build interrupted" not in line:
            text = re.sub(r"^ERROR: (/\S+: )?", "", line)
            return messages.printable(messages.clean_paths(text, [ROOT + "/"]), 300)
    return ""



def shown(text):
    """A failure as the learner reads it: in their language (i18n.test_text),
    then cut to limits.MESSAGE_CHARS. Translated whole first: a sentence cut
    short could not be read back into its values ("75 of 75 elements differ;
    first at ...")."""
    return messages.printable(test_text(text), limits.MESSAGE_CHARS)


def count_text(r):
    """"N/M public tests pass", or "" when the lab ran none."""
    return (_("%(passed)d/%(total)d public tests pass") % {"passed": r.passed, "total": r.total}
            if r.total else "")
