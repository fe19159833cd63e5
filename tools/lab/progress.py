"""Progress of long work: what is being done, n of N, and the time so far.

Every ./lab command that can work for more than a few seconds says so. In a
terminal, one status line is rewritten in place; in a log (stderr is not a
terminal) a plain line is printed at most every LOG_EVERY seconds and never
a carriage return, so a log reads as a list of timestamps:

    [   15 s] grade: building the hidden tests: 312 / 1,204 actions (Compiling ...)
    [   30 s] grade: building the hidden tests: 540 / 1,204 actions (Compiling ...)

run_bazel() runs one Bazel command and turns its output (actions done and to
do, tests finished) into such lines while it works, and returns what Bazel
printed, as subprocess would.
"""
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

def N_(message):
    """Marks a message for the terminal's catalogue (course/catalogues.py):
    the learner's commands pass their translation to run_bazel()
    (learner/bazel.py); the instructors' print it as it is."""
    return message


LOG_EVERY = 15.0        # seconds between two lines in a log
TTY_EVERY = 0.5         # seconds between two redraws in a terminal
# Bazel's own progress, without colours or the curses UI, at most every 2 s
# (these are UI options: changing them keeps Bazel's analysis cache).
BAZEL_UI_FLAGS = ["--color=no", "--curses=no", "--show_progress_rate_limit=2"]

_ACTIONS = re.compile(r"^\[([\d,]+) / ([\d,]+)\]\s*(.*)")
_ANALYZING = re.compile(r"^(?:Analyzing|Loading):.*?(\d[\d,]*) (?:targets|packages)")
_TEST_DONE = re.compile(r"^//\S+\s+(?:\(cached\) )?(PASSED|FAILED|FLAKY|TIMEOUT|NO STATUS)\b")
_FOUND_TESTS = re.compile(r"Found [\d,]+ (?:targets? and )?([\d,]+) test targets?")


def elapsed_text(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return "%4d s" % seconds
    return "%2dm%02ds" % (seconds // 60, seconds % 60)


class Progress:
    """One piece of long work: `p = Progress("kit: building"); p.update(3, 10,
    "Compiling x"); ...; p.done()`. Prints to `stream` (stderr)."""

    def __init__(self, what, stream=None, tty=None, every=None):
        self.what = what
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every = every if every is not None else (TTY_EVERY if self.tty else LOG_EVERY)
        self.t0 = time.time()
        self.last = self.t0   # a log's first line comes after `every` seconds of work
        self.text = ""
        self.width = 0

    def elapsed(self):
        return time.time() - self.t0

    def update(self, text="", force=False):
        """Sets what is being done (`text`, e.g. "312 / 1,204 actions") and prints
        it when the last line is old enough (or `force`)."""
        self.text = text
        self.tick(force)

    def tick(self, force=False):
        """Prints the current state if `every` seconds passed since the last line:
        call it while waiting, so silence never lasts longer."""
        now = time.time()
        if not force and now - self.last < self.every:
            return
        self.last = now
        line = "[%s] %s%s" % (elapsed_text(now - self.t0), self.what,
                              ": " + self.text if self.text else "")
        if self.tty:
            cols = _columns()
            line = line[:cols - 1]
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self, text=None):
        """Ends the work: in a terminal the status line is cleared, or replaced by
        `text`; in a log `text` (if any) is printed as the last line."""
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
        if text:
            self.stream.write("[%s] %s: %s\n" % (elapsed_text(self.elapsed()), self.what, text))
        self.stream.flush()
        self.width = 0


class ticking:
    """`with ticking("grade: staging"):` work that has no count of its own: the
    time so far is shown while it runs (a thread ticks a Progress each second)."""

    def __init__(self, what, text="", stream=None):
        self.progress = Progress(what, stream=stream)
        self.progress.text = text
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(1.0):
            self.progress.tick()

    def __enter__(self):
        self._thread.start()
        return self.progress

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.progress.done()
        return False


def _columns():
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100


_STARTING = N_("starting Bazel")
_LOADING = N_("loading and analysing the build")
_ACTIONS_DONE = N_("%(done)s / %(total)s actions")
_TESTS_DONE = N_("%(done)d tests finished")
_TESTS_OF = N_("%(done)d / %(total)d tests finished")


class BazelProgress:
    """Reads Bazel's output line by line and keeps a Progress up to date;
    `translate` gives its words in the learner's language (what Bazel is
    doing, "Compiling ...", stays Bazel's)."""

    def __init__(self, progress, tests=False, translate=None):
        self.progress = progress
        self.tests = tests
        self.tr = translate or (lambda message: message)
        self.tests_total = None
        self.tests_done = 0
        self.actions = None     # (done, total, what)
        self.phase = self.tr(_STARTING)

    def feed(self, line):
        line = line.rstrip()
        m = _ACTIONS.match(line)
        if m:
            self.actions = (m.group(1), m.group(2), m.group(3))
            self.phase = ""
        elif _ANALYZING.match(line):
            self.phase = self.tr(_LOADING)
        m = _FOUND_TESTS.search(line)
        if m:
            self.tests_total = int(m.group(1).replace(",", ""))
        if _TEST_DONE.match(line):
            self.tests_done += 1
        self.progress.update(self.text())

    def text(self):
        parts = []
        if self.phase:
            parts.append(self.phase)
        if self.actions:
            done, total, what = self.actions
            what = re.sub(r";\s*\d+s.*$", "", what)[:60]
            parts.append(self.tr(_ACTIONS_DONE) % {"done": done, "total": total} +
                         (" (%s)" % what if what else ""))
        if self.tests and (self.tests_done or self.tests_total):
            if self.tests_total:
                parts.append(self.tr(_TESTS_OF) % {"done": self.tests_done,
                                                   "total": self.tests_total})
            else:
                parts.append(self.tr(_TESTS_DONE) % {"done": self.tests_done})
        return ", ".join(parts)


def _reader(stream, tag, q):
    for line in iter(stream.readline, ""):
        q.put((tag, line))
    q.put((tag, None))


def stop_client(proc):
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


def run_bazel(cmd, what, cwd, tests=False, stdout_only=False, env=None, timeout=None,
              stream=None, translate=None):
    """Runs `cmd` (a Bazel command line; BAZEL_UI_FLAGS are the caller's to add)
    and shows its progress as `what` while it works (its words translated by
    `translate`, see BazelProgress). Returns (exit status, output): stdout and
    stderr together, or stdout alone with stdout_only (stderr is then read for
    progress only). A timeout kills it (exit 124)."""
    progress = Progress(what, stream=stream)
    watcher = BazelProgress(progress, tests=tests, translate=translate)
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stdout_only else subprocess.STDOUT,
                                text=True, errors="replace")
    except FileNotFoundError:
        return 127, "%s: command not found; run tools/setup.sh" % cmd[0]
    q = queue.Queue()
    readers = [threading.Thread(target=_reader, args=(proc.stdout, "out", q), daemon=True)]
    if stdout_only:
        readers.append(threading.Thread(target=_reader, args=(proc.stderr, "err", q),
                                        daemon=True))
    for r in readers:
        r.start()
    out = []
    open_streams = len(readers)
    deadline = None if timeout is None else time.time() + timeout
    try:
        while open_streams:
            try:
                tag, line = q.get(timeout=1.0)
            except queue.Empty:
                progress.tick()
                if deadline and time.time() > deadline:
                    proc.kill()
                    proc.wait()
                    progress.done()
                    return 124, "".join(out) + "\n(killed after %d s)" % timeout
                continue
            if line is None:
                open_streams -= 1
                continue
            watcher.feed(line)
            if tag == "out":
                out.append(line)
        proc.wait()
    except KeyboardInterrupt:
        stop_client(proc)
        progress.done()
        raise
    progress.done()
    return proc.returncode, "".join(out)
