"""po/po4a.cfg, written from the two registries: which English files po4a
cuts into messages (every lab's lesson and hints from labs/labs.json, then
the other learner pages) and which page each language gets of each
(po/languages.json). Nobody edits it: ./lab translate writes it, and the
translations check fails when it is not what the registries give today.

pages() reads the file back as Page(English source, {po code: output path}).
"""
import collections
import os
import re

import languages
from checks.consistency import README_ROW
from labs import ROOT, load_labs

CFG = os.path.join("po", "po4a.cfg")

# (English file, po4a's input, the sections kept (None: all but `drop`),
# sections dropped, lines dropped (a regular expression, or None)). The
# README's lab rows are left out: each translated README writes them from the
# registry (translated_pages.readme_lab_table), so a new lab is no message and
# its row never turns the translated table English.
Extract = collections.namedtuple("Extract", "source target keep drop drop_lines")
EXTRACTS = [
    Extract("README.md", "po/sources/README.learner.md",
            keep=("On macOS, Windows, or Linux without root", "Work on a lab"), drop=(),
            drop_lines=README_ROW),
    Extract("docs/TOLERANCES.md", "po/sources/TOLERANCES.learner.md",
            keep=None, drop=("Rules for test authors",), drop_lines=None),
]

KIT_README = "tools/lab/course/kit_readme/README.md"

_MARKDOWN = 'opt:"--option markdown --option neverwrap"'
_TEXT = 'opt:"--option neverwrap"'

_HEAD = """\
# po4a configuration, written by ./lab translate from labs/labs.json (the labs)
# and po/languages.json (the languages): do not edit it. The English Markdown
# and text files are the only source; po/<lang>.po translates them, one message
# per English block. po/sources/ holds the learner sections of README.md and
# docs/TOLERANCES.md that ./lab translate cuts out for po4a.
[po4a_langs] {langs}
[po4a_paths] po/messages.pot $lang:po/$lang.po
[options] opt:"--keep 0 --master-charset UTF-8 --localized-charset UTF-8 --wrap-po newlines" \
opt:"--porefs file"
"""


def _translated_path(source, pages):
    """Where the page of `source` in the language whose folder is `pages` goes."""
    if source.startswith("docs/"):
        return "docs/%s/%s" % (pages, source[len("docs/"):])
    if source.endswith("/hints.txt"):
        return source[:-len("hints.txt")] + "hints.%s.txt" % pages
    if source == KIT_README:
        return source[:-len(".md")] + ".%s.md" % pages
    name = os.path.basename(source).replace(".learner", "")
    return "docs/%s/%s" % (pages, name)


def sources(root=ROOT):
    """[(English file po4a reads, markdown?)] in the configuration's order."""
    labs = load_labs(root)
    return ([(lab.lesson_file, True) for lab in labs] + [("docs/numpy/README.md", True)] +
            [("labs/%s/hints.txt" % lab.dir, False) for lab in labs] +
            [(KIT_README, True)] + [(e.target, True) for e in EXTRACTS])


def config_text(root=ROOT):
    """The text of po/po4a.cfg as the registries give it today."""
    langs = languages.load(root)
    lines = [_HEAD.format(langs=" ".join(lang.po for lang in langs))]
    for source, markdown in sources(root):
        outputs = " ".join("%s:%s" % (lang.po, _translated_path(source, lang.pages))
                           for lang in langs)
        lines.append("[type: text] %s %s %s\n" % (source, outputs, _MARKDOWN if markdown
                                                  else _TEXT))
    return "".join(lines)


def write_config(root=ROOT):
    with open(os.path.join(root, CFG), "w", encoding="utf-8") as f:
        f.write(config_text(root))


def config_is_current(root=ROOT):
    try:
        with open(os.path.join(root, CFG), encoding="utf-8") as f:
            return f.read() == config_text(root)
    except OSError:
        return False


Page = collections.namedtuple("Page", "source outputs")   # outputs: {po lang: path}


def pages(root=ROOT):
    """The [type: text] lines of po/po4a.cfg: Page(English source, {lang: output})."""
    codes = set(languages.codes(root))
    out = []
    with open(os.path.join(root, CFG), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\[type:\s*text\]\s+(\S+)\s+(.*)$", line.strip())
            if not m:
                continue
            outputs = {}
            for tok in m.group(2).split():
                lm = re.match(r"^(\w+):(\S+)$", tok)
                if lm and lm.group(1) in codes:
                    outputs[lm.group(1)] = lm.group(2)
            out.append(Page(m.group(1), outputs))
    return out


def english_of(source):
    """The English file a po4a input stands for (an extract's original)."""
    for e in EXTRACTS:
        if e.target == source:
            return e.source
    return source


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
    """The part of an English file po4a reads (its kept sections)."""
    with open(os.path.join(root, extract.source), encoding="utf-8") as f:
        text = f.read()
    kept = []
    for title, body in _sections(text):
        if title is None or (title in extract.keep if extract.keep is not None
                             else title not in extract.drop):
            kept.append(body)
    lines = "".join(kept).rstrip("\n").split("\n")
    if extract.drop_lines is not None:
        lines = [l for l in lines if not extract.drop_lines.match(l)]
    return "\n".join(lines) + "\n"


def write_sources(root=ROOT):
    for e in EXTRACTS:
        path = os.path.join(root, e.target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(extract_text(e, root))
