"""./lab new NN_name "Title": a new lab, as its mirrored folders and one registry line.

    ./lab new 14_sliding_window "Sliding-window attention" [--target sliding_window]

writes a lab that builds, whose stub fails its tests and whose solution
passes them, from the first minute:

    labs/NN_name/<target>.h, <target>.cc (the stub), <target>_test_util.h (the
                 tests' helpers, table of classic mistakes and the shared
                 golden case), <target>_public_test.cc, golden/, hints.txt, BUILD
    solutions/NN_name/<target>.cc, BUILD
    tests/NN_name/<target>_test.cc, remote.cc, gen_goldens.py, golden/, mutants/, BUILD
    docs/NN_name.md (with its "Classic mistakes" section)

and adds the lab's line to labs/labs.json and its row to README.md's lab
table (both derived from the same facts). The example function it declares,
`<target>(x)` = 2 x, is a placeholder: replace it with the lab's API, keeping
the layout. Its tests are what docs/AUTHORING.md prescribes: the public and
hidden tests compare with goldens (the same bytes gen_goldens.py writes with
NumPy) through one shared case in the test util, and a wrong answer that
matches a classic mistake's golden names it; the hidden tests add fresh random
inputs. Grading, the learner kit, the mutant check and the registry
check pick the lab up with no other file edited.
"""
import json
import os
import re
import struct
import sys

from checks import consistency
from labs import ROOT, load_labs

_NAME = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")


def _files(number, lab_dir, target, title):
    guard = "MHA_LABS_%s_%s_H_" % (lab_dir.upper(), target.upper())
    suite = "".join(w.capitalize() for w in target.split("_"))
    doc = "docs/%s.md" % lab_dir
    header = '''// Lab {n}: {title}.
//
// The header comment is the specification learners read: say what each
// function takes and returns, with shapes, and what it throws.
//
// (Template from ./lab new: {target}(x) doubles every element. Replace it
// with the lab's functions, keeping the layout of the lab's folders.)
#ifndef {guard}
#define {guard}

#include "common/tensor.h"

namespace mha {{

// (T, d) -> (T, d): 2 * x. Throws std::invalid_argument when x is empty,
// naming its shape.
Tensor2 {target}(const Tensor2& x);

}}  // namespace mha

#endif  // {guard}
'''
    stub = '''// Lab {n}: {title}. This is the file you edit.
// Read {doc} first; the header labs/{dir}/{target}.h says what each function must do.
// Check your work with:  bazel test //labs/{dir}/...
#include "labs/{dir}/{target}.h"

#include <stdexcept>

namespace mha {{

Tensor2 {target}(const Tensor2& x) {{
  // TODO:
  // 1. Reject an empty x with std::invalid_argument naming its shape.
  // 2. Return 2 * x, a (T, d) tensor.
  (void)x;
  throw std::logic_error("lab {n}: {target} is not implemented yet, see {doc}");
}}

}}  // namespace mha
'''
    solution = '''// Lab {n}: {title}, the reference solution.
#include "labs/{dir}/{target}.h"

#include <stdexcept>

#include "common/core/shape_string.h"

namespace mha {{

Tensor2 {target}(const Tensor2& x) {{  // (T, d) -> (T, d)
  if (x.size() == 0) {{
    throw std::invalid_argument("{target}: x has shape " + shape_string(x) +
                                ", expected a non-empty tensor");
  }}
  return x * 2.0f;
}}

}}  // namespace mha
'''
    test_util = '''// Helpers of lab {n}'s tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words.
#ifndef {util_guard}
#define {util_guard}

#include <string>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/{dir}/{target}.h"

namespace mha {{
namespace testing {{

// The classic mistakes of {doc}, by the names the golden generator gives
// what each one computes (<golden>_mistake_<name>.npy). MatchesGolden, and
// LooksLike and Named, print the sentence and record the mistake as data for
// the grader (common/testing/misconception.h).
inline const MistakeTable k{suite}Mistakes(
    "{doc}",
    {{
        {{"doubled_twice", "every element was doubled twice"}},
        {{"not_doubled", "every element must be doubled"}},
    }});

// A shared case (the public tests run it on labs/{dir}/golden/, the hidden
// tests, in the instructors' repository, on tests/{dir}/golden/):
// {target}(<c>_x.npy) equals <c>_y.npy, which tests/{dir}/gen_goldens.py
// computed with NumPy; a failure that matches what a classic mistake computes
// (<c>_y_mistake_<name>.npy) names it.
inline void ExpectMatchesGolden(const std::string& dir, const std::string& c) {{
  const Tensor2 x = LoadGolden<2>(GoldenFile(dir, c + "_x"));  // (T, d)
  EXPECT_TRUE(MatchesGolden({target}(x), GoldenFile(dir, c + "_y"), kExact, {{"row", "column"}},
                            k{suite}Mistakes.Of(dir + c + "_y", {{"doubled_twice"}})));
}}

// On inputs no golden holds (the hidden tests' fresh draws): {target}(x) is
// 2 * x, computed here; a failure names the mistake it looks like.
inline void ExpectDoubled(const Tensor2& x) {{
  const Tensor2 y = {target}(x);
  EXPECT_TRUE(AllClose(y, x * 2.0f, kExact, {{"row", "column"}}))
      << (AllClose(y, x * 4.0f, kExact) ? k{suite}Mistakes.LooksLike("doubled_twice")
                                        : k{suite}Mistakes.Named("not_doubled"));
}}

}}  // namespace testing
}}  // namespace mha

#endif  // {util_guard}
'''
    public_test = '''// Public tests for lab {n}. Run: bazel test //labs/{dir}/...
#include "labs/{dir}/{target}.h"

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/{dir}/{target}_test_util.h"

namespace mha {{
namespace {{

TEST({suite}Public, MatchesNumpyOnASmallInput) {{
  testing::ExpectMatchesGolden("labs/{dir}/golden/", "pub");
}}

TEST({suite}Public, RejectsAnEmptyInputNamingItsShape) {{
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] {{ {target}(Tensor2(xt::zeros<float>({{0, 4}}))); }}, {{"(0, 4)"}}));
}}

}}  // namespace
}}  // namespace mha
'''
    hidden_test = '''// Hidden tests for lab {n}: other shapes and seeds than the public ones,
// and fresh random inputs on every run.
#include "labs/{dir}/{target}.h"

#include <string>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/{dir}/{target}_test_util.h"

namespace mha {{
namespace {{

TEST({suite}, MatchesNumpyOnATallInput) {{
  testing::ExpectMatchesGolden("tests/{dir}/golden/", "tall");
}}

TEST({suite}, RejectsAnEmptyInputNamingItsShape) {{
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] {{ {target}(Tensor2(xt::zeros<float>({{3, 0}}))); }}, {{"(3, 0)"}}));
}}

TEST(FreshRandomInputs, {suite}DoublesThem) {{
  testing::FreshDraws gen;
  testing::ExpectDoubled(testing::RandomTensor2(4, 6, static_cast<std::uint32_t>(gen())));
}}

}}  // namespace
}}  // namespace mha
'''
    remote = '''// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Declare every function and method of the
// header here; graded_test() in BUILD compiles it as client and as server.
#include "common/grading/remote.h"
#include "labs/{dir}/{target}.h"

namespace mha {{
MHA_REMOTE_FUNCTION(Tensor2, {target}, (const Tensor2& x), (x))
}}  // namespace mha
'''
    generator = '''"""Goldens for lab {n} ({title}), computed with NumPy and PyTorch.

Run from the repository root:  /usr/bin/python3 tests/{dir}/gen_goldens.py
Writes tests/{dir}/golden/*.npy (hidden) and labs/{dir}/golden/*.npy (public).
Next to each right answer, write what a classic mistake computes on the same
input (`*_mistake_<name>.npy`), so a failing test can say which mistake it
looks like (see {doc}, "Classic mistakes").
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)


def save_case(out, case, x):
    """<case>_x, the right answer <case>_y, and what each classic mistake gives."""
    common.save(out, case + "_x", x)
    common.save(out, case + "_y", 2 * x)
    common.save(out, case + "_y_mistake_doubled_twice", 4 * x)


def main():
    # (Template values, exact in float32. A real lab draws its inputs with
    # common.inputs(seed, ...) and its weights as the header says.)
    save_case(PUBLIC, "pub", (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 4)
    save_case(HIDDEN, "tall", (np.arange(18, dtype=np.float32).reshape(9, 2) - 7) / 8)
    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
'''
    labs_build = '''load("//common:lab.bzl", "lab_library", "lab_test")

# Your work: {target}.cc. The header, and the tests' helpers and table of
# classic mistakes ({target}_test_util.h), are fixed. Run with:
#   bazel test //labs/{dir}/...
lab_library(deps = ["//common/core:shape_string"])

lab_test()
'''
    solutions_build = '''load("//common:lab.bzl", "solution_file")

# The reference solution of this lab's library, compiled into it by
# --config=solutions (see common/lab.bzl).
solution_file("{target}.cc")
'''
    tests_build = '''load("//common:lab.bzl", "graded_test")

# Hidden tests for lab {n}. Goldens: tests/{dir}/gen_goldens.py.
# Wrong learner files that these tests must reject: mutants/.
graded_test()
'''
    hints = '''Start from the header: {target}(x) takes a (T, d) tensor and returns one of the same shape. Check the argument first: an empty x is an error whose message names its shape.

Every element is doubled, once: 2 * x. Multiplying twice is the classic slip the tests name.
'''
    lesson = '''# Lab {n}: {title}

(Template from `./lab new`: replace every section with the lesson.)

**What you may call.** Nothing from an earlier lab: this lab's file calls no earlier lab's function (labs/labs.json, `"calls": []`).

## The idea

What the learner builds, and why it matters for attention.

## The maths

The equations, with the shape of every tensor.

## Shapes

| tensor | shape |
| --- | --- |
| x | (T, d) |
| {target}(x) | (T, d) |

## Classic mistakes

- **Doubling twice.** Every element multiplied by 4 instead of 2. The tests
  say "looks like every element was doubled twice".

## Run and check

    bazel test //labs/{dir}/...     # the public tests
    ./lab hint {n}                  # a hint, when stuck
'''
    fmt = dict(n=number, title=title, target=target, dir=lab_dir, guard=guard, suite=suite,
               doc=doc, util_guard=guard[:-2] + "TEST_UTIL_H_")
    files = {
        "labs/%s/%s.h" % (lab_dir, target): header,
        "labs/%s/%s.cc" % (lab_dir, target): stub,
        "labs/%s/%s_test_util.h" % (lab_dir, target): test_util,
        "labs/%s/%s_public_test.cc" % (lab_dir, target): public_test,
        "labs/%s/hints.txt" % lab_dir: hints,
        "labs/%s/BUILD" % lab_dir: labs_build,
        "solutions/%s/%s.cc" % (lab_dir, target): solution,
        "solutions/%s/BUILD" % lab_dir: solutions_build,
        "tests/%s/%s_test.cc" % (lab_dir, target): hidden_test,
        "tests/%s/remote.cc" % lab_dir: remote,
        "tests/%s/gen_goldens.py" % lab_dir: generator,
        "tests/%s/BUILD" % lab_dir: tests_build,
        "docs/%s.md" % lab_dir: lesson,
    }
    out = {path: text.format(**fmt) for path, text in files.items()}
    # The goldens the generator writes, byte for byte as np.save does (so the
    # lab passes before anyone runs the generator, and running it changes nothing).
    for folder, case, rows, cols, offset, div in (("labs", "pub", 4, 3, 5, 4),
                                                  ("tests", "tall", 9, 2, 7, 8)):
        x = [(i - offset) / div for i in range(rows * cols)]
        for suffix, factor in (("_x", 1), ("_y", 2), ("_y_mistake_doubled_twice", 4)):
            out["%s/%s/golden/%s%s.npy" % (folder, lab_dir, case, suffix)] = npy_float32(
                [v * factor for v in x], (rows, cols))
    sol_path = "solutions/%s/%s.cc" % (lab_dir, target)
    line = [i for i, l in enumerate(out[sol_path].splitlines(), 1) if "x * 2.0f" in l][0]
    out["tests/%s/mutants/doubled_twice.diff" % lab_dir] = (
        "Mistake: every element doubled twice (multiplied by 4)\n"
        "Expect: doubled twice\nKind: numeric\n\n"
        "--- a/{sol}\n+++ b/{sol}\n@@ -{l},1 +{l},1 @@\n-  return x * 2.0f;\n"
        "+  return x * 4.0f;\n").format(sol=sol_path, l=line)
    return out


def npy_float32(values, shape):
    """The bytes np.save writes for a float32 C-order array (.npy version 1.0:
    magic, header length, a header padded to 64 bytes, the data)."""
    dims = "%d," % shape[0] if len(shape) == 1 else ", ".join(str(s) for s in shape)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") +
            struct.pack("<%df" % len(values), *values))


def create(name, title, target=None, root=ROOT):
    """Writes the new lab under `root`; returns the paths written."""
    m = _NAME.match(name)
    if not m:
        raise ValueError("%r is not a lab folder name: use NN_name, e.g. 14_sliding_window" % name)
    number = int(m.group(1))
    target = target or m.group(2)
    if not re.match(r"^[a-z][a-z0-9_]*$", target):
        raise ValueError("--target %r must be a C++ identifier in lower case" % target)
    if not title.strip() or any(c in title for c in '"\\\n|'):
        raise ValueError("the title %r must be one line without quotes, backslashes or |" % title)
    labs = load_labs(root)
    if number != len(labs) + 1:
        raise ValueError("the next lab is number %d, not %d" % (len(labs) + 1, number))
    if any(lab.target == target for lab in labs):
        raise ValueError("a lab already has the target %r" % target)
    files = _files(number, name, target, title.strip())
    for rel in files:
        if os.path.exists(os.path.join(root, rel)):
            raise ValueError("%s exists already" % rel)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    # The registry line.
    reg = os.path.join(root, "labs", "labs.json")
    with open(reg) as f:
        text = f.read()
    stub = files["labs/%s/%s.cc" % (name, target)].encode()
    entry = consistency.registry_line(number, name, target, title.strip(), stub)
    text = re.sub(r"\}\s*\n(\s*)\]", "},\n\\1" + "  " + entry + "\n\\1]", text, count=1)
    json.loads(text)  # still a valid registry
    with open(reg, "w") as f:
        f.write(text)
    # README.md's lab table: derived from the registry.
    readme = os.path.join(root, "README.md")
    if os.path.exists(readme):
        with open(readme) as f:
            lines = f.read().split("\n")
        rows = [i for i, l in enumerate(lines) if consistency.README_ROW.match(l)]
        if rows:
            new_row = consistency.readme_rows(load_labs(root))[-1]
            lines.insert(rows[-1] + 1, new_row)
            with open(readme, "w") as f:
                f.write("\n".join(lines))
    return sorted(files) + ["labs/labs.json", "README.md"]


def cmd_new(args):
    try:
        written = create(args.name, args.title, args.target)
    except ValueError as e:
        print("lab: %s" % e, file=sys.stderr)
        return 2
    print("created lab %s:" % args.name)
    for rel in written:
        print("  " + rel)
    print("next: replace the example function in the header, stub, solution, tests and "
          "remote.cc; `bazel test --config=solutions //labs/%s/... //tests/%s/...` must pass; "
          "commit, then `./lab translate` gives the lesson and hints a page in every language; "
          "`./lab check %d` checks the lab and `./lab test` the rest."
          % (args.name, args.name, int(args.name[:2])))
    return 0
