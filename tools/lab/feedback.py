"""The misconception a failure message names, and what a learner is shown of a
failed hidden test (the rubric's feedback policy).

A hidden test that recognises a classic mistake says so in its message, in
one of two forms (common/testing.cc, tests/NN_name/*_test.cc):

    looks like <the mistake>; see docs/NN_name.md, "Classic mistakes" (checked against ...)
    <the test's own words>; see docs/NN_name.md, "Classic mistakes"

The second form is what tests print when no golden can tell (an exception
that should have been thrown, a count): gtest's account of the values comes
first, then the test's words. The grader's reports keep each message on one
line, so the words are found by removing gtest's fixed phrases.

    diagnosis(message)        -> "the diagonal is removed (j < i instead of j <= i)" or ""
    mistake_key(text)         -> "the diagonal is removed": the same mistake worded
                                 twice counts once (class_report.py)
    shown(message, policy, status) -> what results.json shows under a policy
"""
import re

POLICIES = ("full", "misconception", "points")
GENERIC = "failed"

_SEE_DOCS = re.compile(r";?\s*see docs/[A-Za-z0-9_]+\.md(, \"[^\"]*\")?")
_LOOKS_LIKE = re.compile(r"\blooks like\s+", re.I)
# gtest's fixed phrases, after which the test's own words may start.
_GTEST_VALUE = re.compile(
    r"(Expected: (true|false)|Actual: (true|false)|Which is: (\"(?:[^\"\\]|\\.)*\"|\S+))\s+")
_LITERAL = re.compile(r"^(\"(?:[^\"\\]|\\.)*\"|'.'|[-+]?[0-9][0-9.eE+-]*[uUlLfF]*)\s+")
# "T=1: ...", "d_model=12, n_heads=3: ...", "causal: ...": the case, not the mistake.
_CONTEXT = re.compile(r"^(\w+|\w+=[^\s:;,]+(, \w+=[^\s:;,]+)*): ")
# What common/testing.h's ThrowsInvalidArgument says, as a named mistake.
_VALIDATION = [
    ("but the call returned normally",
     "a bad argument is accepted: no std::invalid_argument is thrown"),
    ("expected std::invalid_argument, got another exception",
     "a bad argument throws something other than std::invalid_argument"),
    ("does not mention", "the std::invalid_argument message does not name the offending values"),
]
MIN_OWN_WORDS = 3     # "dx; see docs/..." labels a value, it names no mistake


def _lesson_cut(text):
    """Index where the pointer to the lesson starts, or len(text)."""
    m = _SEE_DOCS.search(text)
    return m.start() if m else len(text)


def _tidy(text):
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" ;,.:")


def diagnosis(message):
    """The mistake a failure message names, in the test's words, or "".

    In order: a "looks like" diagnosis; the test's own words before a pointer
    to the lesson; the words of the suite's exception check."""
    if not message:
        return ""
    m = _LOOKS_LIKE.search(message)
    if m:
        rest = message[m.end():]
        cut = min(_lesson_cut(rest), _index(rest, " (checked against "))
        return _tidy(rest[:cut])
    own = _own_words(message)
    if own:
        return own
    for phrase, mistake in _VALIDATION:
        if phrase in message:
            return mistake
    return ""


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
    words = _CONTEXT.sub("", _tidy(words))
    return words if len(words.split()) >= MIN_OWN_WORDS else ""


def _index(text, sub):
    i = text.find(sub)
    return i if i >= 0 else len(text)


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


def shown(message, policy, lab_status="graded"):
    """The output results.json gives a failed test under `policy`.

    full: the message. misconception: "looks like <mistake>; see <lesson>",
    or "failed" when the message names none. points: nothing. Under every
    policy a lab whose file did not compile, link or pass the static checks
    (lab_status other than "graded") shows its message: it is about the
    learner's file, not about the hidden test.
    """
    if lab_status not in ("graded",) or policy == "full":
        return message
    if policy == "points":
        return ""
    mistake = diagnosis(message)
    if not mistake:
        return GENERIC
    pointer = lesson_pointer(message)
    return "looks like %s%s" % (mistake, ("; " + pointer) if pointer else "")


def summarise_line(message):
    """A stored (one-line) failure message as the scoreboard's first failure
    quotes it: its named mistake first when it has one."""
    import limits
    import messages
    if diagnosis(message) and "looks like" in message:
        message = message[message.index("looks like"):]
    return messages.printable(message, limits.MESSAGE_CHARS)
