"""./lab export-kit DIR: the learner's copy of the suite.

What goes in (an allow-list): the Bazel workspace files, ./lab and
tools/setup.sh, tools/lab/ (learner commands), common/, labs/ (headers,
BUILD files, public tests, and each learner file as the committed stub),
docs/ (the lessons; not INSTRUCTORS.md), third_party/, and a learner
README.md. What never does: solutions/, tests/ (hidden tests, goldens,
mutants, hostile submissions, the rubric), tools/goldens/ (the generators
compute the hidden goldens), .git, caches. check() verifies the result.
"""
import hashlib
import os
import shutil
import sys

import workspace
from labs import ROOT, load_labs

_TOP = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore", ".gitignore", "lab"]
_DIRS = ["common", "labs", "docs", "third_party", "tools/lab"]
_SKIP_FILES = {"docs/INSTRUCTORS.md"}
_SKIP_DIRS = {"__pycache__"}

README = """# Multi-head attention, from one head to latent attention: the labs

Seven labs, each one C++ file to write. The header next to it says exactly
what each function must do; the lesson in docs/ explains the idea, the maths
and the classic mistakes.

| lab | you write | lesson |
| --- | --- | --- |
{rows}

## Set up (once)

On Debian 12 (bookworm):

    tools/setup.sh          # installs Bazel, a compiler, GoogleTest, xtensor, OpenBLAS

## The loop

    ./lab status            # where you are: each lab not started / failing / passing
    bazel test //labs/01_split_heads/...    # the public tests of lab 1
    ./lab watch 1           # re-run them every time you save the file
    ./lab hint 1            # a hint, when stuck

The first build takes a minute. A failure that says "lab N: X is not
implemented yet" means the stub is still there: that is where you start.

Only `labs/NN_name/<name>.cc` is yours; headers, tests and BUILD files stay
as they are. Your instructor grades the seven `.cc` files with hidden tests
that check more than the public ones (shapes chosen so bugs cannot hide,
bad arguments, numbers compared with PyTorch): make the public tests pass,
then re-read the header and the lesson's "Classic mistakes".
"""


def collect(top, dirs, skip_dirs=(), skip_files=()):
    """{relative path: bytes}: the files `top` and everything under `dirs`
    (no links, caches or .pyc), plus tools/setup.sh, with every learner file
    replaced by its committed stub. Shared by the kit and the Gradescope bundle."""
    labs = load_labs()
    files = {}
    for name in top:
        p = os.path.join(ROOT, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                files[name] = f.read()
    with open(os.path.join(ROOT, "tools", "setup.sh"), "rb") as f:
        files["tools/setup.sh"] = f.read()
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = sorted(x for x in dirnames
                                 if x not in _SKIP_DIRS and x not in skip_dirs
                                 and not x.startswith((".", "bazel-")))
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, ROOT)
                if rel in skip_files or os.path.islink(full) or fn.endswith(".pyc"):
                    continue
                with open(full, "rb") as f:
                    files[rel] = f.read()
    for lab in labs:
        files[lab.learner_file] = workspace.stub_text(lab)
    return files


def kit_files(labs):
    """{relative path: bytes} of the learner's kit."""
    files = collect(_TOP, _DIRS, skip_files=_SKIP_FILES)
    rows = "\n".join("| %d | `%s` | docs/%s.md |" % (lab.number, lab.learner_file, lab.dir)
                     for lab in labs)
    files["README.md"] = README.format(rows=rows).encode()
    return files


_EXECUTABLE = {"lab", "tools/setup.sh"}


def export(dest, labs=None):
    labs = labs or load_labs()
    if os.path.exists(dest) and os.listdir(dest):
        raise FileExistsError("%s exists and is not empty" % dest)
    files = kit_files(labs)
    for rel, data in files.items():
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        if rel in _EXECUTABLE or rel.endswith(".sh"):
            os.chmod(p, 0o755)
    return files


def leaks(dest):
    """Files of the kit that must not be there: [reason]."""
    problems = []
    secret = {}
    for d in ("solutions", "tests"):
        for dirpath, _, filenames in os.walk(os.path.join(ROOT, d)):
            for fn in filenames:
                full = os.path.join(dirpath, fn)
                with open(full, "rb") as f:
                    data = f.read()
                if len(data) >= 64:   # tiny files (an empty BUILD) prove nothing
                    secret[hashlib.sha256(data).hexdigest()] = os.path.relpath(full, ROOT)
    for dirpath, dirnames, filenames in os.walk(dest):
        rel_dir = os.path.relpath(dirpath, dest)
        for d in dirnames:
            r = os.path.normpath(os.path.join(rel_dir, d))
            if r in ("solutions", "tests", "tools/goldens", ".git"):
                problems.append("the kit has %s/" % r)
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            rel = os.path.normpath(os.path.join(rel_dir, fn))
            if rel == "docs/INSTRUCTORS.md" or fn == "rubric.json":
                problems.append("the kit has %s" % rel)
            with open(full, "rb") as f:
                h = hashlib.sha256(f.read()).hexdigest()
            if h in secret:
                problems.append("%s is a copy of %s" % (rel, secret[h]))
    return problems


def cmd_export_kit(args):
    labs = load_labs()
    try:
        files = export(args.dest, labs)
    except FileExistsError as e:
        print("lab: %s" % e, file=sys.stderr)
        return 1
    bad = leaks(args.dest)
    if bad:
        shutil.rmtree(args.dest, ignore_errors=True)
        print("lab: the kit would leak: %s; nothing written" % "; ".join(bad), file=sys.stderr)
        return 1
    print("wrote the learner kit to %s (%d files): labs, common, docs, public tests, README.md "
          "and the set-up; no solutions, hidden tests or goldens." % (args.dest, len(files)))
    return 0
