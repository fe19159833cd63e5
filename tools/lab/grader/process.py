"""Running one command with a wall-clock deadline and bounded output.

run() starts the command in its own process group, with a clean environment
unless told otherwise, reads its output in chunks (a flood cannot grow the
grader), keeps only the end, and kills the whole group at the deadline.
"""
import collections
import os
import selectors
import signal
import subprocess
import sys
import time

PATH = "/usr/local/bin:/usr/bin:/bin"


def quiet(argv, **kw):
    """True when argv runs and exits 0 within 20 s (its output discarded)."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20, **kw).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# What run() returns: the exit status, the end of stdout+stderr, whether the
# deadline ended it, and its wall-clock seconds.
Result = collections.namedtuple("Result", "returncode output timed_out seconds")


def run(argv, cwd, timeout, keep_output=64 << 10, env=None):
    """Runs argv in its own process group; kills the group at the timeout.
    Keeps the last `keep_output` bytes of stdout+stderr."""
    t0 = time.time()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True,
                         env=env if env is not None else {"PATH": PATH})
    out = bytearray()
    timed_out = False
    try:
        # Read in chunks so a flood of output cannot grow this process.
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        deadline = t0 + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                timed_out = True
                break
            if not sel.select(timeout=min(left, 1.0)):
                if p.poll() is not None:
                    break
                continue
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
            if len(out) > keep_output:
                del out[:len(out) - keep_output]
        sel.close()
    finally:
        if timed_out or p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        p.stdout.close()
    return Result(p.returncode, out.decode("utf-8", "replace"), timed_out, time.time() - t0)



def system_python():
    """Debian's python3 (the jail and the checker use only its standard library)."""
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
