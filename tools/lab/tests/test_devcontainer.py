import os
import pathlib
import tempfile
import subprocess

import pytest

from checks import devcontainer
from labs import ROOT


def _tree(tmp_path, dockerfile):
    d = tmp_path / ".devcontainer"
    d.mkdir()
    (d / "Dockerfile").write_text(dockerfile)
    (d / "devcontainer.json").write_text("{}")
    return str(tmp_path)


def test_the_repository_dockerfile_runs_setup_and_installs_nothing_itself():
    assert devcontainer.problems(ROOT) == []


def test_a_dockerfile_with_its_own_apt_get_install_is_refused(tmp_path):
    root = _tree(tmp_path, "FROM debian:bookworm\nCOPY tools/setup.sh /s\nRUN /s && \\\n"
                           "    apt-get install -y vim\n")
    assert any("installs packages itself" in p for p in devcontainer.problems(root))


def test_a_dockerfile_that_skips_setup_is_refused(tmp_path):
    root = _tree(tmp_path, "FROM debian:bookworm\nRUN true\n")
    found = devcontainer.problems(root)
    assert any("does not run tools/setup.sh" in p for p in found)
    assert any("does not copy tools/setup.sh" in p for p in found)


def test_another_base_image_is_refused(tmp_path):
    root = _tree(tmp_path, "FROM ubuntu:22.04\nCOPY tools/setup.sh /s\nRUN /s\n")
    assert any("FROM debian:bookworm" in p for p in devcontainer.problems(root))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the script as another user")
def test_setup_without_root_prints_the_exact_install_line_and_exits_1():
    # A dpkg-query that says two packages are missing, and a user with no sudo,
    # in a folder that user may enter (pytest's own tmp_path is root's only).
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        _setup_as_nobody(pathlib.Path(d))


def _setup_as_nobody(tmp_path):
    fake = tmp_path / "dpkg-query"
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in git|g++) exit 1;; esac; done\n"
                    "exec /usr/bin/dpkg-query \"$@\"\n")
    fake.chmod(0o755)
    tmp_path.chmod(0o755)
    script = tmp_path / "setup.sh"
    script.write_bytes(open(os.path.join(ROOT, "tools", "setup.sh"), "rb").read())
    script.chmod(0o755)
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "env", "PATH=%s:/usr/bin:/bin" % tmp_path, str(script)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert "apt-get install -y --no-install-recommends g++ git" in p.stderr
    assert "docker build -t mha-labs -f .devcontainer/Dockerfile ." in p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
