"""Bazel for the learner's commands, and its server's lifetime.

A ./lab command that finds no Bazel server running for this folder shuts the
one it started down when it ends (also on Ctrl-C), so no ./lab command leaves
a process behind. One that finds a server running (you ran bazel by hand)
uses it and leaves it running: yours stays warm.
"""
import getpass
import hashlib
import os
import signal
import subprocess

from labs import ROOT
from learner.i18n import _
from progress import BAZEL_UI_FLAGS, run_bazel, stop_client


def startup_options():
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
    startup = startup_options() if startup is None else startup
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


class Bazel:
    """Bazel for one ./lab command: `with Bazel() as bz: bz.run([...])`. If no
    server was running for this folder when the command began, the one it
    started is shut down when the command ends, whatever happens."""

    def __init__(self):
        self.cmd = ["bazel"] + startup_options()
        self.owned = None

    def __enter__(self):
        self.owned = server_pid() is None
        return self

    def run(self, args, capture=True, stdout_only=False, progress=None, tests=False):
        """(exit status, output) of `bazel ARGS`: stdout and stderr together, or
        stdout alone (stderr dropped) with stdout_only. With `progress` (what
        the command does, e.g. "status: testing labs 1-3"), Bazel's progress is
        shown on stderr while it works (tools/lab/progress.py); `tests` counts
        the tests that finished."""
        if progress and capture:
            return run_bazel(self.cmd + args[:1] + BAZEL_UI_FLAGS + args[1:], progress, ROOT,
                             tests=tests, stdout_only=stdout_only, translate=_)
        stderr = subprocess.DEVNULL if stdout_only else subprocess.STDOUT
        try:
            proc = subprocess.Popen(self.cmd + args, cwd=ROOT, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE if capture else None,
                                    stderr=stderr if capture else None,
                                    text=True, errors="replace")
        except FileNotFoundError:
            return 127, _("bazel: command not found; run tools/setup.sh")
        try:
            out = proc.communicate()[0]
        except KeyboardInterrupt:
            stop_client(proc)
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

