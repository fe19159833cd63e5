"""The learner's language: what ./lab prints, and which pages and hints it names.

The language is `./lab --lang L` if given, else the first of LANGUAGE,
LC_ALL, LC_MESSAGES and LANG that is set, looked up in the registry of
languages (po/languages.json, tools/lab/languages.py): es* is Spanish ("es"),
pt* Brazilian Portuguese ("pt_BR"), zh* Simplified Chinese ("zh_CN"), tr*
Turkish ("tr"); anything else (C, en_US.UTF-8, fr_FR, unset) is English. The messages come from a gettext catalogue per language,
po/cli/<lang>.po, compiled to lab.mo (./lab export-kit writes it into the
kit's locale folder next to this package; in the instructors' repository it is
compiled into .cache/locale/ on first use, with msgfmt). A message a
catalogue lacks, or a missing catalogue, prints the English.

Besides ./lab's own sentences, the public tests' words are translated here
(test_text()), as the tests' own main() translates them in the terminal
(common/testing/translation.h, whose rules this follows): the sentences of
common/testing/sentences.h (the catalogue's context "test"), the named
mistakes by their English words (context "mistake"), and every lesson a
message names becomes the translated one (the lesson's page in its
language's folder of docs) when it exists.
"""
import argparse
import gettext
import os
import re
import shutil
import subprocess

import languages
from labs import ROOT

DOMAIN = "lab"
_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_state = {"lang": None, "tr": gettext.NullTranslations()}


def language_of(value, root=ROOT):
    """The catalogue code of the language a LANG or --lang value names ("es"
    for es*, "pt_BR" for pt*, "zh_CN" for zh*, "tr" for tr*), else None
    (English)."""
    lang = languages.of_value(value, root)
    return lang.po if lang else None


def lang_options(root=ROOT):
    """The --lang values, English first: en es pt zh tr (each language's first
    prefix in po/languages.json)."""
    return ["en"] + [lang.env[0] for lang in languages.load(root)]


def unknown_language(value, root=ROOT):
    """True when a --lang value names no language of the course (English is
    en*, C or POSIX)."""
    v = (value or "").strip()
    return bool(v) and language_of(v, root) is None and \
        not (v.lower().startswith("en") or v in ("C", "POSIX") or v.startswith("C."))


def page_dir(lang, root=ROOT):
    """The folder of `lang`'s pages (docs/<folder>/, hints.<folder>.txt), or None."""
    found = languages.by_po(lang, root) if lang else None
    return found.pages if found else None


def choose(cli_value=None, environ=None):
    """The language a command speaks: the --lang value, else the environment's."""
    if cli_value:
        return language_of(cli_value)
    env = os.environ if environ is None else environ
    for name in _ENV:
        value = env.get(name, "")
        if name == "LANGUAGE":
            value = value.split(":")[0]
        if value:
            return language_of(value)
    return None


def strip_lang_option(argv):
    """(argv without `--lang L` / `--lang=L`, L or None): the option may stand
    anywhere in the command line."""
    out, lang, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a == "--lang" and i + 1 < len(argv):
            lang, i = argv[i + 1], i + 2
            continue
        if a.startswith("--lang="):
            lang, i = a.split("=", 1)[1], i + 1
            continue
        out.append(a)
        i += 1
    return out, lang


# A domain's catalogues: po/<folder>/<lang>.po. "lab" holds ./lab's messages,
# "quiz" the quizzes' questions (learner/quiz.py).
PO_FOLDERS = {DOMAIN: "cli", "quiz": "quiz"}


def compiled(lang, root=ROOT, domain=DOMAIN):
    """The .mo of `lang` in `domain`: the kit's (tools/lab/locale/), or one
    compiled from po/<folder>/<lang>.po into .cache/locale/ (recompiled when
    the .po is newer). None if there is none."""
    shipped = os.path.join(root, "tools", "lab", "locale", lang, "LC_MESSAGES", domain + ".mo")
    if os.path.isfile(shipped):
        return shipped
    po = os.path.join(root, "po", PO_FOLDERS[domain], lang + ".po")
    if not os.path.isfile(po) or shutil.which("msgfmt") is None:
        return None
    mo = os.path.join(root, ".cache", "locale", lang, "LC_MESSAGES", domain + ".mo")
    try:
        if not os.path.isfile(mo) or os.path.getmtime(mo) < os.path.getmtime(po):
            os.makedirs(os.path.dirname(mo), exist_ok=True)
            # Written beside, then renamed: two ./lab at once never read half a file.
            tmp = "%s.%d" % (mo, os.getpid())
            subprocess.run(["msgfmt", "-o", tmp, po], check=True, capture_output=True,
                           timeout=60)
            os.replace(tmp, mo)
    except (OSError, subprocess.SubprocessError):
        return None
    return mo


def translations(lang, root=ROOT, domain=DOMAIN):
    """A gettext translations object of `lang` (None: English) in `domain`;
    a missing catalogue or message gives the English."""
    mo = compiled(lang, root, domain) if lang else None
    if mo:
        try:
            with open(mo, "rb") as f:
                return gettext.GNUTranslations(f)
        except (OSError, gettext.error):
            pass
    return gettext.NullTranslations()


def setup(lang, root=ROOT):
    """Makes `lang` (None: English) the language of every later message,
    argparse's own words included (its usage line, its headings, the help of
    -h and its errors: ARGPARSE_WORDS)."""
    _state["lang"], _state["tr"] = lang, translations(lang, root)
    # argparse looks its words up through these two names of its module, at
    # the time it needs each word: a parser made afterwards speaks `lang`.
    argparse._ = _ if lang else gettext.gettext
    argparse.ngettext = ngettext if lang else gettext.ngettext


def lang():
    return _state["lang"]


def _(message):
    return _state["tr"].gettext(message)


def ngettext(singular, plural, n):
    return _state["tr"].ngettext(singular, plural, n)


def page(path, root=ROOT):
    """docs/NN_name.md (or any English page) as the current language's page
    when that exists (in the language's folder of docs), else unchanged."""
    d = page_dir(_state["lang"], root)
    if not d or not path.startswith("docs/") or path.startswith("docs/" + d + "/"):
        return path
    translated = "docs/%s/%s" % (d, path[len("docs/"):])
    return translated if os.path.isfile(os.path.join(root, translated)) else path


def hints_path(lab_dir, root=ROOT):
    """The hints file of a lab in the current language, or the English one."""
    d = page_dir(_state["lang"], root)
    english = os.path.join(root, "labs", lab_dir, "hints.txt")
    if d:
        translated = os.path.join(root, "labs", lab_dir, "hints.%s.txt" % d)
        if os.path.isfile(translated):
            return translated
    return english


def read_hints(path):
    """The paragraphs of a hints file; a translated one's first line (its
    "translated: N %" header, starting with "# ") is not a hint."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    lines = text.splitlines()
    if lines and lines[0].startswith("# ") and os.path.basename(path) != "hints.txt":
        lines = lines[1:]
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", "\n".join(lines)) if p.strip()]


# The kinds of value of the tests' sentences, by name (common/testing/translation.h).
def _is_count(name):
    return name in ("lab", "total") or name.endswith("count")


def _is_bounded(name):
    return _is_count(name) or name.endswith(("_shape", "_index")) or name in ("doc", "mistake")


_PIECE = re.compile(r"%\((\w+)\)s|%%")
# How deep a value is translated inside another sentence's value.
_MAX_DEPTH = 3


def _entries(context):
    """{English: translation} of the catalogue's entries under `context`."""
    catalog = getattr(_state["tr"], "_catalog", None) or {}
    prefix = context + "\x04"
    return {k[len(prefix):]: v for k, v in catalog.items()
            if isinstance(k, str) and k.startswith(prefix) and v}


def _sentence(english, any_mistake):
    """(regex, names) of a test sentence, or None if it cannot be read back."""
    pattern, names, last_end = "", [], 0
    pieces = list(_PIECE.finditer(english))
    for i, m in enumerate(pieces):
        pattern += re.escape(english[last_end:m.start()])
        last_end = m.end()
        if m.group(0) == "%%":
            pattern += "%"
            continue
        name = m.group(1)
        last = m.end() == len(english)
        if (m.start() == 0 and not _is_bounded(name)) or (
                i + 1 < len(pieces) and pieces[i + 1].start() == m.end()):
            return None
        if _is_count(name):
            pattern += r"(\d+)"
        elif name.endswith("_shape"):
            pattern += r"(\([0-9, ]*\))"
        elif name.endswith("_index"):
            pattern += r"(\[[^\]\n]*\])"
        elif name == "doc":
            pattern += r"(docs/[A-Za-z0-9_./-]+?\.md)"
        elif name == "mistake":
            if not any_mistake:
                return None
            pattern += "(" + any_mistake + ")"
        else:
            pattern += "(.+)" if last else "(.+?)"
        names.append(name)
    pattern += re.escape(english[last_end:])
    return re.compile(pattern), names


def _sentences():
    """The catalogue's translated test sentences, the longest words first,
    and its mistakes: ([(regex, names, translation)], {English: words})."""
    key = id(_state["tr"])
    if _state.get("sentences_of") != key:
        mistakes = _entries("mistake")
        any_mistake = "|".join(re.escape(m) for m in sorted(mistakes, key=len, reverse=True))
        found = []
        for english, translation in _entries("test").items():
            s = _sentence(english, any_mistake)
            if s:
                words = len(_PIECE.sub("", english))
                found.append((words, s[0], s[1], translation))
        found.sort(key=lambda x: -x[0])
        _state["sentences"] = ([f[1:] for f in found], mistakes)
        _state["sentences_of"] = key
    return _state["sentences"]


def _index(index):
    """"[head 1, query 2, key 0]" with each axis's name translated (context "axis")."""
    axes = _entries("axis")
    parts = []
    for part in index[1:-1].split(", ") if len(index) > 2 else []:
        name, space, number = part.rpartition(" ")
        parts.append(axes.get(name, name) + space + number if space else part)
    return "[" + ", ".join(parts) + "]"


def _fill(translation, values):
    return _PIECE.sub(lambda m: "%" if m.group(0) == "%%" else values.get(m.group(1), m.group(0)),
                      translation)


def _translated(text, root, depth):
    sentences, mistakes = _sentences()
    out, pos = [], 0
    while sentences and pos < len(text):
        best = None
        for regex, names, translation in sentences:
            m = regex.search(text, pos)
            if m and m.end() > m.start() and (best is None or m.start() < best[0].start()):
                best = (m, names, translation)
        if best is None:
            break
        m, names, translation = best
        values = {}
        for name, value in zip(names, m.groups()):
            if name == "mistake":
                value = mistakes.get(value, value)
            elif name == "doc":
                value = page(value, root)
            elif name.endswith("_index"):
                value = _index(value)
            elif not _is_bounded(name) and depth < _MAX_DEPTH:
                value = _translated(value, root, depth + 1)
            values[name] = value
        out += [text[pos:m.start()], _fill(translation, values)]
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def test_text(text, root=ROOT):
    """A public test's words (a failure, a stub's message) in the current
    language: every sentence of the tests the catalogue translates, with the
    mistake's words and the lesson it names in that language. English when
    no language is set."""
    if not _state["lang"] or not text:
        return text
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            text = _(prefix) + text[len(prefix):]
    return _translated(text, root, 0)


def N_(message):
    """Marks a message for the catalogue where it is defined; _() translates it
    where it is printed."""
    return message


# The words of Python 3.11's argparse (Debian 12's) that a learner's command
# line can show: setup() gives argparse their translations.
ARGPARSE_WORDS = (
    N_("usage: "), N_("positional arguments"), N_("options"),
    N_("show this help message and exit"), N_("argument %(argument_name)s: %(message)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("the following arguments are required: %s"), N_("unrecognized arguments: %s"),
    N_("expected one argument"), N_("invalid %(type)s value: %(value)r"),
    N_("ambiguous option: %(option)s could match %(matches)s"))


# What ./lab says before a compiler's or a linker's own words
# (reports/messages.py): test_text() translates these beginnings.
_PREFIXES = (N_("does not compile: "), N_("does not link: "),
             N_("does not link (the linker gave no message)"))


_TITLES = {}


def without_lab_number(heading):
    """A lesson's heading without its "Lab N:" in whatever language
    ("Laboratorio 2: ", "实验 2：", "Laboratuvar 2: ")."""
    return re.sub(r"^[^:：]*\d+\s*[:：]\s*", "", heading)


def capitalised(title, lang):
    """The title with its first letter a capital, as the language writes it
    (Turkish: i becomes İ, ı becomes I; Chinese has no capitals): a lesson's
    heading is lower case after "Lab N:", a table or a list starts it with a
    capital as the registry's English titles do."""
    for i, ch in enumerate(title):
        if ch.isalpha():
            if not ch.islower():
                return title
            turkish = {"i": "\u0130", "\u0131": "I"} if (lang or "").startswith("tr") else {}
            return title[:i] + turkish.get(ch, ch.upper()) + title[i + 1:]
    return title


def _first_heading(path):
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# "):
                    return line[2:].strip()
    except OSError:
        pass
    return None


def title(lab):
    """The lab's title in the current language: its translated lesson's
    heading without the "Lab N:" prefix, once that heading is translated;
    else the registry's English title."""
    if not _state["lang"]:
        return lab.title
    key = (_state["lang"], lab.lesson_file)
    if key not in _TITLES:
        translated = page(lab.lesson_file, lab.root)
        heading = _first_heading(os.path.join(lab.root, translated))
        _TITLES[key] = lab.title
        if translated != lab.lesson_file and heading and \
                heading != _first_heading(os.path.join(lab.root, lab.lesson_file)):
            _TITLES[key] = capitalised(without_lab_number(heading), _state["lang"]) or lab.title
    return _TITLES[key]
