"""A quiz per lab: labs/NN_name/quiz.json, read by the course reader (./lab read)
and by ./lab quiz N in the terminal; checked by ./lab test (problems()).

The file:

    {"questions": [
      {"id": "scale", "stage": "before",
       "question": "Why divide the scores by sqrt(d_head)?",
       "options": [
         {"text": "...", "correct": true,  "why": "..."},
         {"text": "...", "correct": false, "why": "..."}]}]}

stage is "before" (asked before reading), "check" (while working) or "after"
(once the lab passes). Every option says why it is right or wrong; exactly one
is right. Ids are stable names, so progress kept in a browser survives edits
to the wording.

Translation: every string is a message of the gettext domain "quiz", its
English text the msgid (Python's gettext, standard library). ./lab translate
extracts them into po/quiz/messages.pot and merges that into po/quiz/<lang>.po
for every language of po/languages.json (course/catalogues.py); their quiz.mo, compiled where ./lab's own
catalogue is (learner/i18n.py: the kit's tools/lab/locale/, else .cache/locale/),
translates the quiz for ./lab read's page in that language and for ./lab quiz N
in ./lab's language. A string a catalogue lacks (or has fuzzy, because its
English changed) is shown in English.
"""
import json
import os
import random

from labs import ROOT, load_labs
from learner.console import FAILED, OK, USAGE, after, err, lab_arg
from learner.i18n import _

STAGES = ("before", "check", "after")
STAGE_NAMES = {"before": "Before you start", "check": "Check your understanding",
               "after": "After the lab"}
# The quiz's own words around its questions, in the terminal and on the
# reader's page: messages of the "quiz" domain too (first in its template), so
# a translated quiz is translated whole. {fields} are filled in by str.format
# here and by the page's script (tools/reader/reader.js).
UI = {
    "title": "Quiz",
    "right": "Right.",
    "wrong": "Not quite.",
    "progress": "{right} of {total} answered right (kept in this browser)",
    "reset": "start this quiz over",
    "start": "Lab {number} quiz: {title} ({count} questions; answer with a letter, q stops)",
    "prompt": "your answer: ",
    "letters": "answer with a letter from a to {last} (q stops)",
    "stopped": "stopped: {answered} of {count} answered, {first} right at the first try",
    "done": "done: {first} of {count} right at the first try",
}


def said(words, option):
    """The verdict on one option and its explanation, as the learner reads them
    after choosing it ("Right. because ..." / "答对了。因为……": no space after a
    full-width full stop). words: labels() of the quiz's language. The terminal
    and the reader's page both show this."""
    verdict = words["right"] if option["correct"] else words["wrong"]
    return after(verdict, option["why"])


def ui_messages():
    """The English of the quiz's own words, in a fixed order."""
    return [STAGE_NAMES[s] for s in STAGES] + list(UI.values())
MIN_QUESTIONS, MAX_QUESTIONS = 5, 8
DOMAIN = "quiz"


def quiz_path(lab, root=ROOT):
    return os.path.join(root, "labs", lab.dir, "quiz.json")


def problems_of(data, where):
    """["where: what is wrong"] for one quiz's parsed JSON (empty when it is right)."""
    out = []
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        return ["%s: expected an object with a list \"questions\"" % where]
    qs = data["questions"]
    if not MIN_QUESTIONS <= len(qs) <= MAX_QUESTIONS:
        out.append("%s: %d questions, expected %d to %d" % (where, len(qs), MIN_QUESTIONS,
                                                           MAX_QUESTIONS))
    ids = set()
    for i, q in enumerate(qs):
        at = "%s: question %d" % (where, i + 1)
        if not isinstance(q, dict):
            out.append(at + ": expected an object")
            continue
        qid = q.get("id")
        if not isinstance(qid, str) or not qid.strip():
            out.append(at + ": no \"id\" (a short stable name)")
        elif qid in ids:
            out.append(at + ": id %r is used twice" % qid)
        ids.add(qid)
        if q.get("stage") not in STAGES:
            out.append(at + ": stage %r, expected one of %s" % (q.get("stage"), ", ".join(STAGES)))
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            out.append(at + ": no question text")
        opts = q.get("options")
        if not isinstance(opts, list) or not 2 <= len(opts) <= 5:
            out.append(at + ": expected 2 to 5 options")
            continue
        right = 0
        for j, o in enumerate(opts):
            oat = "%s, option %d" % (at, j + 1)
            if not isinstance(o, dict):
                out.append(oat + ": expected an object")
                continue
            if not isinstance(o.get("text"), str) or not o["text"].strip():
                out.append(oat + ": no text")
            if not isinstance(o.get("why"), str) or not o["why"].strip():
                out.append(oat + ": no explanation (\"why\")")
            if not isinstance(o.get("correct"), bool):
                out.append(oat + ": \"correct\" must be true or false")
            right += o.get("correct") is True
        if right != 1:
            out.append(at + ": %d correct options, expected exactly one" % right)
    present = {q.get("stage") for q in qs if isinstance(q, dict)}
    for stage in STAGES:
        if stage not in present:
            out.append("%s: no question of stage %r" % (where, stage))
    return out


def load(lab, root=ROOT):
    """The lab's quiz (parsed), or None when it has none or it does not parse."""
    try:
        with open(quiz_path(lab, root)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def problems(labs=None, root=ROOT):
    """Every problem of every lab's quiz.json (./lab test's check)."""
    out = []
    for lab in labs or load_labs(root):
        path = quiz_path(lab, root)
        rel = os.path.relpath(path, root)
        try:
            with open(path) as f:
                data = json.load(f)
        except OSError:
            out.append("%s: missing" % rel)
            continue
        except ValueError as e:
            out.append("%s: not JSON (%s)" % (rel, e))
            continue
        out += problems_of(data, rel)
    return out


def translator(lang, root=ROOT):
    """A function text -> text in `lang` (es, pt-BR, pt_BR, zh-CN, tr_TR.UTF-8...:
    the quiz catalogue of its language), or the identity (English)."""
    from learner import i18n
    code = i18n.language_of(lang) if lang and lang != "en" else None
    if not code:
        return lambda s: s
    return i18n.translations(code, root, DOMAIN).gettext


def labels(lang, root=ROOT):
    """{name: the quiz's own words in `lang`}: UI's, and each stage's name."""
    tr = translator(lang, root)
    out = {k: tr(v) for k, v in UI.items()}
    out.update({s: tr(STAGE_NAMES[s]) for s in STAGES})
    return out


def translated(data, lang, root=ROOT):
    """The quiz with every string looked up in `lang`'s catalogue."""
    tr = translator(lang, root)
    return {"questions": [
        dict(q, question=tr(q["question"]),
             options=[dict(o, text=tr(o["text"]), why=tr(o["why"])) for o in q["options"]])
        for q in data["questions"]]}


def _ask(prompt, n, read, write, words):
    while True:
        try:
            answer = read(prompt).strip().lower()
        except EOFError:
            return None
        if answer in ("q", "quit"):
            return None
        if len(answer) == 1 and "a" <= answer < chr(ord("a") + n):
            return ord(answer) - ord("a")
        write("  " + words["letters"].format(last=chr(ord("a") + n - 1)))


def run_quiz(lab, data, read=input, write=print, words=None, title=None):
    """Asks the questions; a wrong answer is explained and asked again until
    right. words: labels() of the quiz's language (English by default).
    Returns (right at the first try, questions answered)."""
    words = words or labels(None)
    first_try = answered = 0
    qs = data["questions"]
    write(words["start"].format(number=lab.number, title=title or lab.title, count=len(qs)))
    for i, q in enumerate(qs):
        write("")
        write("%d/%d (%s) %s" % (i + 1, len(qs), words[q["stage"]], q["question"]))
        for j, o in enumerate(q["options"]):
            write("  %s) %s" % (chr(ord("a") + j), o["text"]))
        tries = 0
        while True:
            k = _ask(words["prompt"], len(q["options"]), read, write, words)
            if k is None:
                write("")
                write(words["stopped"].format(answered=answered, count=len(qs),
                                              first=first_try))
                return first_try, answered
            tries += 1
            o = q["options"][k]
            write("  " + said(words, o))
            if o["correct"]:
                break
        answered += 1
        first_try += tries == 1
    write("")
    write(words["done"].format(first=first_try, count=len(qs)))
    return first_try, answered


def cmd_quiz(args):
    labs = load_labs()
    if args.lab is None:
        err(_("lab quiz: which lab? ./lab quiz N (the labs are %(first)d to %(last)d)")
            % {"first": labs[0].number, "last": labs[-1].number})
        return USAGE
    lab = lab_arg(labs, args.lab)
    if lab is None:
        return USAGE
    data = load(lab)
    if data is None or problems_of(data, "quiz"):
        err(_("lab quiz: %s is missing or malformed") % os.path.relpath(quiz_path(lab), ROOT))
        return FAILED
    # The language ./lab chose (--lang, LANGUAGE, LC_ALL, LC_MESSAGES, LANG:
    # learner/i18n.py); a page folder (pt-BR) names the same catalogue (pt_BR).
    from learner import i18n
    lang = getattr(args, "lang", None) or i18n.lang()
    data = translated(data, lang)
    if getattr(args, "shuffle", False):
        random.shuffle(data["questions"])
    try:
        run_quiz(lab, data, words=labels(lang), title=i18n.title(lab))
    except KeyboardInterrupt:
        print()
    return OK
