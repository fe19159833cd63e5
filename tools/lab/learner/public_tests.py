"""Running the public tests of some labs in ONE `bazel test`, and where each lab
stands: its LabResult with the compiler's warnings and the calls outside its
call surface, and "not started" / "failing" / "passing"."""
import os
import subprocess
import time

import limits
from labs import ROOT, load_labs, objects_path
from learner import compiler_warnings, files, results
from learner.i18n import _, ngettext
from reports import messages
import surface

TEST_FLAGS = ["--keep_going", "--color=no", "--curses=no", "--test_summary=short"]
# The lab programs' quick runs too (.bazelrc's `test --test_tag_filters=-program`
# keeps them out of the save-and-test loop; status and grade run them).
PROGRAM_FLAGS = ["--test_tag_filters="]


def run_public_tests(labs, bazel, test_output="summary", programs=True):
    """Runs the public tests of `labs` in ONE `bazel test --keep_going`, showing
    its progress. `programs`: with the lab programs' quick runs (tagged
    "program", which .bazelrc leaves out of a plain `bazel test`).
    Returns ({lab number: LabResult}, exit status, Bazel's output)."""
    if not labs:
        return {}, 0, ""
    what = ngettext("bazel test: lab %s", "bazel test: labs %s", len(labs)) % ", ".join(
        str(lab.number) for lab in labs)
    rc, out = bazel.run(["test"] + TEST_FLAGS + ["--test_output=" + test_output] +
                        (PROGRAM_FLAGS if programs else []) +
                        [lab.public_tests for lab in labs], progress=what, tests=True)
    testlogs = None
    if any(s in ("FAILED", "PASSED", "FLAKY") for s in results.parse_summary(out).values()):
        irc, info = bazel.run(["info", "--color=no", "bazel-testlogs"])
        testlogs = info.strip().splitlines()[-1] if irc == 0 and info.strip() else None
    all_labs = load_labs()
    by_lab = results.lab_results(labs, out, rc, testlogs, all_labs)
    # The warnings cache is read once and each learner file hashed once.
    digests = compiler_warnings.digests_of(all_labs)
    state = files.load_json(files.WARNINGS_STATE)
    compiler_warnings.note_warnings(state, out, all_labs, digests)
    files.save_json(files.WARNINGS_STATE, state)
    compiler_warnings.recheck_warnings([r.lab for r in by_lab.values() if not r.error], bazel,
                                       files.WARNINGS_STATE, state=state, digests=digests)
    warned = compiler_warnings.known_in(state, all_labs, digests)
    brc, bin_dir = bazel.run(["info", "--color=no", "bazel-bin"], stdout_only=True)
    bin_dir = bin_dir.strip().splitlines()[-1] if brc == 0 and bin_dir.strip() else ""
    for r in by_lab.values():
        r.warnings = compiler_warnings.relevant_warnings(
            warned.get(r.lab.learner_file, []),
            files.read_text(os.path.join(ROOT, r.lab.learner_file)) or "")
        if bin_dir and not r.error:
            r.warnings = surface_warnings(r.lab, all_labs, bin_dir) + r.warnings
    return by_lab, rc, out


def _objects(bin_dir, lab):
    d = os.path.join(bin_dir, objects_path(lab.library))
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
    objs = _objects(bin_dir, lab)
    if not objs or lab.calls is None:
        return []
    undefined = surface.undefined_names(_nm(["-u", "-C"] + objs[:1]))
    owner = {}
    for e in files.builds_on(lab, labs, root):
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


def remember(states, path=None):
    """Keeps each lab's state, score and first failure in .cache/last_run.json
    (with the time), for the course reader (./lab read): labs run now replace
    their earlier entry, the others keep theirs."""
    path = path or files.LAST_RUN_STATE
    data = files.load_json(path)
    labs = data.get("labs") if isinstance(data.get("labs"), dict) else {}
    now = time.time()
    for lab, state, r in states:
        entry = {"state": state, "time": now}
        if r is not None:
            # The English, whole (test_text() translates it before cutting).
            entry.update(passed=r.passed, total=r.total,
                         detail=messages.printable(r.detail, limits.REPORT_MESSAGE_CHARS),
                         notes=r.notes[:2], warnings=r.warnings[:1])
        labs[str(lab.number)] = entry
    files.save_json(path, {"labs": labs})


def lab_states(labs, bazel):
    """[(lab, state, LabResult or None)], state "not started", "failing" or "passing"."""
    started = [lab for lab in labs if files.is_started(lab)]
    by_lab, _, _ = run_public_tests(started, bazel)
    states = []
    for lab in labs:
        if lab not in started:
            states.append((lab, "not started", None))
        else:
            r = by_lab[lab.number]
            states.append((lab, "passing" if r.all_pass else "failing", r))
    remember(states)
    return states


def next_lab(states):
    for lab, state, _ in states:
        if state != "passing":
            return lab
    return None

