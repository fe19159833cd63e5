"""The dev container installs what tools/setup.sh installs: one package list.

.devcontainer/Dockerfile must start from Debian 12 (debian:bookworm), run
tools/setup.sh, and install no package of its own, so that the container and a
Debian machine set up by the script never drift apart. The unit tests
(tools/lab/tests/test_devcontainer.py) run this on the repository.
"""
import os
import re

from labs import ROOT

DOCKERFILE = ".devcontainer/Dockerfile"
_INSTALL = re.compile(r"\b(apt-get|apt|aptitude|dpkg)\b[^\n]*\binstall\b|\bdpkg\s+-i\b")


def _instructions(text):
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", text)
    return [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def problems(root=ROOT):
    path = os.path.join(root, DOCKERFILE)
    if not os.path.isfile(path):
        return ["%s is missing" % DOCKERFILE]
    with open(path) as f:
        lines = _instructions(f.read())
    out = []
    if not lines or not re.match(r"^FROM\s+debian:bookworm(\s|$)", lines[0]):
        out.append("%s must start FROM debian:bookworm, not %r" % (
            DOCKERFILE, lines[0] if lines else ""))
    if not any(l.startswith("COPY") and "tools/setup.sh" in l for l in lines):
        out.append("%s does not copy tools/setup.sh into the image" % DOCKERFILE)
    runs = [l for l in lines if l.startswith("RUN")]
    if not any("setup.sh" in l for l in runs):
        out.append("%s does not run tools/setup.sh" % DOCKERFILE)
    for l in runs:
        if _INSTALL.search(l):
            out.append("%s installs packages itself (%r): put them in tools/setup.sh's list"
                       % (DOCKERFILE, l[:80]))
    if not os.path.isfile(os.path.join(root, ".devcontainer", "devcontainer.json")):
        out.append(".devcontainer/devcontainer.json is missing")
    return out
