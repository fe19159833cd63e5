#!/usr/bin/python3
"""Moves common/ into its four packages and rewrites every reference to it.

    /usr/bin/python3 tools/dev/move_common.py [--check]

common/ holds four kinds of code, one Bazel package each:

    common/core/      linked into a learner's process (tensor, rng, vector_math, shape_string)
    common/testing/   test support (testing, tolerance, misconception)
    common/programs/  support of the lab programs (lab_program, optimizer, chart_spec, ...)
    common/grading/   the grading boundary (remote, test_results, the server's main)

MOVES below is the table: a file's stem (its name without extension) or
target name -> its package. The script

  1. `git mv`s each common/<file> whose stem is in MOVES to common/<package>/
     (common/testdata/ by file: rng_* to core, toy* to grading);
  2. rewrites, in every file git tracks (third_party/ and this script left
     alone), the paths `common/<stem>...` and the labels `//common:<name>` of
     the table to their new package (`tests/common/...` is another folder and
     is never touched);
  3. records the new sha256 of every lab stub it rewrote in labs/labs.json
     (a stub is recognised by its hash).

It is idempotent: a second run finds nothing to move and nothing to rewrite,
so it can be run again after merging work that still names the old paths.
--check only lists what it would change and exits 1 if anything is left.
The new packages' BUILD files are written by hand (common/*/BUILD); the
script does not edit Bazel package contents beyond the labels.
"""
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SELF = os.path.relpath(os.path.abspath(__file__), ROOT)

# stem or target name -> package (common/<package>/).
MOVES = {}
for package, names in {
    "core": """tensor rng rng_test ziggurat_tables shape_string shape_string_test matrix_ref
               vector_math vector_math_test vector_math_kernels vector_math_baseline
               vector_math_avx vector_math_avx2 vector_math_avx512 vector_math_isa_symbols
               vector_math_isolation_test x86_64""",
    "testing": "testing testing_test tolerance misconception",
    "programs": """lab_program lab_program_test optimizer optimizer_test attention_sizes
                   process_memory chart_spec chart_spec_test quick_run_test
                   flag_test_lib""",
    "grading": """remote remote_codec remote_test remote_server_main test_results
                  test_results_test remote_toy_server toy_header toy_client toy_client_helper
                  toy_server_helper""",
}.items():
    for name in names.split():
        MOVES[name] = package

PACKAGES = set(MOVES.values())

# common/testdata/<file>: by the file's name.
TESTDATA = [("rng_", "core"), ("toy", "grading")]

_SKIP_TOPS = ("third_party/",)
_PATH_RE = re.compile(r"(?<![\w-])(?<!tests/)(?<!//)common/(testdata/)?([A-Za-z_]\w*)(?=(.?))")
_LABEL_RE = re.compile(r"//common:([A-Za-z_]\w*)")


def _package_of(stem, testdata):
    if testdata:
        for prefix, package in TESTDATA:
            if stem.startswith(prefix):
                return package
        return None
    return MOVES.get(stem)


def _git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), check=True, capture_output=True,
                          text=True).stdout


def move_files(dry):
    """git mv common/<file> -> common/<package>/<file>; returns the moves."""
    moved = []
    for rel in _git("ls-files", "common").splitlines():
        parts = rel.split("/")
        if len(parts) == 2:
            stem, testdata = parts[1].split(".")[0], False
        elif len(parts) == 3 and parts[1] == "testdata":
            stem, testdata = parts[2], True
        else:
            continue
        package = _package_of(stem, testdata)
        if package is None or not os.path.exists(os.path.join(ROOT, rel)):
            continue
        new = "common/%s/%s" % (package, "/".join(parts[1:]))
        if os.path.exists(os.path.join(ROOT, new)):
            sys.exit("move_common: both %s and %s exist: merge them by hand" % (rel, new))
        moved.append((rel, new))
        if not dry:
            os.makedirs(os.path.dirname(os.path.join(ROOT, new)), exist_ok=True)
            _git("mv", rel, new)
    if not dry and os.path.isdir(os.path.join(ROOT, "common", "testdata")):
        try:
            os.rmdir(os.path.join(ROOT, "common", "testdata"))
        except OSError:
            pass                            # files the table does not place: left there
    return moved


def rewrite(text):
    def path(m):
        testdata, stem = m.group(1) or "", m.group(2)
        package = _package_of(stem, bool(testdata))
        if stem in PACKAGES and m.group(3) != ".":
            return m.group(0)               # common/testing: the new folder itself
        return m.group(0) if package is None else "common/%s/%s%s" % (package, testdata, stem)

    def label(m):
        package = MOVES.get(m.group(1).split(".")[0])
        return m.group(0) if package is None else "//common/%s:%s" % (package, m.group(1))

    return _PATH_RE.sub(path, _LABEL_RE.sub(label, text))


def rewrite_files(dry):
    changed = {}
    for rel in _git("ls-files").splitlines():
        full = os.path.join(ROOT, rel)
        if rel == SELF or rel.startswith(_SKIP_TOPS) or not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(text)
        if new != text:
            changed[rel] = (data, new.encode("utf-8"))
            if not dry:
                with open(full, "wb") as f:
                    f.write(new.encode("utf-8"))
    return changed


def update_stub_hashes(changed, dry):
    """labs/labs.json: a stub the rewrite changed keeps being recognised."""
    path = os.path.join(ROOT, "labs", "labs.json")
    with open(path) as f:
        text = f.read()
    for lab in json.loads(text)["labs"]:
        rel = "labs/%s/%s.cc" % (lab["dir"], lab["target"])
        old_sha = lab.get("stub_sha256", "")
        if rel in changed and hashlib.sha256(changed[rel][0]).hexdigest() == old_sha:
            new_sha = hashlib.sha256(changed[rel][1]).hexdigest()
            print("labs.json: lab %d stub_sha256 %s -> %s" % (lab["number"], old_sha[:12],
                                                              new_sha[:12]))
            text = text.replace(old_sha, new_sha)
    if not dry:
        with open(path, "w") as f:
            f.write(text)


def main(argv):
    dry = "--check" in argv
    moved = move_files(dry)
    for old, new in moved:
        print("move %s -> %s" % (old, new))
    changed = rewrite_files(dry)
    for rel in sorted(changed):
        print("rewrite %s" % rel)
    update_stub_hashes(changed, dry)
    if dry:
        return 1 if moved or changed else 0
    print("move_common: %d files moved, %d rewritten" % (len(moved), len(changed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
