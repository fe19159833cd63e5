"""The misconception a failed test names, and what a learner is shown of a
failed hidden test (the rubric's feedback policy).

The misconception is data: the grader's result stream (common/grading/test_results.cc)
gives a failed test a "mistake" field when the test recognised a classic
mistake (a golden of a MistakeTable's mistake matched, or the test streamed
a MistakeTable's Named/LooksLike), and grade.py keeps it in the test's entry:

    {"name": "no_scale", "words": "scores not scaled by 1/sqrt(d_head)",
     "doc": "docs/02_batched_attention.md", "looks_like": true}

The terminal prints the same mistake as a sentence ("looks like <words>;
see <doc>, \"Classic mistakes\"" for a diagnosis, "<words>; see ..." for a
rule the test states); sentence() writes it from the field.

A test may also word a mistake on its own, with no table behind it: gtest's
account of the values, then "<the test's words>; see docs/NN_name.md,
\"Classic mistakes\"" (or the words first). Such a message has no field; its
words are what comes before the pointer to the lesson once gtest's fixed
phrases are removed (own_words). Reports ask named_mistake(), which reads the
field first.

    named_mistake(message, mistake) -> {"name", "words", "doc"} or None
    diagnosis(message, mistake)     -> "the diagonal is removed (j < i instead of j <= i)" or ""
    mistake_key(words)              -> "the diagonal is removed": the same mistake worded
                                       twice counts once (class_report.py)
    shown(message, policy, status, mistake) -> what results.json shows under a policy
"""
import re

import limits
from reports import messages

POLICIES = ("full", "misconception", "points")
GENERIC = "failed"

_SEE_DOCS = re.compile(r";?\s*see docs/[A-Za-z0-9_]+\.md(, \"[^\"]*\")?")
# gtest's fixed phrases, after which the test's own words may start.
_GTEST_VALUE = re.compile(
    r"(Expected: (true|false)|Actual: (true|false)|Which is: (\"(?:[^\"\\]|\\.)*\"|\S+))\s+")
_LITERAL = re.compile(r"^(\"(?:[^\"\\]|\\.)*\"|'.'|[-+]?[0-9][0-9.eE+-]*[uUlLfF]*)\s+")
# "T=1: ...", "d_model=12, n_heads=3: ...", "causal: ...": the case, not the mistake.
_CONTEXT = re.compile(r"^(\w+|\w+=[^\s:;,]+(, \w+=[^\s:;,]+)*): ")
# What common/testing/testing.h's ThrowsInvalidArgument says, as a named mistake.
_VALIDATION = [
    ("but the call returned normally",
     "a bad argument is accepted: no std::invalid_argument is thrown"),
    ("expected std::invalid_argument, got another exception",
     "a bad argument throws something other than std::invalid_argument"),
    ("does not mention", "the std::invalid_argument message does not name the offending values"),
]
MIN_OWN_WORDS = 3     # "dx; see docs/..." labels a value, it names no mistake


def _tidy(text):
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" ;,.:")


FIELDS = ("name", "words", "doc")


def as_mistake(value):
    """A result stream's "mistake" field as {"name", "words", "doc"} (strings)
    and "looks_like" (a bool, true when absent), or None when it is missing
    or not of that form (named by nobody)."""
    if not isinstance(value, dict):
        return None
    out = {}
    for k in FIELDS:
        v = value.get(k, "")
        if not isinstance(v, str):
            return None
        out[k] = v
    looks_like = value.get("looks_like", True)
    if not isinstance(looks_like, bool):
        return None
    out["looks_like"] = looks_like
    return out if out["words"] or out["name"] else None


def _pointer(mistake):
    doc = mistake.get("doc", "")
    return '; see %s, "Classic mistakes"' % doc if doc else ""


def sentence(mistake):
    """What the terminal printed for a mistake: "looks like <words>; see
    <doc>, \"Classic mistakes\"" for a diagnosis, "<words>; see ..." for a
    rule the test states (no pointer when the field names no lesson)."""
    words = mistake.get("words") or mistake.get("name", "")
    return "%s%s%s" % ("looks like " if mistake.get("looks_like", True) else "", words,
                       _pointer(mistake))


def named_mistake(message, mistake=None):
    """The mistake a failed test names: its "mistake" field when it has one,
    else the test's own words before a pointer to the lesson, else the words
    of the suite's exception check ({"name": "", "words", "doc": ""}), or None."""
    field = as_mistake(mistake)
    if field:
        return field
    if not message:
        return None
    own = _own_words(message)
    if own:
        return {"name": "", "words": own, "doc": "", "looks_like": False}
    for phrase, words in _VALIDATION:
        if phrase in message:
            return {"name": "", "words": words, "doc": "", "looks_like": False}
    return None


def diagnosis(message, mistake=None):
    """The words of the mistake a failed test names, or "" (named_mistake)."""
    found = named_mistake(message, mistake)
    return _tidy(found["words"]) if found else ""


def _own_words(message):
    see = _SEE_DOCS.search(message)
    if not see:
        return ""
    before = message[:see.start()]
    start = 0
    for v in _GTEST_VALUE.finditer(before):
        start = v.end()
    words = before[start:]
    # "Expected equality of these values: f() Which is: 3 4u Which is: 4 <words>":
    # a literal operand prints without "Which is"; drop it.
    while True:
        lit = _LITERAL.match(words)
        if not lit:
            break
        words = words[lit.end():]
    if start == 0 and _GTEST_VALUE.search(message[see.end():]):
        # The words came first ("<words>; see docs/..." then gtest's values).
        words = before
    if words.lstrip().startswith("("):
        # "Actual: false (...; see docs/...": a predicate's reason (a helper of
        # common/testing/testing.h), whose mistake, if any, is in the test's field.
        return ""
    words = _CONTEXT.sub("", _tidy(words))
    return words if len(words.split()) >= MIN_OWN_WORDS else ""


def without_asides(text):
    """`text` without its parenthesised asides: "x (because y) z" -> "x z"."""
    prev = None
    while prev != text:   # nested asides
        prev = text
        text = re.sub(r"\s\([^()]*\)", "", text)
    return text


def mistake_key(text):
    """A key under which the same mistake, worded with different details,
    counts once: lower case, no parenthesised asides, no numbers, and only the
    words before a colon that introduces an explanation."""
    t = without_asides(text.lower())
    t = re.split(r":\s", t, maxsplit=1)[0]
    t = re.sub(r"[0-9]+(\.[0-9]+)?", "#", t)
    t = re.sub(r"[^a-z0-9#_/*+=<>'\-\s]", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def lesson_pointer(message):
    """'see docs/NN_name.md, "Classic mistakes"' when the message has one."""
    m = _SEE_DOCS.search(message or "")
    return m.group(0).lstrip("; ").strip() if m else ""


def shown(message, policy, lab_status="graded", mistake=None):
    """The output results.json gives a failed test under `policy`
    (`mistake`: the test's "mistake" field, if any).

    full: the message. misconception: "looks like <mistake>; see <lesson>",
    or "failed" when the test names none. points: nothing. Under every
    policy a lab whose file did not compile, link or pass the static checks
    (lab_status other than "graded") shows its message: it is about the
    learner's file, not about the hidden test.
    """
    if lab_status not in ("graded",) or policy == "full":
        return message
    if policy == "points":
        return ""
    field = as_mistake(mistake)
    if field:
        return "looks like %s%s" % (field["words"] or field["name"], _pointer(field))
    words = diagnosis(message)
    if not words:
        return GENERIC
    pointer = lesson_pointer(message)
    return "looks like %s%s" % (words, ("; " + pointer) if pointer else "")


def summarise_line(message, mistake=None):
    """A stored (one-line) failure message as the scoreboard's first failure
    quotes it: the sentence of its named mistake when it has one."""
    field = as_mistake(mistake)
    return messages.printable(sentence(field) if field else message, limits.MESSAGE_CHARS)
