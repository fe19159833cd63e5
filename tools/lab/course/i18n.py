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
