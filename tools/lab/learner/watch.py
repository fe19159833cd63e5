"""./lab watch [N]: re-run lab N's public tests every time you save its file
(default: the first lab not passing); Ctrl-C, closing the terminal or `kill`
stop it cleanly. It needs inotifywait (Debian's inotify-tools)."""
import os
import re
import select
import shutil
import signal
import subprocess
import time

from labs import ROOT, load_labs
from learner import i18n
from learner.bazel import Bazel
from learner.console import FAILED, OK, USAGE, WIDTH, err, lab_arg, wrap
from learner.i18n import _, test_text
from learner.public_tests import TEST_FLAGS, lab_states, next_lab, remember, run_public_tests
from learner.results import count_text

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
        print(test_text(result.error) if result.error.startswith("does not") else
              _("error: %s") % result.error)
        for w in result.warnings[:1]:
            print(w)
        print(_("---- Bazel's output ----"))
    lines = [l for l in out.splitlines() if l.strip() and not _NOISE.match(l)]
    for l in lines[:max_lines]:
        print(l)
    if len(lines) > max_lines:
        print(_("... %(more)d more lines: bazel test %(target)s shows them all")
              % {"more": len(lines) - max_lines, "target": lab.public_tests})
    if rc == 0 and result.all_pass:
        print(_("[%(time)s] lab %(n)d passes its public tests. Next: ./lab status; ./lab grade "
                "shows the provisional scoreboard.") % {"time": stamp, "n": lab.number},
              flush=True)
        return
    if result.error:
        text = _("[%(time)s] lab %(n)d %(error)s") % {"time": stamp, "n": lab.number,
                                                      "error": test_text(result.error)}
    else:
        text = _("[%(time)s] lab %(n)d: %(count)s; first failure: %(first)s") % {
            "time": stamp, "n": lab.number, "count": count_text(result) or _("failing"),
            "first": test_text(result.first) or _("see above")}
    for line in [text] + result.notes + result.warnings[:1]:
        print("\n".join(wrap(line, WIDTH, later="    ")))
    print(_("Save %s to run again; Ctrl-C stops.") % lab.learner_file, flush=True)


def _run_tests_once(lab, bz):
    print("\n[%s] bazel test %s ..." % (time.strftime("%H:%M:%S"), lab.public_tests), flush=True)
    # The unit tests first: the verdict of a save, in seconds.
    results, rc, out = run_public_tests([lab], bz, test_output="errors", programs=False)
    r = results[lab.number]
    remember([(lab, "passing" if r.all_pass else "failing", r)])
    _watch_report(lab, r, rc, out)
    if rc == 0 and r.all_pass:
        rc = _run_programs(lab, bz)
    return rc


def _run_programs(lab, bz):
    """The second step, once the unit tests pass: the quick runs of the lab's
    programs (tests tagged "program"), which train for seconds. Nothing is
    printed for a lab without programs."""
    rc, out = bz.run(["test"] + TEST_FLAGS + ["--test_output=errors", "--test_tag_filters=program",
                                              lab.public_tests],
                     progress="lab %d: the programs' quick runs" % lab.number, tests=True)
    if rc == 4:      # Bazel: no test matched, the lab has no program
        return 0
    stamp = time.strftime("%H:%M:%S")
    if rc == 0:
        print(_("[%(time)s] lab %(lab)d: its programs' quick runs pass too.")
              % {"time": stamp, "lab": lab.number}, flush=True)
        return 0
    lines = [l for l in out.splitlines() if l.strip() and not _NOISE.match(l)]
    for l in lines[:40]:
        print(l)
    print(_("[%(time)s] lab %(lab)d passes its unit tests, but a program's quick run fails "
            "(above).") % {"time": stamp, "lab": lab.number}, flush=True)
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
        err(_("lab watch: inotifywait is not installed; tools/setup.sh installs it "
              "(Debian's inotify-tools). Meanwhile: bazel test //labs/NN_name/..."))
        return FAILED
    lab = None
    if args.lab is not None:
        lab = lab_arg(labs, args.lab)
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
                    err(_("finding the first lab that does not pass yet..."))
                    lab = next_lab(lab_states(labs, bz))
                    if lab is None:
                        print(_("every lab passes its public tests; ./lab watch N watches "
                                "lab N"))
                        return OK
                directory = os.path.dirname(os.path.join(ROOT, lab.learner_file))
                name = os.path.basename(lab.learner_file)
                print(_("watching %(file)s (lab %(n)d — %(title)s); Ctrl-C stops")
                      % {"file": lab.learner_file, "n": lab.number,
                         "title": i18n.title(lab)},
                      flush=True)
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
                print("\n" + _("watch: stopped"), flush=True)
                return OK
            except RuntimeError as e:
                err("lab watch: %s" % e)
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

