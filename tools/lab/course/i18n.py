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
    (mistake_words(): the MistakeTable entries of labs/*/*_test_util.h);
  - the quizzes' catalogue, po/quiz/: one message per question, option and
    explanation of every labs/NN_name/quiz.json (quiz_template_text()),
    merged and checked like po/cli/ (learner/quiz.py looks them up).

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
QUIZ_DIR = os.path.join("po", "quiz")
QUIZ_DOMAIN = "quiz"
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
    "es": ("*Traducción: {pct} al día ({cur} de {tot} bloques); sigue el original en inglés "
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
              "--sort-by-file", "--omit-header", "--add-location=file", "--no-wrap",
              "--package-name=mha-labs",
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


def _write_and_merge(d, text, merge):
    """Writes d/messages.pot; merges it into d/<lang>.po (creating an empty
    catalogue for a language that has none) unless merge is False. A message
    whose English changed becomes fuzzy (msgmerge), so it shows English."""
    os.makedirs(d, exist_ok=True)
    pot = os.path.join(d, "messages.pot")
    with open(pot, "w", encoding="utf-8") as f:
        f.write(text)
    if not merge:
        return
    for lang in LANGS:
        po = os.path.join(d, lang + ".po")
        if not os.path.isfile(po):
            _run(["msginit", "--no-translator", "--no-wrap", "-l", lang + ".UTF-8", "-i", pot,
                  "-o", po])
        else:
            _run(["msgmerge", "--quiet", "--update", "--backup=none", "--no-wrap", po, pot])


def update_cli(root=ROOT, merge=True):
    """Writes po/cli/messages.pot and merges it into po/cli/<lang>.po."""
    _write_and_merge(os.path.join(root, CLI_DIR), cli_template_text(root), merge)


# ------------------------------------------------------ the quizzes' catalogue

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
    polib = _polib()
    entries = []
    for text, refs, roles in quiz_messages(root):
        e = polib.POEntry(msgid=text, msgstr="", occurrences=refs, comment="\n".join(roles))
        entries.append(e.__unicode__(wrapwidth=0) if hasattr(e, "__unicode__") else str(e))
    header = ('# The quizzes of the labs (./lab quiz N, and ./lab read\'s pages): every question,\n'
              '# option and explanation of labs/*/quiz.json. Generated by ./lab translate:\n'
              '# edit the quiz.json files, not this file. Keep every number, formula and\n'
              '# identifier as in the English.\n'
              'msgid ""\nmsgstr ""\n'
              '"Project-Id-Version: mha-labs\\n"\n'
              '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n'
              '"MIME-Version: 1.0\\n"\n'
              '"Content-Type: text/plain; charset=UTF-8\\n"\n'
              '"Content-Transfer-Encoding: 8bit\\n"\n\n')
    return header + "\n".join(entries)


def update_quiz(root=ROOT, merge=True):
    """Writes po/quiz/messages.pot and merges it into po/quiz/<lang>.po."""
    _write_and_merge(os.path.join(root, QUIZ_DIR), quiz_template_text(root), merge)


# ------------------------------------------------------- generated pages

def _polib():
    try:
        import polib   # python3-polib (tools/setup.sh --dev)
    except ImportError:
        raise RuntimeError("python3-polib is missing (tools/setup.sh --dev installs it)")
    return polib


def page_stats(lang, root=ROOT):
    """{po4a input file: [blocks, blocks translated and not fuzzy]} of a
    language's catalogue."""
    polib = _polib()
    stats = collections.defaultdict(lambda: [0, 0])
    for e in polib.pofile(os.path.join(root, "po", lang + ".po")):
        if e.obsolete:
            continue
        current = e.translated()
        for f in dict.fromkeys(path for path, _ in e.occurrences):
            stats[f][0] += 1
            stats[f][1] += current
    return stats


def english_commits(paths, root=ROOT):
    """{English file: the last commit that touched it (12 hex digits), or None
    when the file differs from it (an English edit not committed yet)}; two
    git calls for all of them."""
    out = dict.fromkeys(paths)
    try:
        log = _run(["git", "-C", root, "log", "--format=@%H", "--name-only", "--no-renames",
                    "--"] + list(paths)).stdout
        dirty = set(_run(["git", "-C", root, "diff", "--name-only", "HEAD", "--"] +
                         list(paths)).stdout.split())
    except (OSError, subprocess.CalledProcessError):
        return out
    commit = None
    for line in log.splitlines():
        if line.startswith("@"):
            commit = line[1:13]
        elif line in out and out[line] is None and commit:
            out[line] = commit
    for path in dirty:
        out[path] = None
    return out


# The English file as the reader knows it: the kit's README is README.md there.
KIT_README = "tools/lab/course/kit_readme/README.md"
_SHOWN_AS = {KIT_README: "README.md"}


def header_line(lang, source, stats, commit):
    tot, cur = stats.get(source, [0, 0])
    src = english_of(source)
    return _HEADER[lang].format(pct=_pct(lang, cur, tot), cur=cur, tot=tot,
                                src=_SHOWN_AS.get(src, src),
                                commit=commit or _UNCOMMITTED[lang])


_LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
_REFDEF = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)", re.M)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def translated_map(lang, root=ROOT):
    """{English file: its page in `lang`} (an extract's page stands for the
    file it was cut from)."""
    return {english_of(p.source): p.outputs[lang] for p in pages(root) if lang in p.outputs}


def _rewrite_target(target, base, out_dir, tmap):
    if not target or target.startswith(("#", "/")) or _SCHEME.match(target):
        return target
    path, hash_, frag = target.partition("#")
    if not path:
        return target
    full = os.path.normpath(os.path.join(base, path))
    full = tmap.get(full, full)
    new = os.path.relpath(full, out_dir or ".")
    if path.endswith("/") and not new.endswith("/"):
        new += "/"
    return new + hash_ + frag


def _outside_fences(text, fn):
    """fn applied to the text outside fenced code blocks."""
    parts = re.split(r"(^```.*?^```[^\n]*$)", text, flags=re.M | re.S)
    return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))


def rewrite_links(text, source, output, tmap):
    """Relative links of a page made from `source` (resolved from where the
    English file lives), pointing from `output`: at the translated page of the
    same language where one exists, else at the same file as the English."""
    base = os.path.dirname(english_of(source))
    out_dir = os.path.dirname(output)

    def fix(chunk):
        chunk = _LINK.sub(lambda m: m.group(1) + _rewrite_target(m.group(2), base, out_dir, tmap)
                          + m.group(3), chunk)
        return _REFDEF.sub(lambda m: m.group(1) + _rewrite_target(m.group(2), base, out_dir,
                                                                    tmap), chunk)
    return _outside_fences(text, fix)


def finish(lang, page, text, stats, commit, tmap):
    """A generated page as committed: its header line, then po4a's output
    (links rewritten for a Markdown page)."""
    output = page.outputs[lang]
    head = header_line(lang, page.source, stats, commit)
    if output.endswith(".md"):
        return head + "\n\n" + rewrite_links(text, page.source, output, tmap)
    return "# " + head.strip("*") + "\n\n" + text


def generate(dest, root=ROOT):
    """Every translated page as the catalogues make it today, written under
    dest (same relative paths). The catalogues are not changed (--no-update).
    Returns [relative output paths]."""
    tmp = tempfile.mkdtemp(prefix="mha-po4a-")
    try:
        # po4a 0.69 renames its output from the current directory's relative
        # path into --destdir: run it from an empty folder, or it would move
        # the committed page there (and compare a page with itself).
        empty = os.path.join(tmp, "cwd")
        os.mkdir(empty)
        os.mkdir(os.path.join(tmp, "out"))
        p = subprocess.run(["po4a", "--force", "--no-update", "--srcdir", os.path.abspath(root),
                            "--destdir", os.path.join(tmp, "out"),
                            os.path.join(os.path.abspath(root), CFG)],
                           cwd=empty, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("po4a failed: %s" % (p.stderr.strip() or p.stdout.strip()))
        written = []
        commits = english_commits(sorted({english_of(pg.source) for pg in pages(root)}), root)
        for lang in LANGS:
            stats = page_stats(lang, root)
            tmap = translated_map(lang, root)
            for page in pages(root):
                if lang not in page.outputs:
                    continue
                out = page.outputs[lang]
                eng = english_of(page.source)
                with open(os.path.join(tmp, "out", out), encoding="utf-8") as f:
                    text = f.read()
                final = finish(lang, page, text, stats, commits[eng], tmap)
                path = os.path.join(dest, out)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(final)
                written.append(out)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------- the check

# A code span may run over a line break (CommonMark reads it as a space), and
# a translation may break its lines elsewhere: spans are compared with their
# inner whitespace made single spaces.
_CODE = re.compile(r"`+[^`]*?`+")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TARGET = re.compile(r"\]\(([^)\s]+)")


def _multiset(items):
    return sorted(items)


# A formula (TeX, learner/reader_lessons.py): $$ ... $$ or $...$; a translation
# keeps each exactly, as it keeps code.
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$\w])\$(?![\s$])[^$\n]+?(?<![\s\\])\$(?![\w$])", re.S)


def block_problems(msgid, msgstr):
    """What a translated block changed that it must keep: its fenced code
    (identical), code spans, formulas, numbers and link targets (the same, in
    any order)."""
    out = []
    if _FENCE.findall(msgid) != _FENCE.findall(msgstr):
        out.append("its fenced code differs from the English (copy code blocks verbatim)")
    a, b = _multiset(_MATH.findall(_CODE.sub(" ", msgid))), \
        _multiset(_MATH.findall(_CODE.sub(" ", msgstr)))
    if a != b:
        missing = [x for x in a if x not in b] or ["-"]
        extra = [x for x in b if x not in a] or ["-"]
        out.append("its formulas differ from the English (missing %s; not in the English %s)"
                   % (", ".join(missing[:3]), ", ".join(extra[:3])))
    spans = lambda s: _multiset(" ".join(x.split()) for x in _CODE.findall(s))  # noqa: E731
    a, b = spans(msgid), spans(msgstr)
    if a != b:
        missing = [x for x in a if x not in b] or ["-"]
        extra = [x for x in b if x not in a] or ["-"]
        out.append("its code spans differ from the English (missing %s; not in the English %s)"
                   % (", ".join(missing[:3]), ", ".join(extra[:3])))
    strip = lambda s: _MATH.sub(" ", _CODE.sub(" ", _FENCE.sub(" ", s)))   # noqa: E731
    na = _multiset(_NUMBER.findall(_TARGET.sub(" ", strip(msgid))))
    nb = _multiset(_NUMBER.findall(_TARGET.sub(" ", strip(msgstr))))
    if na != nb:
        out.append("its numbers differ from the English (%s in the English, %s here)"
                   % (" ".join(na) or "none", " ".join(nb) or "none"))
    if _multiset(_TARGET.findall(msgid)) != _multiset(_TARGET.findall(msgstr)):
        out.append("its link targets differ from the English (%s in the English, %s here)"
                   % (" ".join(_TARGET.findall(msgid)) or "none",
                      " ".join(_TARGET.findall(msgstr)) or "none"))
    return out


# An identifier of the code (d_head, split_heads, std::invalid_argument): the
# quizzes write them without backticks, and a translation keeps each.
_IDENT = re.compile(r"(?<![\w:])[A-Za-z_]\w*(?:_\w*|::\w+)+|\{\w+\}")


def identifier_problems(msgid, msgstr):
    a, b = _multiset(_IDENT.findall(msgid)), _multiset(_IDENT.findall(msgstr))
    if a == b:
        return []
    missing = [x for x in a if x not in b] or ["-"]
    extra = [x for x in b if x not in a] or ["-"]
    return ["its identifiers differ from the English (missing %s; not in the English %s)"
            % (", ".join(missing[:3]), ", ".join(extra[:3]))]


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
    for e in _polib().pofile(full):
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


def _page_links(path, root):
    """Relative link targets of a generated Markdown page that name no file."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    missing = []

    def collect(chunk):
        for t in _TARGET.findall(chunk) + [m.group(2) for m in _REFDEF.finditer(chunk)]:
            if t.startswith(("#", "/")) or _SCHEME.match(t):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(path), t.split("#")[0]))
            if not os.path.exists(os.path.join(root, target)):
                missing.append("%s links to %s, which does not exist" % (path, t))
        return chunk
    _outside_fences(text, collect)
    return missing


_TOOLS = ("po4a", "msgfmt", "msgmerge", "msginit", "xgettext", "git")


def missing_tools():
    """What ./lab translate and the check need and this machine lacks."""
    out = [t for t in _TOOLS if shutil.which(t) is None]
    try:
        _polib()
    except RuntimeError:
        out.append("python3-polib")
    return out


def _need_tools():
    missing = missing_tools()
    if missing:
        raise RuntimeError("%s missing: tools/setup.sh installs po4a, gettext and python3-polib "
                           "in the instructors' repository" % ", ".join(missing))


def problems(root=ROOT):
    """Everything the translations check fails on; [] when all is well."""
    _need_tools()
    out = []
    for e in EXTRACTS:
        try:
            with open(os.path.join(root, e.target), encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != extract_text(e, root):
            out.append("%s is not the learner part of %s as it is today (run ./lab translate)"
                       % (e.target, e.source))
    for lang in LANGS:
        out += catalogue_problems(os.path.join("po", lang + ".po"), root)
        cli = os.path.join(CLI_DIR, lang + ".po")
        if os.path.isfile(os.path.join(root, cli)):
            out += catalogue_problems(cli, root, markdown=False)
        qpo = os.path.join(QUIZ_DIR, lang + ".po")
        if os.path.isfile(os.path.join(root, qpo)):
            out += catalogue_problems(qpo, root, identifiers=True)
    def stale(directory, today):
        """Whether directory/messages.pot differs from the template made today."""
        try:
            with open(os.path.join(root, directory, "messages.pot"), encoding="utf-8") as f:
                return f.read() != today
        except OSError:
            return True
    if stale(QUIZ_DIR, quiz_template_text(root)):
        out.append("po/quiz/messages.pot is not what labs/*/quiz.json give today (run ./lab "
                   "translate)")
    if shutil.which("xgettext") and stale(CLI_DIR, cli_template_text(root)):
        out.append("po/cli/messages.pot is not what the learner's modules and the public "
                   "tests' mistakes give today (run ./lab translate)")
    if out:
        return out
    with tempfile.TemporaryDirectory(prefix="mha-i18n-check-") as tmp:
        written = generate(tmp, root)
        stats = {lang: page_stats(lang, root) for lang in LANGS}
        by_output = {pg.outputs[l]: (l, pg) for pg in pages(root) for l in pg.outputs}
        for rel in written:
            committed = os.path.join(root, rel)
            with open(os.path.join(tmp, rel), encoding="utf-8") as f:
                made = f.read()
            lang, pg = by_output[rel]
            if not os.path.isfile(committed):
                # A page nobody has translated yet need not be committed.
                if stats[lang].get(pg.source, [0, 0])[1]:
                    out.append("%s is missing (run ./lab translate --pages)" % rel)
                continue
            with open(committed, encoding="utf-8") as f:
                if f.read() != made:
                    out.append("%s is not what %s makes today (run ./lab translate --pages)"
                               % (rel, "po/%s.po" % lang))
            if rel.endswith(".md"):
                out += _page_links(rel, root)
            if pg.source == KIT_README and not re.search(r"^\|\s*-+\s*\|", made, re.M):
                out.append("%s lost its table's separator line (| --- | ...): the kit adds one "
                           "row per lab after it" % rel)
    return out


def shares(root=ROOT):
    """{lang: (pages' blocks current, blocks, terminal messages current, messages,
    quiz messages current, messages)}."""
    polib = _polib()
    out = {}

    def entries(path):
        return [e for e in polib.pofile(path) if not e.obsolete] if os.path.isfile(path) else []
    for lang in LANGS:
        po = entries(os.path.join(root, "po", lang + ".po"))
        cli = entries(os.path.join(root, CLI_DIR, lang + ".po"))
        qz = entries(os.path.join(root, QUIZ_DIR, lang + ".po"))
        out[lang] = (sum(e.translated() for e in po), len(po),
                     sum(e.translated() for e in cli), len(cli),
                     sum(e.translated() for e in qz), len(qz))
    return out


def share_lines(root=ROOT):
    lines = []
    for lang, (cur, tot, ccur, ctot, qcur, qtot) in shares(root).items():
        lines.append("%s: pages %d of %d blocks current (%.0f%%); terminal %d of %d messages "
                     "(%.0f%%); quizzes %d of %d messages (%.0f%%)"
                     % (lang, cur, tot, 100.0 * cur / max(tot, 1), ccur, ctot,
                        100.0 * ccur / max(ctot, 1), qcur, qtot, 100.0 * qcur / max(qtot, 1)))
    return lines


# ------------------------------------------------------------ ./lab translate

def update(root=ROOT, log=print):
    """After an English edit: the extracts, po4a's template and catalogues (a
    changed block becomes fuzzy), the terminal's and the quizzes' templates
    and catalogues, then every page."""
    write_sources(root)
    log("po4a: template and catalogues (po/messages.pot, po/es.po, po/pt_BR.po)...")
    _run(["po4a", "--no-translations", CFG], cwd=root)
    log("xgettext: po/cli/messages.pot, merged into po/cli/*.po...")
    update_cli(root)
    log("quizzes: po/quiz/messages.pot from labs/*/quiz.json, merged into po/quiz/*.po...")
    update_quiz(root)
    regenerate(root, log)


def regenerate(root=ROOT, log=print):
    """Every page from the catalogues as they are, written in place."""
    written = generate(root, root)
    log("wrote %d pages (%s)" % (len(written), ", ".join(LANGS.values())))
    return written


def cmd_translate(args):
    try:
        _need_tools()
        if args.pages:
            regenerate()
        else:
            update()
        for line in share_lines():
            print(line)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or ""
        print("lab translate: %s %s" % (e, detail.strip()), file=sys.stderr)
        return 1
    return 0
