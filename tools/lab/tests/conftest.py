"""pytest set-up for the grader's unit tests: tools/lab on the import path,
and temporary files in memory where the machine offers it (/dev/shm): the
tests write and remove hundreds of small trees, which a container's overlay
disk makes the slowest part of the run. Not where /dev/shm is mounted noexec
(Docker's default): the fakes run the scripts they write. TMPDIR, if set,
wins."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _memory_tmpdir(path="/dev/shm"):
    try:
        flags = os.statvfs(path).f_flag
    except OSError:
        return None
    if flags & (os.ST_NOEXEC | os.ST_RDONLY) or not os.access(path, os.W_OK | os.X_OK):
        return None
    return path


# The learner's commands in English, whatever the caller's language
# (learner/i18n.py): the tests read their English words.
for _name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"

if "TMPDIR" not in os.environ and _memory_tmpdir():
    os.environ["TMPDIR"] = _memory_tmpdir()

import pathlib  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture
def workdir():
    """A fresh temporary directory (pathlib.Path), removed afterwards. Not
    pytest's tmp_path: its shared base under /tmp is cleaned at start-up,
    which fails when another user's run left something odd there."""
    d = tempfile.mkdtemp(prefix="mha-test-")
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)
