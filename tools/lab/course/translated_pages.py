"""The translated pages: what po4a makes of each English page with a
language's catalogue (po/<lang>.po), finished for the repository.

po4a shows a block that is untranslated or fuzzy (its English changed, or
msgmerge only guessed it) in English, never the guess. finish() adds what po4a
does not do:
  - the page's first line, in its language: how much of it is current (blocks
    translated and not fuzzy), the English commit it follows, that numbers
    keep the English decimal point, and on a lesson that the labs' headers
    stay English (the contract, which the lesson's "What to write" states in
    the page's language). The sentences are messages of the terminal's
    catalogue (po/cli/<lang>.po), so a new language's pages say them in
    English until they are translated;
  - relative links that point from where the page lives (at the translated
    page of the same language where one exists);
  - the lab table of the README's learner part, one row per lab from the
    registry with the lesson's translated title (the English extract leaves
    the rows out, so adding a lab never turns a translated table English).
"""
import collections
import os
import re
import shutil
import subprocess
import tempfile

import languages
from course.catalogues import CLI_DIR, load_polib
from course.po4a_config import CFG, KIT_README, english_of, pages
from labs import ROOT, load_labs
from learner.files import read_text
from learner.i18n import N_, capitalised, without_lab_number

# The first line of a translated page (Markdown emphasis around it; a hints
# file has it as a "# " comment line, which the hint reader skips).
HEADER = N_("Translation: {pct} current ({cur} of {tot} blocks); follows the English original "
            "`{src}` at commit {commit}. A block not translated yet is shown in English. "
            "Numbers are written as in English, with a decimal point: 0.5.")
# After HEADER on a lesson's page: the headers are the contract, in English.
LESSON_NOTE = N_("The labs' headers (`.h`) stay in English: they are the contract; this "
                 "lesson's section \"What to write\" states it in this page's language.")
# TRANSLATORS: a share of a page's blocks, in the header line above; {n} is a number.
PERCENT = N_("{n}%")
UNCOMMITTED = N_("(changes not committed yet)")
HINTS_HEADER_MARK = "# "
# The English file as the reader knows it: the kit's README is README.md there.
_SHOWN_AS = {KIT_README: "README.md"}
# The README's lab table: its rows come from the registry (po4a_config leaves
# them out of the extract; lab_rows() writes them).
README_EXTRACT = "po/sources/README.learner.md"


def page_stats(lang, root=ROOT):
    """{po4a input file: [blocks, blocks translated and not fuzzy]} of a
    language's catalogue."""
    polib = load_polib()
    stats = collections.defaultdict(lambda: [0, 0])
    for e in polib.pofile(os.path.join(root, "po", lang + ".po")):
        if e.obsolete:
            continue
        current = e.translated()
        for f in dict.fromkeys(path for path, _ in e.occurrences):
            stats[f][0] += 1
            stats[f][1] += current
    return stats


def _run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


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


def words_of(lang, root=ROOT):
    """A function English -> `lang` for words the tools write into pages
    (HEADER, PERCENT, UNCOMMITTED, LESSON_NOTE, the README's language lines): the
    terminal catalogue's current translation, else the English (also where
    python3-polib is missing)."""
    path = os.path.join(root, CLI_DIR, lang + ".po")
    table = {}
    try:
        if os.path.isfile(path):
            table = {e.msgid: e.msgstr for e in load_polib().pofile(path) if e.translated()}
    except RuntimeError:
        pass
    return lambda english: table.get(english, english)


def percent(cur, tot):
    """The share current, as a number: "100" only when every block is."""
    share = 100.0 * cur / tot if tot else 100.0
    text = ("%.0f" % share) if share in (0.0, 100.0) or share >= 1 else "%.1f" % share
    if cur < tot and text == "100":
        text = "99"
    return text


def header_line(words, source, stats, commit):
    """The page's first line (without its Markdown emphasis); words: words_of()."""
    tot, cur = stats.get(source, [0, 0])
    src = english_of(source)
    line = words(HEADER).format(pct=words(PERCENT).format(n=percent(cur, tot)), cur=cur,
                                tot=tot, src=_SHOWN_AS.get(src, src),
                                commit=commit or words(UNCOMMITTED))
    if re.match(r"docs/\d+_\w+\.md$", src):
        # Chinese ends a sentence with a full-width stop and puts no space after it.
        line += ("" if line.endswith(("\u3002", "\uff01", "\uff1f")) else " ") + words(LESSON_NOTE)
    return line


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


def outside_fences(text, fn):
    """fn applied to the text outside fenced code blocks."""
    parts = re.split(r"(^```.*?^```[^\n]*$)", text, flags=re.M | re.S)
    return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))


def link_targets(chunk):
    """The link targets of Markdown text: inline links and reference definitions."""
    return [m.group(2) for m in _LINK.finditer(chunk)] + \
        [m.group(2) for m in _REFDEF.finditer(chunk)]


def is_relative(target):
    return not (target.startswith(("#", "/")) or _SCHEME.match(target))


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
    return outside_fences(text, fix)


# ---------------------------------------------------------- the lab tables

_SEPARATOR = re.compile(r"^\|\s*-+\s*\|", re.M)


def lesson_title(text):
    """A lesson's title from its page's first heading, without its "Lab N:"
    prefix in whatever language ("Lab 2:", "Laboratorio 2:", "实验 2：")."""
    for line in text.splitlines():
        if line.startswith("# "):
            return without_lab_number(line[2:].strip())
    return None


def translated_title(lab, english_text, translated_text, lang=None):
    """The lab's title on a translated page: its lesson's heading there once
    that heading is translated (differs from the English), starting with a
    capital as the registry's titles do; else the registry's title."""
    heading = lesson_title(translated_text or "")
    if heading and heading != lesson_title(english_text or ""):
        return capitalised(heading, lang)
    return lab.title


def insert_rows(text, rows):
    """The text with rows inserted after its first table's separator line
    (| --- | ...); unchanged when it has no table."""
    m = _SEPARATOR.search(text)
    if not m:
        return text
    end = text.index("\n", m.start()) + 1 if "\n" in text[m.start():] else len(text)
    return text[:end] + "".join(r + "\n" for r in rows) + text[end:]


def readme_lab_table(text, labs, title_of):
    """The README learner part's lab table with one row per lab (links as the
    English README writes them; rewrite_links() points them at the page)."""
    from checks.consistency import readme_rows
    return insert_rows(text, readme_rows(labs, title_of))


# ------------------------------------------------------------ generating

def finish(lang, page, text, stats, commit, tmap, words=None, title_of=None, root=ROOT):
    """A generated page as committed: its header line, then po4a's output
    (links rewritten for a Markdown page; the README's lab rows added)."""
    words = words or words_of(lang, root)
    output = page.outputs[lang]
    head = header_line(words, page.source, stats, commit)
    if page.source == README_EXTRACT:
        text = readme_lab_table(text, load_labs(root), title_of or (lambda lab: lab.title))
    if output.endswith(".md"):
        return "*" + head + "*\n\n" + rewrite_links(text, page.source, output, tmap)
    return HINTS_HEADER_MARK + head + "\n\n" + text


def run_po4a(out, root=ROOT):
    """po4a's pages of every language under out, from the catalogues as they are."""
    empty = os.path.join(out, ".cwd")
    os.makedirs(empty)
    # po4a 0.69 renames its output from the current directory's relative path
    # into --destdir: run it from an empty folder, or it would move the
    # committed page there (and compare a page with itself).
    p = subprocess.run(["po4a", "--force", "--no-update", "--srcdir", os.path.abspath(root),
                        "--destdir", out, os.path.join(os.path.abspath(root), CFG)],
                       cwd=empty, capture_output=True, text=True)
    os.rmdir(empty)
    if p.returncode != 0:
        raise RuntimeError("po4a failed: %s" % (p.stderr.strip() or p.stdout.strip()))


def generate(dest, root=ROOT):
    """Every translated page as the catalogues make it today, written under
    dest (same relative paths). The catalogues are not changed (--no-update).
    Returns [relative output paths]."""
    tmp = tempfile.mkdtemp(prefix="mha-po4a-")
    try:
        out_dir = os.path.join(tmp, "out")
        run_po4a(out_dir, root)
        written = []
        all_pages = pages(root)
        commits = english_commits(sorted({english_of(pg.source) for pg in all_pages}), root)
        labs = load_labs(root)
        for lang in languages.codes(root):
            stats, tmap, words = page_stats(lang, root), translated_map(lang, root), \
                words_of(lang, root)
            titles = {lab.number: translated_title(
                lab, read_text(os.path.join(root, lab.lesson_file)),
                read_text(os.path.join(out_dir, tmap.get(lab.lesson_file, "-"))), lang)
                for lab in labs}
            for page in all_pages:
                if lang not in page.outputs:
                    continue
                out = page.outputs[lang]
                final = finish(lang, page, read_text(os.path.join(out_dir, out)), stats,
                               commits[english_of(page.source)], tmap, words,
                               lambda lab: titles[lab.number], root)
                path = os.path.join(dest, out)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(final)
                written.append(out)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
