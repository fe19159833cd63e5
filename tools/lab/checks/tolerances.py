"""The tolerance policy check of ./lab test (docs/TOLERANCES.md).

Every float comparison in a public or hidden test goes through AllClose or
MatchesGolden (common/testing/testing.h) with one of the named tolerances of
common/testing/tolerance.h: kExact, kRowOp, kAttention, kLayer. This scans the test
sources for anything else: gtest's own float comparisons (EXPECT_NEAR,
EXPECT_FLOAT_EQ, ...), a Tolerance built on the spot, or a literal such as
1e-3 that reads like an epsilon. A line that truly needs one says why with
`// tolerance: <reason>` and is accepted.
"""
import glob
import os
import re

from labs import ROOT, load_labs

_PATTERNS = [
    (re.compile(r"\b(EXPECT|ASSERT)_(NEAR|FLOAT_EQ|DOUBLE_EQ)\b"),
     "gtest's own float comparison"),
    (re.compile(r"\bTolerance\s*(\w+\s*)?[{(]"), "a Tolerance built on the spot"),
    (re.compile(r"(?<![\w.])\d+(\.\d*)?[eE]-\d+f?\b"), "a literal epsilon"),
]
_EXEMPT = re.compile(r"//\s*tolerance:")


def test_sources(root=ROOT):
    """The public and hidden test files of every lab, and the test util that
    holds the cases they share (not tests/hostile/)."""
    files = []
    for lab in load_labs(root):
        for test_file in (lab.public_test_file, lab.hidden_test_file):
            folder = os.path.dirname(test_file)
            files += sorted(glob.glob(os.path.join(root, folder, "*_test.cc")))
        files.append(os.path.join(root, lab.test_util_file))
    return [os.path.relpath(f, root) for f in files if os.path.isfile(f)]


def ad_hoc_tolerances(root=ROOT):
    """[(file, line number, what, the line)] for every comparison outside the policy."""
    found = []
    for rel in test_sources(root):
        with open(os.path.join(root, rel), errors="replace") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//", 1)[0]
                if _EXEMPT.search(line):
                    continue
                for pattern, what in _PATTERNS:
                    if pattern.search(code):
                        found.append((rel, n, what, line.strip()))
                        break
    return found


def selftest_checks(labs, make_check):
    files = test_sources()
    c = make_check("the %d public and hidden test files and test utils use only the "
                   "tolerances of common/testing/tolerance.h" % len(files))
    for rel, n, what, line in ad_hoc_tolerances():
        c.fail("%s:%d: %s: %s" % (rel, n, what, line[:100]))
    return [c]
