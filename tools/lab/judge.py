"""Golden comparisons, judged outside the test process.

The same rule and the same messages as common/testing.cc (AllCloseFlat and
MatchesGolden), on values the test process sent over the authenticated
channel and goldens it never saw: an element passes when
|actual - expected| <= atol + rtol * |expected|, NaN only matches NaN and an
infinity only itself. On failure, a KnownMistake golden that matches instead
names the mistake.
"""
import math
import os
import struct

import npy


def _g(x):
    if math.isnan(x):
        return "nan"
    return "%.7g" % x


def shape_string(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _index_string(flat, shape, names):
    idx = [0] * len(shape)
    for d in range(len(shape) - 1, -1, -1):
        idx[d] = flat % shape[d] if shape[d] else 0
        flat = flat // shape[d] if shape[d] else 0
    parts = []
    for d, i in enumerate(idx):
        parts.append(("%s %d" % (names[d], i)) if len(names) == len(shape) else str(i))
    return "[" + ", ".join(parts) + "]"


def all_close(a_shape, a, e_shape, e, atol, rtol, names=()):
    """(ok, message) exactly as AllCloseFlat."""
    if tuple(a_shape) != tuple(e_shape):
        return False, "shape mismatch: actual %s, expected %s" % (shape_string(a_shape),
                                                                  shape_string(e_shape))
    bad = first = worst = 0
    worst_err = -1.0
    for i, (x, y) in enumerate(zip(a, e)):
        if math.isnan(x) or math.isnan(y):
            ok = math.isnan(x) and math.isnan(y)
            err = 0.0 if ok else math.inf
        elif math.isinf(x) or math.isinf(y):
            ok = x == y
            err = 0.0 if ok else math.inf
        else:
            err = abs(x - y)
            ok = err <= atol + rtol * abs(y)
        if not ok:
            if bad == 0:
                first = i
            bad += 1
        if err > worst_err:
            worst_err, worst = err, i
    if bad == 0:
        return True, ""
    names = list(names)
    return False, ("%d of %d elements differ; first at %s: actual %s, expected %s; max |error| %s "
                   "at %s: actual %s, expected %s (atol %s, rtol %s)" % (
                       bad, len(a), _index_string(first, a_shape, names), _g(a[first]),
                       _g(e[first]), _g(worst_err), _index_string(worst, a_shape, names),
                       _g(a[worst]), _g(e[worst]), _g(atol), _g(rtol)))


def float_from_bits(hex8):
    return struct.unpack(">f", bytes.fromhex(hex8))[0]


def decode_values(hexdata):
    raw = bytes.fromhex(hexdata)
    return [float(v) for v in struct.unpack("<%df" % (len(raw) // 4), raw)]


class Goldens:
    """Reads goldens from the instructor's checkout (never from the grading workspace)."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def get(self, rel):
        if rel not in self.cache:
            path = os.path.normpath(os.path.join(self.root, rel))
            if not path.startswith(self.root + os.sep):
                raise npy.NpyError("golden path %s leaves the suite" % rel)
            self.cache[rel] = npy.read(path)
        return self.cache[rel]


def matches_golden(shape, values, ref, goldens):
    """(ok, message) for one comparison; `ref` is the reference run's record of it."""
    try:
        e_shape, e = goldens.get(ref["golden"])
    except (OSError, npy.NpyError) as err:
        return False, "grader error: cannot read golden %s: %s" % (ref["golden"], err)
    ok, msg = all_close(shape, values, e_shape, e, ref["atol"], ref["rtol"], ref["axes"])
    if ok:
        return True, ""
    for m in ref["mistakes"]:
        try:
            w_shape, w = goldens.get(m["golden"])
        except (OSError, npy.NpyError):
            continue
        if all_close(shape, values, w_shape, w, ref["atol"], ref["rtol"])[0]:
            return False, "looks like %s (checked against %s: %s)" % (m["message"], ref["golden"],
                                                                     msg)
    return False, "vs %s: %s" % (ref["golden"], msg)
