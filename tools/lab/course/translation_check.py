"""./lab test's translations check: problems() lists what it fails on.

It fails when po/po4a.cfg or a template is not what the registries and the
English give today, a catalogue is invalid (msgfmt -c), a translated message
changed a code span, a number, a link target or fenced code (a quiz message
also an identifier such as d_head or a {field}), a page is not what its
catalogue makes today or is missing, or a page links to a missing file. How
much of each language is translated fails nothing (course/translation_work.py
reports it).

The comparisons read text that is not Latin: Chinese writes no spaces and
full-width punctuation ("第2个头，" "`d_head`。"), so a number or an identifier
is delimited by ASCII word characters only (re.ASCII), never by \\w, which
counts every CJK character as part of a word; Turkish casing never enters
(nothing here changes case).
"""
import os
import re
import subprocess
import tempfile

import languages
from course import catalogues, language_lines, po4a_config, translated_pages
from course.catalogues import CLI_DIR, QUIZ_DIR, load_polib
from labs import ROOT

# A code span may run over a line break (CommonMark reads it as a space), and
# a translation may break its lines elsewhere: spans are compared with their
# inner whitespace made single spaces.
_CODE = re.compile(r"`+[^`]*?`+")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# A number: ASCII digits not glued to an ASCII word ("x2", "W_Q1"), whatever
# script is around it ("第2层", "3'üncü", "12，").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", re.ASCII)
_TARGET = re.compile(r"\]\(([^)\s]+)")
# An identifier of the code (d_head, split_heads, std::invalid_argument): the
# quizzes write them without backticks, and a translation keeps each. ASCII
# only, so "用d_head除以" holds d_head.
_IDENT = re.compile(r"(?<![A-Za-z0-9_:])[A-Za-z_]\w*(?:_\w*|::\w+)+|\{\w+\}", re.ASCII)


def _multiset(items):
    return sorted(items)


def _differ(a, b):
    missing = [x for x in a if x not in b] or ["-"]
    extra = [x for x in b if x not in a] or ["-"]
    return ", ".join(missing[:3]), ", ".join(extra[:3])


def block_problems(msgid, msgstr):
    """What a translated block changed that it must keep: its fenced code
    (identical), code spans, numbers and link targets (the same, in any order)."""
    out = []
    if _FENCE.findall(msgid) != _FENCE.findall(msgstr):
        out.append("its fenced code differs from the English (copy code blocks verbatim)")
    spans = lambda s: _multiset(" ".join(x.split()) for x in _CODE.findall(s))  # noqa: E731
    a, b = spans(msgid), spans(msgstr)
    if a != b:
        out.append("its code spans differ from the English (missing %s; not in the English %s)"
                   % _differ(a, b))
    strip = lambda s: _TARGET.sub(" ", _CODE.sub(" ", _FENCE.sub(" ", s)))   # noqa: E731
    na, nb = _multiset(_NUMBER.findall(strip(msgid))), _multiset(_NUMBER.findall(strip(msgstr)))
    if na != nb:
        out.append("its numbers differ from the English (%s in the English, %s here)"
                   % (" ".join(na) or "none", " ".join(nb) or "none"))
    ta, tb = _TARGET.findall(msgid), _TARGET.findall(msgstr)
    if _multiset(ta) != _multiset(tb):
        out.append("its link targets differ from the English (%s in the English, %s here)"
                   % (" ".join(ta) or "none", " ".join(tb) or "none"))
    return out


def identifier_problems(msgid, msgstr):
    a, b = _multiset(_IDENT.findall(msgid)), _multiset(_IDENT.findall(msgstr))
    if a == b:
        return []
    return ["its identifiers differ from the English (missing %s; not in the English %s)"
            % _differ(a, b)]


def catalogue_problems(path, root=ROOT, markdown=True, identifiers=False):
    """msgfmt -c of a catalogue, then block_problems of each current entry
    (and identifier_problems where identifiers is set: the quizzes')."""
    full = os.path.join(root, path)
    p = subprocess.run(["msgfmt", "-c", "-o", os.devnull, full], capture_output=True, text=True)
    if p.returncode != 0:
        errors = [l for l in p.stderr.splitlines() if "warning" not in l][:3]
        return ["%s is not a valid catalogue (msgfmt -c): %s" % (path, "; ".join(errors))]
    if not markdown:
        return []
    out = []
    for e in load_polib().pofile(full):
        if e.obsolete or not e.translated():
            continue
        whys = block_problems(e.msgid, e.msgstr)
        if identifiers:
            whys += identifier_problems(e.msgid, e.msgstr)
        for why in whys:
            where = ", ".join(dict.fromkeys(f for f, _ in e.occurrences))
            out.append("%s, the block of %s that starts %r: %s"
                       % (path, where, e.msgid[:50], why))
    return out


def page_link_problems(path, root=ROOT):
    """Relative link targets of a generated Markdown page that name no file."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    missing = []

    def collect(chunk):
        for t in translated_pages.link_targets(chunk):
            if not translated_pages.is_relative(t):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(path), t.split("#")[0]))
            if not os.path.exists(os.path.join(root, target)):
                missing.append("%s links to %s, which does not exist" % (path, t))
        return chunk
    translated_pages.outside_fences(text, collect)
    return missing


def _differs(root, rel, today):
    """Whether the file root/rel is missing or differs from `today`."""
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read() != today
    except OSError:
        return True


def source_problems(root=ROOT):
    """The derived inputs: po4a.cfg, the extracts, the two templates."""
    out = []
    if not po4a_config.config_is_current(root):
        try:
            listed = {pg.source for pg in po4a_config.pages(root)}
        except OSError:
            listed = set()
        missing = [src for src, _ in po4a_config.sources(root) if src not in listed]
        out.append("%s is not what labs/labs.json and %s give today%s (run ./lab translate)"
                   % (po4a_config.CFG, languages.REGISTRY,
                      ": it lacks " + ", ".join(missing) if missing else ""))
    out += language_lines.readme_problems(root)
    for e in po4a_config.EXTRACTS:
        if _differs(root, e.target, po4a_config.extract_text(e, root)):
            out.append("%s is not the learner part of %s as it is today (run ./lab translate)"
                       % (e.target, e.source))
    if _differs(root, os.path.join(QUIZ_DIR, "messages.pot"),
                catalogues.quiz_template_text(root)):
        out.append("po/quiz/messages.pot is not what labs/*/quiz.json give today (run ./lab "
                   "translate)")
    if _differs(root, os.path.join(CLI_DIR, "messages.pot"), catalogues.cli_template_text(root)):
        out.append("po/cli/messages.pot is not what the learner's modules and the public "
                   "tests' mistakes give today (run ./lab translate)")
    return out


def _catalogue_files(root):
    """[(catalogue, markdown?, identifiers?)] of every language."""
    out = []
    for lang in languages.codes(root):
        out += [(os.path.join("po", lang + ".po"), True, False),
                (os.path.join(CLI_DIR, lang + ".po"), False, False),
                (os.path.join(QUIZ_DIR, lang + ".po"), True, True)]
    return out


def problems(root=ROOT):
    """Everything the translations check fails on; [] when all is well."""
    catalogues.need_tools()
    out = source_problems(root)
    for path, markdown, identifiers in _catalogue_files(root):
        if not os.path.isfile(os.path.join(root, path)):
            out.append("%s is missing: a language of %s has no catalogue (run ./lab translate)"
                       % (path, languages.REGISTRY))
            continue
        out += catalogue_problems(path, root, markdown=markdown, identifiers=identifiers)
    if out:
        return out
    with tempfile.TemporaryDirectory(prefix="mha-i18n-check-") as tmp:
        written = translated_pages.generate(tmp, root)
        by_output = {pg.outputs[l]: pg for pg in po4a_config.pages(root) for l in pg.outputs}
        for rel in written:
            with open(os.path.join(tmp, rel), encoding="utf-8") as f:
                made = f.read()
            # Every page exists in every language, in English until translated.
            if _differs(root, rel, made):
                out.append("%s is %s (run ./lab translate --pages)"
                           % (rel, "not what its catalogue makes today"
                              if os.path.isfile(os.path.join(root, rel)) else "missing"))
            if rel.endswith(".md") and os.path.isfile(os.path.join(root, rel)):
                out += page_link_problems(rel, root)
            if by_output[rel].source == po4a_config.KIT_README and \
                    not re.search(r"^\|\s*-+\s*\|", made, re.M):
                out.append("%s lost its table's separator line (| --- | ...): the kit adds one "
                           "row per lab after it" % rel)
    return out
