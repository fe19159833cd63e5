"""What is left to translate, per language and per English file: what ./lab
translate prints last, and the shares ./lab test's translations check shows
(lagging translators fail nothing).

A message is current when it is translated and not fuzzy; untranslated
("new") when it has no translation; fuzzy when its English changed after it
was translated (or msgmerge only guessed it): the pages and the compiled
catalogues show English for both. One table, a row per English file with
work left in some language and a column per language, so that one English
edit shows the work it creates in every catalogue at once.
"""
import collections
import os

import languages
from course.catalogues import CLI_DIR, QUIZ_DIR, load_polib
from labs import ROOT
from learner.console import display_width, pad

Counts = collections.namedtuple("Counts", "total current fuzzy")

# The three catalogues of a language: (name in the report, path of po/<...>/<lang>.po).
KINDS = (("pages", "po/%s.po"), ("terminal", CLI_DIR + "/%s.po"), ("quizzes", QUIZ_DIR + "/%s.po"))


def _entries(path):
    return [e for e in load_polib().pofile(path) if not e.obsolete] if os.path.isfile(path) \
        else []


def work(root=ROOT):
    """{lang: {"kinds": {kind: Counts}, "files": {English file: Counts}}}: each
    catalogue's totals, and per file (a message's references) what it holds."""
    out = collections.OrderedDict()
    for lang in languages.codes(root):
        kinds, files = collections.OrderedDict(), collections.OrderedDict()
        for kind, pattern in KINDS:
            entries = _entries(os.path.join(root, pattern % lang))
            kinds[kind] = Counts(len(entries), sum(e.translated() for e in entries),
                                 sum("fuzzy" in e.flags for e in entries))
            for e in entries:
                # A quiz message's reference is file:question-id; count the file.
                for f in dict.fromkeys(path.split(":")[0] for path, _ in e.occurrences):
                    c = files.get(f, Counts(0, 0, 0))
                    files[f] = Counts(c.total + 1, c.current + e.translated(),
                                      c.fuzzy + ("fuzzy" in e.flags))
        out[lang] = {"kinds": kinds, "files": files}
    return out


def _share(c):
    return 100.0 * c.current / c.total if c.total else 100.0


def share_lines(root=ROOT, report=None):
    """One line per language: how much of each catalogue is current."""
    report = report or work(root)
    lines = []
    for lang, w in report.items():
        lines.append("%s: %s" % (lang, "; ".join(
            "%s %d of %d %s current (%.0f%%)" % (kind, c.current, c.total,
                                                 "blocks" if kind == "pages" else "messages",
                                                 _share(c))
            for kind, c in w["kinds"].items())))
    return lines


def cell(c):
    """What is left of one file in one language: "-" when nothing, "all N"
    when nothing is translated, else "N new" and/or "N fuzzy"."""
    new = c.total - c.current - c.fuzzy
    if not new and not c.fuzzy:
        return "-"
    if c.current == 0 and not c.fuzzy:
        return "all %d" % c.total
    return ", ".join(x for x in ("%d new" % new if new else "",
                                 "%d fuzzy" % c.fuzzy if c.fuzzy else "") if x)


def table_lines(root=ROOT, report=None):
    """The work left, a row per English file that has some in any language."""
    report = report or work(root)
    langs = list(report)
    files = list(dict.fromkeys(f for w in report.values() for f in w["files"]))
    rows = []
    for f in files:
        cells = [cell(report[l]["files"].get(f, Counts(0, 0, 0))) for l in langs]
        if any(c != "-" for c in cells):
            rows.append([f] + cells)
    if not rows:
        return ["every language is current: nothing left to translate"]
    head = ["left to translate (new: untranslated; fuzzy: its English changed)"] + langs
    widths = [max(display_width(r[i]) for r in rows + [head]) for i in range(len(head))]
    return ["  ".join(pad(c, w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
