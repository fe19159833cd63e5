"""tests/rubric.json: points per hidden test, limits, Gradescope visibility.

    {
      "default_points": 1,                  # every hidden test not listed below
      "limits": {"test_seconds": 10, "lab_seconds": 60, "memory_mb": 2048},
      "gradescope": {"visibility": "visible"},
      "labs": {
        "03_output_projection": {
          "points": {"MultiHeadAttention.MatchesTorchMultiheadAttention": 3},
          "limits": {"lab_seconds": 120}
        }
      }
    }

A test named in "points" that the lab does not have (a typo, a renamed
test) is an error: the grader reports it on the scoreboard and in every
report, and `./lab grade` exits with status 2, but still grades (the entry
is ignored) so no learner loses a lab to it.
"""
import json
import os

import limits
from labs import ROOT

PATH = os.path.join(ROOT, "tests", "rubric.json")
DEFAULT_LIMITS = dict(limits.RUN_DEFAULTS)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


class Rubric:
    def __init__(self, data, errors):
        self.data = data
        self.errors = errors

    def lab(self, lab_dir):
        return self.data.get("labs", {}).get(lab_dir, {})

    def points(self, lab_dir, test):
        return float(self.lab(lab_dir).get("points", {}).get(
            test, self.data.get("default_points", 1)))

    def limits(self, lab_dir):
        out = dict(DEFAULT_LIMITS)
        out.update(self.data.get("limits", {}))
        out.update(self.lab(lab_dir).get("limits", {}))
        return out

    @property
    def visibility(self):
        return self.data.get("gradescope", {}).get("visibility", "visible")


def load(labs, tests, path=PATH):
    """The rubric, checked against the hidden test lists {lab dir: [test names]}.
    Never raises."""
    errors = []
    data = {}
    try:
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, dict):
            raise ValueError("the top level must be an object")
    except FileNotFoundError:
        errors.append("%s is missing: every hidden test is worth 1 point" % os.path.relpath(path, ROOT))
        data = {}
    except (OSError, ValueError) as e:
        errors.append("%s cannot be read (%s): every hidden test is worth 1 point"
                      % (os.path.relpath(path, ROOT), e))
        data = {}
    default = data.get("default_points", 1)
    if not isinstance(default, (int, float)) or isinstance(default, bool) or default < 0:
        errors.append("default_points must be a number >= 0, not %r" % (default,))
        data["default_points"] = 1
    for key in ("limits",):
        lim = data.get(key, {})
        for k, v in list(lim.items()):
            if k not in DEFAULT_LIMITS or not isinstance(v, (int, float)) or v <= 0:
                errors.append("limits.%s = %r is not a known positive limit" % (k, v))
                del lim[k]
    vis = data.get("gradescope", {}).get("visibility", "visible")
    if vis not in VISIBILITIES:
        errors.append("gradescope.visibility must be one of %s" % ", ".join(VISIBILITIES))
        data.setdefault("gradescope", {})["visibility"] = "visible"
    known = {lab.dir: lab for lab in labs}
    for lab_dir, entry in sorted(data.get("labs", {}).items()):
        if lab_dir not in known:
            errors.append("rubric lists lab %s, which labs/labs.json does not have" % lab_dir)
            continue
        known_tests = set(tests.get(lab_dir, []))
        for test, pts in sorted(entry.get("points", {}).items()):
            if not isinstance(pts, (int, float)) or isinstance(pts, bool) or pts < 0:
                errors.append("%s: %s = %r is not a number >= 0" % (lab_dir, test, pts))
                entry["points"][test] = data["default_points"]
            elif lab_dir in tests and test not in known_tests:
                errors.append("rubric lists %s for lab %d, which has no such hidden test"
                              % (test, known[lab_dir].number))
        for k, v in list(entry.get("limits", {}).items()):
            if k not in DEFAULT_LIMITS or not isinstance(v, (int, float)) or v <= 0:
                errors.append("%s: limits.%s = %r is not a known positive limit" % (lab_dir, k, v))
                del entry["limits"][k]
    return Rubric(data, errors)


def effective(labs, tests, rub):
    """Every hidden test with its points (for `./lab rubric`)."""
    return {lab.dir: {t: rub.points(lab.dir, t) for t in tests.get(lab.dir, [])} for lab in labs}
