"""progress.py: long work says what it does, n of N and the time so far;
plain lines in a log, never a carriage return there."""
import io
import sys

import progress


class _Log(io.StringIO):
    def isatty(self):
        return False


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_plain_timestamped_lines_and_no_carriage_return():
    log = _Log()
    p = progress.Progress("grade: building", stream=log, every=0)
    p.update("3 / 10 actions")
    p.done("built")
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("[") and lines[0].endswith("grade: building: 3 / 10 actions")
    assert lines[-1].endswith("grade: building: built")
    assert "\r" not in log.getvalue()


def test_a_log_line_waits_for_the_interval():
    log = _Log()
    p = progress.Progress("kit", stream=log, every=3600)
    p.update("1 / 2")
    assert log.getvalue() == ""


def test_a_terminal_line_is_redrawn_in_place_and_cleared():
    tty = _Tty()
    p = progress.Progress("status", stream=tty, every=0)
    p.update("1 / 2 actions")
    p.update("2 / 2 actions")
    p.done()
    assert tty.getvalue().count("\r") >= 3 and "\n" not in tty.getvalue()


def test_bazel_lines_become_actions_and_finished_tests():
    log = _Log()
    w = progress.BazelProgress(progress.Progress("t", stream=log, every=3600), tests=True)
    for line in ["Analyzing: 3 targets (10 packages loaded, 0 targets configured)",
                 "INFO: Found 3 targets and 2 test targets...",
                 "[1,204 / 2,310] Compiling labs/01_split_heads/split_heads.cc; 3s linux-sandbox",
                 "//labs/01_split_heads:split_heads_public_test   PASSED in 0.4s"]:
        w.feed(line)
    assert w.text() == ("1,204 / 2,310 actions (Compiling labs/01_split_heads/split_heads.cc), "
                        "1 / 2 tests finished")


def test_run_bazel_ticks_while_the_command_is_silent_and_returns_its_output():
    log = _Log()
    script = "import time; print('[1 / 4] Compiling a.cc', flush=True); time.sleep(2.5); print('done')"
    old = progress.LOG_EVERY
    progress.LOG_EVERY = 1.0
    try:
        rc, out = progress.run_bazel([sys.executable, "-c", script], "work", ".", stream=log)
    finally:
        progress.LOG_EVERY = old
    assert rc == 0 and out.splitlines() == ["[1 / 4] Compiling a.cc", "done"]
    ticks = [l for l in log.getvalue().splitlines() if "work: 1 / 4 actions" in l]
    assert len(ticks) >= 2   # the silence was filled, once a second


def test_ticking_shows_the_time_while_uncounted_work_runs():
    import time
    log = _Log()
    old = progress.LOG_EVERY
    progress.LOG_EVERY = 1.0
    try:
        with progress.ticking("grade: staging", stream=log):
            time.sleep(2.5)
    finally:
        progress.LOG_EVERY = old
    assert log.getvalue().count("grade: staging") >= 2
