"""The grading workspace: a private copy of the suite with a submission's files in it.

Grading never builds in the instructor's checkout. It keeps one copy of the
suite under .cache/grade/ws (and one Bazel output base beside it, shared by
every submission graded on this machine), puts the submission's learner
files in place of the stubs, and builds there. Only the seven learner files
change between submissions, so Bazel recompiles only those.
"""
import filecmp
import os
import shutil
import subprocess

from labs import ROOT

CACHE = os.path.join(ROOT, ".cache", "grade")
WS = os.path.join(CACHE, "ws")
OUTPUT_BASE = os.path.join(CACHE, "output_base")
RUNS = os.path.join(CACHE, "runs")  # per-run report directories (outside /tmp)

# What the grading copy needs from the suite. Never a submission's BUILD files.
_SUITE_DIRS = ["common", "labs", "solutions", "tests", "third_party"]
_SUITE_FILES = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore"]


def _copy_if_changed(src, dst):
    if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)
    shutil.copymode(src, dst)


def sync_suite():
    """Mirrors the suite's files into the grading workspace (only changed files)."""
    os.makedirs(WS, exist_ok=True)
    wanted = set()
    for name in _SUITE_FILES:
        if os.path.exists(os.path.join(ROOT, name)):
            wanted.add(name)
    for d in _SUITE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [x for x in dirnames if not x.startswith(("bazel-", "."))]
            for fn in filenames:
                wanted.add(os.path.relpath(os.path.join(dirpath, fn), ROOT))
    for rel in wanted:
        _copy_if_changed(os.path.join(ROOT, rel), os.path.join(WS, rel))
    # Remove files the suite no longer has (a renamed test would linger).
    for d in _SUITE_DIRS:
        for dirpath, _, filenames in os.walk(os.path.join(WS, d)):
            for fn in filenames:
                rel = os.path.relpath(os.path.join(dirpath, fn), WS)
                if rel not in wanted:
                    os.remove(os.path.join(WS, rel))


def stub_text(lab):
    """The untouched stub of a lab: the committed version, else the working tree's."""
    try:
        return subprocess.run(["git", "-C", ROOT, "show", "HEAD:" + lab.learner_file],
                              check=True, capture_output=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
            return f.read()


def place_learner_file(lab, content):
    """Writes `content` (bytes) as the lab's learner file in the grading workspace."""
    dst = os.path.join(WS, lab.learner_file)
    if os.path.exists(dst):
        with open(dst, "rb") as f:
            if f.read() == content:
                return
    with open(dst, "wb") as f:
        f.write(content)


def bazel(args, capture=True, timeout=None):
    """Runs bazel in the grading workspace with its own output base."""
    cmd = ["bazel", "--output_base=" + OUTPUT_BASE] + args
    return subprocess.run(cmd, cwd=WS, capture_output=capture, text=True, timeout=timeout)
