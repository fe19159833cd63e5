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

Besides ./lab's own sentences, the public tests' named mistakes are
translated here, by their English words (the C++ tests print English; the
catalogue holds each MistakeTable entry under the context "mistake"), and
every lesson or hints file a message names becomes the translated one (the
lesson's page in its language's folder of docs) when it exists.
"""
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
    """Makes `lang` (None: English) the language of every later message."""
    _state["lang"], _state["tr"] = lang, translations(lang, root)


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


_DOC = r"(docs/[\w./-]+\.md)"
_SEE = re.compile(r'see %s, "Classic mistakes"' % _DOC)
_NOT_IMPLEMENTED = re.compile(r"lab (\d+): (\S+) is not implemented yet, see %s" % _DOC)
# What AllClose and MatchesGolden say (common/testing/testing.cc).
_ALLCLOSE = re.compile(r"(\d+) of (\d+) elements differ; first at (\[[^\]]*\]): actual (\S+), "
                       r"expected (\S+); max \|error\| (\S+) at (\[[^\]]*\]): actual (\S+), "
                       r"expected (\S+) \(atol (\S+), rtol ([^)\s]+)\)")
_CHECKED = re.compile(r"\bchecked against (\S+): ")
_SHAPES = re.compile(r"\bshape mismatch: actual (\([^)]*\)), expected (\([^)]*\))")


def _mistakes():
    """{English words: translated words} of the catalogue's "mistake" context."""
    catalog = getattr(_state["tr"], "_catalog", None) or {}
    out = {}
    for key, value in catalog.items():
        if isinstance(key, str) and key.startswith("mistake\x04") and value:
            out[key[len("mistake\x04"):]] = value
    return out


def test_text(text, root=ROOT):
    """A public test's words (a failure, a stub's message) in the current
    language: the named mistakes' words and sentence, "not implemented yet",
    and the lesson they point to. English when no language is set."""
    if not _state["lang"] or not text:
        return text
    for english, words in sorted(_mistakes().items(), key=lambda kv: -len(kv[0])):
        text = text.replace(english + "; see docs/", words + "; see docs/")
    text = _SEE.sub(lambda m: _('see %s, "Classic mistakes"') % page(m.group(1), root), text)
    text = text.replace("looks like ", _("looks like "))
    text = _ALLCLOSE.sub(lambda m: _(
        "%(bad)s of %(n)s elements differ; first at %(first)s: actual %(a1)s, expected "
        "%(e1)s; max |error| %(err)s at %(worst)s: actual %(a2)s, expected %(e2)s (atol "
        "%(atol)s, rtol %(rtol)s)") % dict(zip(
            ("bad", "n", "first", "a1", "e1", "err", "worst", "a2", "e2", "atol", "rtol"),
            m.groups())), text)
    text = _CHECKED.sub(lambda m: _("checked against %s: ") % m.group(1), text)
    text = _SHAPES.sub(lambda m: _("shape mismatch: actual %(actual)s, expected %(expected)s")
                       % {"actual": m.group(1), "expected": m.group(2)}, text)
    if text.startswith("does not compile: "):
        text = _("does not compile: ") + text[len("does not compile: "):]
    return _NOT_IMPLEMENTED.sub(
        lambda m: _("lab %(n)s: %(name)s is not implemented yet, see %(doc)s")
        % {"n": m.group(1), "name": m.group(2), "doc": page(m.group(3), root)}, text)


def N_(message):
    """Marks a message for the catalogue where it is defined; _() translates it
    where it is printed."""
    return message


_TITLES = {}


def without_lab_number(heading):
    """A lesson's heading without its "Lab N:" in whatever language
    ("Laboratorio 2: ", "实验 2：", "Laboratuvar 2: ")."""
    return re.sub(r"^[^:：]*\d+\s*[:：]\s*", "", heading)


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
            _TITLES[key] = without_lab_number(heading) or lab.title
    return _TITLES[key]
