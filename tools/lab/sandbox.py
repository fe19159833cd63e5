"""Runs one untrusted test process with limits, outside Bazel's test runner.

The process gets no network, a private /tmp, a private view of the suite in
which the reference solutions are hidden, an address-space limit and a
wall-clock limit. What it prints or exits with is never trusted for points:
the grader reads results from a file it names, and counts every expected
test that is missing there as failed.
"""
import os
import signal
import subprocess

from labs import ROOT

_HIDE = ["solutions"]


class Outcome:
    def __init__(self, returncode, timed_out, timeout_s, stdout, stderr):
        self.returncode = returncode
        self.timed_out = timed_out
        self.timeout_s = timeout_s
        self.stdout = stdout
        self.stderr = stderr

    @property
    def ok(self):
        return not self.timed_out and self.returncode == 0

    def describe(self):
        if self.timed_out:
            return "timed out after %d s" % self.timeout_s
        if self.returncode < 0 or self.returncode > 128:
            sig = -self.returncode if self.returncode < 0 else self.returncode - 128
            if sig == signal.SIGKILL:
                return "killed (memory limit or time limit)"
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = "signal %d" % sig
            detail = _crash_detail(self.stderr)
            return "crashed: %s%s" % (name, detail)
        if "std::bad_alloc" in self.stderr:
            return "killed: memory limit (std::bad_alloc)"
        return "the test process ended early with exit code %d" % self.returncode


def _crash_detail(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("[ RUN      ]")]
    return (" in " + lines[-1][13:].strip()) if lines else ""


def _hidden_paths():
    import workspace
    paths = []
    for base in (ROOT, workspace.WS):
        for d in _HIDE:
            p = os.path.join(base, d)
            if os.path.isdir(p):
                paths.append(p)
    return paths


def run(cmd, cwd, timeout_s, memory_bytes):
    """Runs `cmd` sandboxed. Returns an Outcome; never raises for the child's faults."""
    steps = ["mount --make-rprivate / 2>/dev/null",
             "mount -t tmpfs -o size=64m tmpfs /tmp"]
    for p in _hidden_paths():
        steps.append("mount -t tmpfs -o size=1m,ro tmpfs '%s'" % p)
    steps.append('cd "$0" && ulimit -v %d && exec "$@"' % (memory_bytes // 1024))
    full = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child",
            "sh", "-c", " && ".join(steps), cwd] + list(cmd)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8",
           "OPENBLAS_NUM_THREADS": "1", "GTEST_COLOR": "no"}
    try:
        p = subprocess.run(full, env=env, capture_output=True, text=True,
                           errors="replace", timeout=timeout_s)
        return Outcome(p.returncode, False, timeout_s, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Outcome(-9, True, timeout_s, out, err)
