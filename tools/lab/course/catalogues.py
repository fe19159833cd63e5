"""The catalogues of ./lab translate besides po4a's: the terminal's (po/cli/,
gettext domain "lab") and the quizzes' (po/quiz/, domain "quiz").

  - po/cli/messages.pot, what the learner reads in a terminal:
      - every literal of `_()`, `N_()` and `ngettext()` in the learner's
        modules (CLI_SOURCES), read with Python's own parser
        (python_messages()): xgettext 0.21 drops the characters of a Python
        string that are not ASCII (an em dash), and a message whose English
        lost one is never found;
      - the sentences the tests print (common/testing/sentences.h, context
        "test"), which the public tests' main() and learner/i18n.py alike
        print translated (common/testing/translation.h);
      - the named-mistake words of the public tests (mistake_words(): the
        MistakeTable entries of labs/*/*_test_util.h, context "mistake");
  - po/quiz/messages.pot: one message per question, option and explanation
    of every labs/NN_name/quiz.json (quiz_template_text()), and the quiz's
    own words (learner/quiz.py);
  - merge(): each template into po/<folder>/<lang>.po for every language of
    the registry (po/languages.json), creating a missing catalogue. A
    message whose English changed becomes fuzzy: msgfmt leaves fuzzy
    messages out of the compiled catalogue, so the learner reads English
    there, never msgmerge's guess;
  - missing_entries(): each message of the terminal's template that a
    language's catalogue has no entry for (the translations check), so that
    an English edit not merged, or an extractor that mangles a message, fails
    ./lab test instead of leaving the learner an English line.
"""
import ast
import collections
import glob
import os
import re
import shutil
import subprocess

import languages
from labs import ROOT

CLI_DIR = os.path.join("po", "cli")
CLI_DOMAIN = "lab"
QUIZ_DIR = os.path.join("po", "quiz")
QUIZ_DOMAIN = "quiz"
# The learner modules whose messages the terminal shows, and the authors'
# modules whose words go into pages: the translated pages' first line, the
# README's line per language, the marker words of a passage that names an
# instructors' path.
CLI_SOURCES = ["tools/lab/learner", "tools/lab/main.py", "tools/lab/progress.py",
               "tools/lab/course/translated_pages.py", "tools/lab/course/language_lines.py",
               "tools/lab/course/kit_references.py"]
# The sentences of the tests (common/testing/translation.h reads them back).
SENTENCES = "common/testing/sentences.h"
# The functions whose literal arguments are messages: {name: how many of its arguments are}.
KEYWORDS = {"_": 1, "N_": 1, "ngettext": 2}


def load_polib():
    try:
        import polib   # python3-polib (tools/setup.sh --dev)
    except ImportError:
        raise RuntimeError("python3-polib is missing (tools/setup.sh --dev installs it)")
    return polib


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


_HEADER = ('msgid ""\nmsgstr ""\n'
           '"Project-Id-Version: mha-labs\\n"\n'
           '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n'
           '"MIME-Version: 1.0\\n"\n'
           '"Content-Type: text/plain; charset=UTF-8\\n"\n'
           '"Content-Transfer-Encoding: 8bit\\n"\n\n')


def _entry_text(entry):
    """A POEntry as the templates write it: one line per string (no wrapping)."""
    return entry.__unicode__(wrapwidth=0) if hasattr(entry, "__unicode__") else str(entry)


def cli_sources(root=ROOT):
    out = []
    for src in CLI_SOURCES:
        full = os.path.join(root, src)
        if os.path.isdir(full):
            out += sorted(os.path.join(src, f) for f in os.listdir(full) if f.endswith(".py"))
        elif os.path.isfile(full):
            out.append(src)
    return out


Message = collections.namedtuple("Message", "msgid plural file line")


def python_messages(root=ROOT):
    """[Message] of every call of a KEYWORDS function whose message arguments
    are string literals, in each file's order: the exact strings the code
    looks up."""
    out = []
    for rel in cli_sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            tree = ast.parse(f.read(), rel)
        found = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                f, ast.Attribute) else None
            n = KEYWORDS.get(name)
            args = node.args[:n] if n else []
            if len(args) == n and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                      for a in args):
                found.append(Message(args[0].value, args[1].value if n == 2 else None, rel,
                                     node.lineno))
        out += sorted(found, key=lambda m: m.line)
    return out


_TABLE = re.compile(r"MistakeTable\s+(\w+)\s*\(\s*(\"[^\"]*\"|\w+)\s*,\s*\{(.*?)\}\s*\)\s*;", re.S)
_ENTRY = re.compile(r"\{\s*\"(\w+)\"\s*,\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\}")
_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
_SENTENCE = re.compile(r"((?:^//[^\n]*\n)*)inline constexpr char (k\w+)\[\]\s*=\s*"
                       r"((?:\"(?:[^\"\\]|\\.)*\"\s*)+);", re.M)


def _unescape(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _joined(literals):
    return "".join(_unescape(x) for x in _LITERAL.findall(literals))


def mistake_words(root=ROOT):
    """[(words, name, file)]: every MistakeTable entry of the public tests'
    helpers (labs/*/*.h, *.cc), the English a failure prints after "looks
    like" or before "; see docs/...". Words shared by two entries come once."""
    out, seen = [], set()
    labs_dir = os.path.join(root, "labs")
    for d in sorted(os.listdir(labs_dir)):
        full = os.path.join(labs_dir, d)
        if not os.path.isdir(full):
            continue
        for fn in sorted(os.listdir(full)):
            if not fn.endswith((".h", ".cc")):
                continue
            rel = "labs/%s/%s" % (d, fn)
            with open(os.path.join(full, fn), encoding="utf-8") as f:
                text = f.read()
            for table in _TABLE.finditer(text):
                for entry in _ENTRY.finditer(table.group(3)):
                    words = _joined(entry.group(2))
                    if words and words not in seen:
                        seen.add(words)
                        out.append((words, entry.group(1), rel))
    return out


# Where the public tests name the axes of what they compare: a `...Axes = {...}`
# list, or the list right after AllClose's or MatchesGolden's tolerance (kExact, ...).
_AXES = [re.compile(r'\w*[Aa]xes\w*\s*(?:=|\()\s*\{\s*("[^"]*"(?:\s*,\s*"[^"]*")*)\s*\}'),
         re.compile(r'\bk[A-Z]\w*,\s*\{\s*("[^"]*"(?:\s*,\s*"[^"]*")*)\s*\}')]


def axis_names(root=ROOT):
    """[(name, file)]: the names the public tests give the axes of the tensors
    they compare (an index in a failure: "[head 1, query 2, key 0]"), each
    once, in the labs' order; a list of identifiers (the names of mistakes)
    is none."""
    out, seen = [], set()
    for rel in sorted(glob.glob(os.path.join(root, "labs", "*", "*.[hc]*"))):
        with open(rel, encoding="utf-8") as f:
            text = f.read()
        for pattern in _AXES:
            for m in pattern.finditer(text):
                for name in _LITERAL.findall(m.group(1)):
                    if name and not re.fullmatch(r"\w+_\w+", name) and name not in seen:
                        seen.add(name)
                        out.append((name, os.path.relpath(rel, root)))
    return out


def test_sentences(root=ROOT):
    """[(template, its name, the comment above it)] of common/testing/sentences.h."""
    with open(os.path.join(root, SENTENCES), encoding="utf-8") as f:
        text = f.read()
    out = []
    for m in _SENTENCE.finditer(text):
        comment = " ".join(l[2:].strip() for l in m.group(1).splitlines())
        out.append((_joined(m.group(3)), m.group(2), comment))
    return out


# ------------------------------------------------------ the terminal's catalogue

_FORMAT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]")


def _python_format(text):
    return bool(_FORMAT.search(text.replace("%%", "")))


def cli_entries(root=ROOT):
    """The POEntries of po/cli/messages.pot, in its order: the modules'
    messages by file (a message several files use comes once, where it first
    appears), then the tests' sentences, then the mistakes' words."""
    po = load_polib()
    first, refs, plural = {}, collections.defaultdict(list), {}
    for m in python_messages(root):
        first.setdefault(m.msgid, (m.file, m.line))
        if m.file not in refs[m.msgid]:
            refs[m.msgid].append(m.file)
        if m.plural:
            plural[m.msgid] = m.plural
    entries = []
    for msgid in sorted(first, key=lambda k: first[k]):
        e = po.POEntry(msgid=msgid, msgstr="", occurrences=[(f, "") for f in sorted(refs[msgid])])
        if msgid in plural:
            e.msgid_plural, e.msgstr, e.msgstr_plural = plural[msgid], "", {0: "", 1: ""}
        if _python_format(msgid) or _python_format(plural.get(msgid, "")):
            e.flags.append("python-format")
        entries.append(e)
    for template, name, comment in test_sentences(root):
        entries.append(po.POEntry(
            msgctxt="test", msgid=template, msgstr="", occurrences=[(SENTENCES, "")],
            flags=["python-format"] if "%(" in template else [],
            comment="%s: %s Keep each %%(name)s as it is: the test writes its value there."
                    % (name, comment)))
    for name, rel in axis_names(root):
        entries.append(po.POEntry(
            msgctxt="axis", msgid=name, msgstr="", occurrences=[(rel, "")],
            comment="The name of an axis inside an index of a failure: \"[head 1, query 2, "
                    "key 0]\"; a short noun."))
    for words, name, rel in mistake_words(root):
        entries.append(po.POEntry(
            msgctxt="mistake", msgid=words, msgstr="", occurrences=[(rel, "")],
            comment=("A public test's mistake %r: printed after \"looks like\" or "
                     "before \"; see docs/NN_name.md\"." % name)))
    return entries


def cli_template_text(root=ROOT):
    """The text of po/cli/messages.pot."""
    header = ('# The terminal messages of ./lab (learner commands), the tests\' sentences and\n'
              '# the public tests\' named mistakes. Generated by ./lab translate from\n'
              '# tools/lab/learner/, common/testing/sentences.h and labs/*/*_test_util.h:\n'
              '# edit those, not this file.\n')
    return header + _HEADER + "\n".join(_entry_text(e) for e in cli_entries(root))


def _template_header(comment):
    """A template's first lines: `comment` (each line a "# " line), then
    gettext's header entry."""
    return ("".join("# %s\n" % line for line in comment.split("\n")) +
            'msgid ""\nmsgstr ""\n'
            '"Project-Id-Version: mha-labs\\n"\n'
            '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n'
            '"MIME-Version: 1.0\\n"\n'
            '"Content-Type: text/plain; charset=UTF-8\\n"\n'
            '"Content-Transfer-Encoding: 8bit\\n"\n\n')


def write_and_merge(d, text, merge, root=ROOT):
    """Writes d/messages.pot; merges it into d/<lang>.po (creating an empty
    catalogue for a language that has none) unless merge is False. A message
    whose English changed becomes fuzzy (msgmerge), so it shows English."""
    os.makedirs(d, exist_ok=True)
    pot = os.path.join(d, "messages.pot")
    with open(pot, "w", encoding="utf-8") as f:
        f.write(text)
    if not merge:
        return
    for lang in languages.codes(root):
        po = os.path.join(d, lang + ".po")
        if not os.path.isfile(po):
            run(["msginit", "--no-translator", "--no-wrap", "-l", lang + ".UTF-8", "-i", pot,
                  "-o", po])
        else:
            before = active_messages(po)
            run(["msgmerge", "--quiet", "--update", "--backup=none", "--no-wrap", "--previous",
                 po, pot])
            drop_guesses(po, before, wrap=False)


def active_messages(path):
    """{(context, English)} of a catalogue's messages that are not obsolete
    (empty when there is no catalogue): what drop_guesses() compares with."""
    if not os.path.isfile(path):
        return set()
    return {(e.msgctxt, e.msgid) for e in load_polib().pofile(path) if not e.obsolete}


def drop_guesses(path, before, wrap=True):
    """Clears msgmerge's fuzzy guesses from a catalogue just merged; `before`
    is active_messages() of it before the merge. A message that is new in
    this merge and fuzzy is an edit when its previous English (#| msgid) was
    a message before and is gone now: it keeps its fuzzy translation, which
    shows the translator what changed. Otherwise msgmerge matched new text to
    another message, current or long obsolete ("Lab 14: Sliding-window
    attention" to "Lab 2: batched attention"): it becomes untranslated, so
    nobody takes the guess for a translation to review. Neither is ever
    shown: po4a and msgfmt leave fuzzy messages out. Returns how many it
    cleared."""
    polib = load_polib()
    po = polib.pofile(path, wrapwidth=0)
    now = {(e.msgctxt, e.msgid) for e in po if not e.obsolete}

    def edited(e):
        previous = (e.previous_msgctxt or e.msgctxt, e.previous_msgid)
        return previous in before and previous not in now
    guesses = [e for e in po if e.fuzzy and not e.obsolete and
               (e.msgctxt, e.msgid) not in before and not edited(e)]
    for e in guesses:
        e.msgstr = ""
        e.msgstr_plural = {k: "" for k in e.msgstr_plural}
        e.flags.remove("fuzzy")
        e.previous_msgid = e.previous_msgid_plural = e.previous_msgctxt = None
    if guesses:
        po.save(path)
    if guesses or not wrap:
        # polib's layout, made gettext's again (po4a's catalogues wrap; po/cli and
        # po/quiz do not), so a merge changes only what it must. Unwrapped
        # catalogues pass through msgcat every time: one saved by polib (a
        # translator's script) has its #: references on one line, and the
        # layout flipped between runs and branches; gettext's is the one kept.
        run(["msgcat", "-o", path, path] + ([] if wrap else ["--no-wrap"]))
    return len(guesses)


def update_cli(root=ROOT, merge=True):
    """Writes po/cli/messages.pot and merges it into po/cli/<lang>.po."""
    write_and_merge(os.path.join(root, CLI_DIR), cli_template_text(root), merge, root)


def quiz_messages(root=ROOT):
    """[(English text, [(quiz file, question id)], [what it is])]: the quiz's
    own words (learner/quiz.py's ui_messages()), then every
    labs/NN_name/quiz.json, in the labs' order then the file's: each
    question, then each option's text and its explanation. A text used twice
    is one message with both references."""
    from labs import load_labs
    from learner import quiz
    order, refs, roles = [], {}, {}
    # First the quiz's own words (the terminal's and the page's), then the quizzes.
    for text in quiz.ui_messages():
        order.append(text)
        refs[text] = [("tools/lab/learner/quiz.py", "")]
        roles[text] = ["the quiz's own words, in the terminal and on the reader's page; "
                       "keep each {field} as it is"]
    for lab in load_labs(root):
        data = quiz.load(lab, root)
        if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
            continue
        rel = os.path.relpath(quiz.quiz_path(lab, root), root).replace(os.sep, "/")
        for q in data["questions"]:
            if not isinstance(q, dict):
                continue
            qid = str(q.get("id", "?"))
            items = [(q.get("question"), "the question (%s)" % q.get("stage"))]
            for k, o in enumerate(q.get("options") or []):
                if not isinstance(o, dict):
                    continue
                right = "the right answer" if o.get("correct") is True else "a wrong answer"
                items.append((o.get("text"), "option %s, %s" % (chr(ord("a") + k), right)))
                items.append((o.get("why"), "why option %s is %s" % (
                    chr(ord("a") + k), "right" if o.get("correct") is True else "wrong")))
            for text, role in items:
                if not isinstance(text, str) or not text.strip():
                    continue
                if text not in refs:
                    order.append(text)
                    refs[text], roles[text] = [], []
                refs[text].append((rel, qid))
                roles[text].append("%s: %s" % (qid, role))
    return [(t, refs[t], roles[t]) for t in order]


def quiz_template_text(root=ROOT):
    """The text of po/quiz/messages.pot (deterministic: the quizzes' order)."""
    polib = load_polib()
    entries = []
    for text, refs, roles in quiz_messages(root):
        e = polib.POEntry(msgid=text, msgstr="", occurrences=refs, comment="\n".join(roles))
        entries.append(e.__unicode__(wrapwidth=0) if hasattr(e, "__unicode__") else str(e))
    header = _template_header(
        "The quizzes of the labs (./lab quiz N, and ./lab read's pages): every question,\n"
        "option and explanation of labs/*/quiz.json. Generated by ./lab translate:\n"
        "edit the quiz.json files, not this file. Keep every number, formula and\n"
        "identifier as in the English.")
    return header + "\n".join(entries)


def update_quiz(root=ROOT, merge=True):
    """Writes po/quiz/messages.pot and merges it into po/quiz/<lang>.po."""
    write_and_merge(os.path.join(root, QUIZ_DIR), quiz_template_text(root), merge, root)


_TOOLS = ("po4a", "msgfmt", "msgmerge", "msginit", "msgcat", "git")


def missing_tools():
    """What ./lab translate and the check need and this machine lacks."""
    out = [t for t in _TOOLS if shutil.which(t) is None]
    try:
        load_polib()
    except RuntimeError:
        out.append("python3-polib")
    return out


def need_tools():
    missing = missing_tools()
    if missing:
        raise RuntimeError("%s missing: tools/setup.sh installs po4a, gettext and python3-polib "
                           "in the instructors' repository" % ", ".join(missing))


def _key(entry):
    return (entry.msgctxt or "", entry.msgid)


def missing_entries(root=ROOT, folder=None):
    """["po/cli/es.po has no entry for ..."]: each message of the terminal's
    template (made today from the code under root) that a language's
    catalogue (in `folder`, po/cli/ by default) lacks, or has only as obsolete."""
    polib = load_polib()
    wanted = cli_entries(root)
    folder = folder or os.path.join(root, CLI_DIR)
    out = []
    for lang in languages.codes(root):
        rel = os.path.join(CLI_DIR, lang + ".po")
        path = os.path.join(folder, lang + ".po")
        have = {_key(e) for e in polib.pofile(path) if not e.obsolete} \
            if os.path.isfile(path) else set()
        for e in wanted:
            if _key(e) not in have:
                where = ", ".join(f for f, _ in e.occurrences)
                out.append("%s has no entry for %s's %s%r (run ./lab translate, then translate "
                           "it)" % (rel, where, "%s " % e.msgctxt if e.msgctxt else "",
                                    e.msgid[:70]))
    return out
