"""tests/rubric.json: points per hidden test, limits, Gradescope visibility.

    {
      "default_points": 1,                  # every hidden test not listed below
      "limits": {"test_seconds": 10, "lab_seconds": 60, "memory_mb": 2048},
      "gradescope": {"visibility": "visible"},
      "argument_checks": ["*Arguments.*", "*.Reject*"],
      "labs": {
        "03_output_projection": {
          "points": {"MultiHeadAttention.MatchesTorchMultiheadAttention": 3},
          "weight_draws": ["MultiHeadAttentionWeights.*"],
          "limits": {"lab_seconds": 120}
        }
      }
    }

Argument checks earn their points only beside a passing computation: a
test whose "Suite.Name" matches a pattern of "argument_checks" (fnmatch,
case-sensitive) scores only when another test of its lab passes that is
neither an argument check nor a weight draw. A file that computes nothing
but checks its arguments as the header says earns nothing (score(); the
reports say why). "weight_draws" (per lab, patterns too) names the tests
that reward drawing the seeded weights: real work that scores on its own,
but is no computation of the lab's function; the degenerate catalogue
(checks/degenerate.py) allows them and nothing else. Both lists apply to
the public tests' names as well (a public suite ends in "Public"), which
the degenerate catalogue reads; a weight_draws pattern must match a hidden
test of its lab unless its suite ends in "Public".

A test named in "points" that the lab does not have (a typo, a renamed
test) is an error: the grader reports it on the scoreboard and in every
report, and `./lab grade` exits with status 2, but still grades (the entry
is ignored) so no learner loses a lab to it.

What learners see (docs/INSTRUCTORS.md, "Visibility and feedback"): a
Gradescope visibility and a feedback policy, globally under "gradescope",
per lab ("visibility", "feedback") and per test ("tests": {name:
{"visibility", "feedback"}}); the most specific wins. "similarity" sets the
class report's similarity check (class_report.DEFAULTS). Every value is
checked; a bad one is an error like a misnamed test, and its default is used.
"""
import fnmatch
import json
import os

from reports import feedback
import limits
from labs import ROOT

PATH = os.path.join(ROOT, "tests", "rubric.json")
DEFAULT_LIMITS = dict(limits.RUN_DEFAULTS)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
FEEDBACK = feedback.POLICIES          # full, misconception, points
# The class report's similarity check; the defaults live in class_report.DEFAULTS.
SIMILARITY = {"threshold": (0, 100), "min_tokens": (0, None), "max_copies": (1, None),
              "min_run": (2, None)}
_TOP_KEYS = {"about", "default_points", "limits", "gradescope", "similarity", "argument_checks",
             "labs"}
_LAB_KEYS = {"about", "points", "limits", "visibility", "feedback", "tests", "weight_draws"}
# When the rubric names none: a suite of argument checks, and a test that
# says it rejects or throws.
DEFAULT_ARGUMENT_CHECKS = ["*Arguments.*", "*.Reject*", "*Rejected", "*Throws*"]
WITHHELD = ("passed, but an argument check earns its points only beside a passing "
            "computation: no other test of this lab passed")
_TEST_KEYS = {"visibility", "feedback"}


class Rubric:
    def __init__(self, data, errors):
        self.data = data
        self.errors = errors

    def lab(self, lab_dir):
        return self.data.get("labs", {}).get(lab_dir, {})

    def points(self, lab_dir, test):
        return float(self.lab(lab_dir).get("points", {}).get(
            test, self.data.get("default_points", 1)))

    def is_argument_check(self, lab_dir, test):
        return _matches(test, self.data.get("argument_checks", DEFAULT_ARGUMENT_CHECKS))

    def is_weight_draw(self, lab_dir, test):
        return _matches(test, self.lab(lab_dir).get("weight_draws", []))

    def score(self, lab_dir, results):
        """{test: points} for one lab's {test: passed}: the rubric's points for
        every passed test, except that argument checks score only when a test
        that is neither an argument check nor a weight draw passed too."""
        computes = any(ok and not self.is_argument_check(lab_dir, t) and
                       not self.is_weight_draw(lab_dir, t) for t, ok in results.items())
        return {t: self.points(lab_dir, t) if ok and (computes or
                                                       not self.is_argument_check(lab_dir, t))
                else 0.0 for t, ok in results.items()}

    def limits(self, lab_dir):
        out = dict(DEFAULT_LIMITS)
        out.update(self.data.get("limits", {}))
        out.update(self.lab(lab_dir).get("limits", {}))
        return out

    @property
    def visibility(self):
        return self.data.get("gradescope", {}).get("visibility", "visible")

    def _setting(self, key, default, lab_dir, test):
        lab = self.lab(lab_dir)
        value = lab.get("tests", {}).get(test, {}).get(key) if test else None
        if value is None:
            value = lab.get(key)
        if value is None:
            value = self.data.get("gradescope", {}).get(key, default)
        return value

    def test_visibility(self, lab_dir, test=None):
        """Gradescope visibility of a test (or of a lab when test is None)."""
        return self._setting("visibility", "visible", lab_dir, test)

    def feedback(self, lab_dir, test=None):
        """What a learner is shown of a failed test: full, misconception or points."""
        return self._setting("feedback", "full", lab_dir, test)

    def similarity(self):
        """The similarity settings given in the rubric (checked)."""
        return dict(self.data.get("similarity", {}))


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
    for k in sorted(set(data) - _TOP_KEYS):
        errors.append("unknown key %r at the top of the rubric (known: %s)"
                      % (k, ", ".join(sorted(_TOP_KEYS))))
    default = data.get("default_points", 1)
    if not _number(default) or default < 0:
        errors.append("default_points must be a number >= 0, not %r" % (default,))
        data["default_points"] = 1
    data["limits"] = _limits(data.get("limits", {}), "limits", errors)
    gs = _object(data, "gradescope", "gradescope", errors)
    _choice(gs, "visibility", VISIBILITIES, "gradescope", errors)
    _choice(gs, "feedback", FEEDBACK, "gradescope", errors)
    for k in sorted(set(gs) - {"visibility", "feedback"}):
        errors.append("gradescope.%s is not a setting (known: feedback, visibility)" % k)
        del gs[k]
    _similarity(_object(data, "similarity", "similarity", errors), errors)
    _patterns(data, "argument_checks", "rubric", errors)
    known = {lab.dir: lab for lab in labs}
    for lab_dir, entry in sorted(_object(data, "labs", "labs", errors).items()):
        if lab_dir not in known:
            errors.append("rubric lists lab %s, which labs/labs.json does not have" % lab_dir)
            continue
        if not isinstance(entry, dict):
            errors.append("labs.%s must be an object, not %r" % (lab_dir, entry))
            data["labs"][lab_dir] = {}
            continue
        # A lab this run does not build has no test list to check names against.
        _lab(entry, lab_dir, known[lab_dir],
             set(tests[lab_dir]) if lab_dir in tests else None, data, errors)
    return Rubric(data, errors)


def _matches(test, patterns):
    return any(fnmatch.fnmatchcase(test, p) for p in patterns)


def _patterns(obj, key, where, errors):
    """obj[key] as a list of strings (an error, and the entry dropped, otherwise)."""
    if key not in obj:
        return
    v = obj[key]
    if not isinstance(v, list) or not all(isinstance(p, str) and p for p in v):
        errors.append("%s.%s must be a list of test-name patterns such as \"*Arguments.*\", "
                      "not %r" % (where, key, v))
        del obj[key]


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _object(parent, key, where, errors):
    """parent[key] as a dict (an error and {} when it is something else)."""
    v = parent.get(key, {})
    if not isinstance(v, dict):
        errors.append("%s must be an object, not %r" % (where, v))
        v = {}
    parent[key] = v
    return v


def _choice(obj, key, allowed, where, errors):
    if key in obj and obj[key] not in allowed:
        errors.append("%s.%s = %r must be one of %s" % (where, key, obj[key], ", ".join(allowed)))
        del obj[key]


def _limits(lim, where, errors):
    if not isinstance(lim, dict):
        errors.append("%s must be an object, not %r" % (where, lim))
        return {}
    for k, v in list(lim.items()):
        if k not in DEFAULT_LIMITS or not _number(v) or v <= 0:
            errors.append("%s.%s = %r is not a known positive limit" % (where, k, v))
            del lim[k]
    return lim


def _similarity(sim, errors):
    for k, v in list(sim.items()):
        if k == "enabled":
            if not isinstance(v, bool):
                errors.append("similarity.enabled = %r must be true or false" % (v,))
                del sim[k]
            continue
        if k not in SIMILARITY:
            errors.append("similarity.%s is not a setting (known: enabled, %s)"
                          % (k, ", ".join(sorted(SIMILARITY))))
            del sim[k]
            continue
        lo, hi = SIMILARITY[k]
        if not _number(v) or v < lo or (hi is not None and v > hi):
            errors.append("similarity.%s = %r must be a number %s" % (
                k, v, ">= %g" % lo if hi is None else "from %g to %g" % (lo, hi)))
            del sim[k]


def _lab(entry, lab_dir, lab, known_tests, data, errors):
    for k in sorted(set(entry) - _LAB_KEYS):
        errors.append("labs.%s: unknown key %r (known: %s)" % (lab_dir, k, ", ".join(
            sorted(_LAB_KEYS))))
    points = _object(entry, "points", "labs.%s.points" % lab_dir, errors)
    for test, pts in sorted(points.items()):
        if not _number(pts) or pts < 0:
            errors.append("%s: %s = %r is not a number >= 0" % (lab_dir, test, pts))
            points[test] = data["default_points"]
        elif known_tests is not None and test not in known_tests:
            errors.append("rubric lists %s for lab %d, which has no such hidden test"
                          % (test, lab.number))
    _patterns(entry, "weight_draws", "labs.%s" % lab_dir, errors)
    for p in entry.get("weight_draws", []):
        # A pattern for public tests only ("SuitePublic.*") has no hidden test to match.
        if p.split(".", 1)[0].endswith("Public"):
            continue
        if known_tests is not None and not any(fnmatch.fnmatchcase(t, p) for t in known_tests):
            errors.append("labs.%s.weight_draws: %r matches no hidden test of lab %d"
                          % (lab_dir, p, lab.number))
    entry["limits"] = _limits(entry.get("limits", {}), "%s: limits" % lab_dir, errors)
    _choice(entry, "visibility", VISIBILITIES, "labs.%s" % lab_dir, errors)
    _choice(entry, "feedback", FEEDBACK, "labs.%s" % lab_dir, errors)
    per_test = _object(entry, "tests", "labs.%s.tests" % lab_dir, errors)
    for test, setting in sorted(per_test.items()):
        where = "labs.%s.tests.%s" % (lab_dir, test)
        if known_tests is not None and test not in known_tests:
            errors.append("rubric sets %s for lab %d, which has no such hidden test"
                          % (test, lab.number))
        if not isinstance(setting, dict):
            errors.append("%s must be an object such as {\"visibility\": \"hidden\"}, not %r"
                          % (where, setting))
            per_test[test] = {}
            continue
        for k in sorted(set(setting) - _TEST_KEYS):
            errors.append("%s: unknown key %r (known: feedback, visibility)" % (where, k))
            del setting[k]
        _choice(setting, "visibility", VISIBILITIES, where, errors)
        _choice(setting, "feedback", FEEDBACK, where, errors)


def effective(labs, tests, rub):
    """Every hidden test with its points (for `./lab rubric`)."""
    return {lab.dir: {t: rub.points(lab.dir, t) for t in tests.get(lab.dir, [])} for lab in labs}
