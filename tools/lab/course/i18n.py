"""The course in Spanish and Brazilian Portuguese: ./lab translate.

The English Markdown and text files are the only source. po4a (Debian's
po4a, Text module with its markdown option; po/po4a.cfg) cuts each into
blocks, one gettext message per block, in po/messages.pot; po/es.po and
po/pt_BR.po translate them. A block whose English changed becomes fuzzy and
the generated page shows the English block there until it is translated
again (po4a's default), so no page ever shows a stale sentence.

What this module adds around po4a:
  - sources(): the learner-facing part of README.md and docs/TOLERANCES.md,
    cut by section into po/sources/*.md (po4a translates whole files);
  - finish(): each generated page opens with one line, in its language,
    saying how much of it is current (blocks translated and not fuzzy) and
    the English commit it follows (the last commit that touched the English
    file), and its relative links point from where the page lives (to the
    translated page where one exists in that language);
  - problems(): what ./lab test's translations check fails on (a page that
    is not what its catalogue makes today, an invalid catalogue, a
    translated block whose code spans, numbers, link targets or fenced code
    differ from its English block, a link to a missing file) and shares():
    how much of each language is translated (lagging translators fail
    nothing);
  - the terminal's catalogue, po/cli/: xgettext over the learner's Python
    modules plus the named-mistake sentences of the public tests
    (mistake_words(): the MistakeTable entries of labs/*/*_test_util.h).

./lab translate              update sources, templates, catalogues and pages
./lab translate --pages      regenerate only the pages from the catalogues as
                             they are (what the lead runs after merging the
                             translators' catalogues; no catalogue changes)
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

from labs import ROOT

CFG = os.path.join("po", "po4a.cfg")
# po4a's language code -> the suffix of its pages (docs/<dir>/, hints.<dir>.txt).
LANGS = collections.OrderedDict([("es", "es"), ("pt_BR", "pt-BR")])
CLI_DIR = os.path.join("po", "cli")
CLI_DOMAIN = "lab"
# The learner modules whose messages the terminal shows.
CLI_SOURCES = ["tools/lab/learner", "tools/lab/main.py"]

# (English file, po4a's input, the sections kept (None: all but `drop`), sections dropped)
Extract = collections.namedtuple("Extract", "source target keep drop")
EXTRACTS = [
    Extract("README.md", "po/sources/README.learner.md",
            keep=("On macOS, Windows, or Linux without root", "Work on a lab"), drop=()),
    Extract("docs/TOLERANCES.md", "po/sources/TOLERANCES.learner.md",
            keep=None, drop=("Rules for test authors",)),
]

_HEADER = {
    "es": ("*Traducción: {pct} al día ({cur} de {tot} bloques); sigue al original en inglés "
           "`{src}` del commit {commit}. Un bloque aún sin traducir se muestra en inglés.*"),
    "pt_BR": ("*Tradução: {pct} em dia ({cur} de {tot} blocos); acompanha o original em "
              "inglês `{src}` do commit {commit}. Um bloco ainda sem tradução aparece em "
              "inglês.*"),
}
_UNCOMMITTED = {"es": "(cambios aún sin commit)", "pt_BR": "(alterações ainda sem commit)"}
# The header of a hints file: a line the hint reader skips (learner/i18n.py).
HINTS_HEADER_MARK = "# "


def _pct(lang, cur, tot):
    share = 100.0 * cur / tot if tot else 100.0
    text = ("%.0f" % share) if share in (0.0, 100.0) or share >= 1 else "%.1f" % share
    if cur < tot and text == "100":
        text = "99"
    return text + (" %" if lang == "es" else "%")


# ---------------------------------------------------------------- po4a.cfg

Page = collections.namedtuple("Page", "source outputs")   # outputs: {po lang: path}


def pages(root=ROOT):
    """The [type: text] lines of po/po4a.cfg: Page(English source, {lang: output})."""
    out = []
    with open(os.path.join(root, CFG)) as f:
        for line in f:
            m = re.match(r"\[type:\s*text\]\s+(\S+)\s+(.*)$", line.strip())
            if not m:
                continue
            outputs = {}
            for tok in m.group(2).split():
                lm = re.match(r"^(\w+):(\S+)$", tok)
                if lm and lm.group(1) in LANGS:
                    outputs[lm.group(1)] = lm.group(2)
            out.append(Page(m.group(1), outputs))
    return out


def english_of(source):
    """The English file a po4a input stands for (an extract's original)."""
    for e in EXTRACTS:
        if e.target == source:
            return e.source
    return source


# ------------------------------------------------------------ the extracts

def _sections(text):
    """[(heading or None for the preamble, text)] split at '## ' headings
    (outside fenced code)."""
    parts, title, buf, fenced = [], None, [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            parts.append((title, "".join(buf)))
            title, buf = line[3:].strip(), []
        buf.append(line)
    parts.append((title, "".join(buf)))
    return parts


def extract_text(extract, root=ROOT):
    with open(os.path.join(root, extract.source)) as f:
        text = f.read()
    kept = []
    for title, body in _sections(text):
        if title is None or (title in extract.keep if extract.keep is not None
                             else title not in extract.drop):
            kept.append(body)
    return "".join(kept).rstrip("\n") + "\n"


def write_sources(root=ROOT):
    for e in EXTRACTS:
        path = os.path.join(root, e.target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(extract_text(e, root))


# ------------------------------------------------- the terminal's catalogue

_TABLE = re.compile(r"MistakeTable\s+(\w+)\s*\(\s*(\"[^\"]*\"|\w+)\s*,\s*\{(.*?)\}\s*\)\s*;", re.S)
_ENTRY = re.compile(r"\{\s*\"(\w+)\"\s*,\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\}")
_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


def _unescape(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


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
                    words = "".join(_unescape(x) for x in _LITERAL.findall(entry.group(2)))
                    if words and words not in seen:
                        seen.add(words)
                        out.append((words, entry.group(1), rel))
    return out


def _run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def cli_sources(root=ROOT):
    out = []
    for src in CLI_SOURCES:
        full = os.path.join(root, src)
        if os.path.isdir(full):
            out += sorted(os.path.join(src, f) for f in os.listdir(full) if f.endswith(".py"))
        else:
            out.append(src)
    return out


def cli_template_text(root=ROOT):
    """The text of po/cli/messages.pot: xgettext over the learner's modules,
    then the public tests' mistake words under the context "mistake"."""
    import polib   # python3-polib (tools/setup.sh --dev)
    with tempfile.TemporaryDirectory(prefix="mha-i18n-") as tmp:
        py = os.path.join(tmp, "py.pot")
        _run(["xgettext", "--language=Python", "--from-code=UTF-8", "--keyword=_",
              "--keyword=N_", "--keyword=ngettext:1,2", "--add-comments=TRANSLATORS",
              "--sort-by-file", "--omit-header", "--add-location=file", "--no-wrap", "--package-name=mha-labs",
              "-o", py] + cli_sources(root), cwd=root)
        entries = []
        for words, name, rel in mistake_words(root):
            entries.append(str(polib.POEntry(
                msgctxt="mistake", msgid=words, msgstr="", occurrences=[(rel, "")],
                comment=("A public test's mistake %r: printed after \"looks like\" or "
                         "before \"; see docs/NN_name.md\"." % name))))
        with open(py, encoding="utf-8") as f:
            body = f.read()
    header = ('# The terminal messages of ./lab (learner commands) and the public tests\' named\n'
              '# mistakes. Generated by ./lab translate from tools/lab/learner/ and\n'
              '# labs/*/*_test_util.h: edit those, not this file.\n'
              'msgid ""\nmsgstr ""\n'
              '"Project-Id-Version: mha-labs\\n"\n'
              '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n'
              '"MIME-Version: 1.0\\n"\n'
              '"Content-Type: text/plain; charset=UTF-8\\n"\n'
              '"Content-Transfer-Encoding: 8bit\\n"\n\n')
    body = body.rstrip("\n") + "\n\n" + "\n".join(entries)
    return header + body


def update_cli(root=ROOT, merge=True):
    """Writes po/cli/messages.pot; merges it into po/cli/<lang>.po (creating an
    empty catalogue for a language that has none) unless merge is False."""
    d = os.path.join(root, CLI_DIR)
    os.makedirs(d, exist_ok=True)
    pot = os.path.join(d, "messages.pot")
    with open(pot, "w", encoding="utf-8") as f:
        f.write(cli_template_text(root))
    if not merge:
        return
    for lang in LANGS:
        po = os.path.join(d, lang + ".po")
        if not os.path.isfile(po):
            _run(["msginit", "--no-translator", "--no-wrap", "-l", lang + ".UTF-8", "-i", pot,
                  "-o", po])
        else:
            _run(["msgmerge", "--quiet", "--update", "--backup=none", "--no-wrap", po, pot])
