"""The README's line per language: where each translation of the course is and
how ./lab speaks it, written in that language, from po/languages.json.

    **Español:** el curso también se lee en español: [docs/es/README.md](...) ...

Each line is LINE in its own language's terminal catalogue (po/cli/<lang>.po;
English until that message is translated), so a new registry line gives a
new README line and nobody edits a README by hand:
  - README.md holds them after the paragraph that follows the lab table;
    rewrite_readme() writes them (./lab translate and ./lab check N), and the
    translations check fails when they are stale. A translated README shows
    them as they are: each is already in its language (fill_catalogue()
    copies them into every catalogue);
  - the kit's READMEs get them after the lab table, pointing at the kit's
    README.<pages>.md (kit_lines()).
"""
import os
import re

import languages
from course import translated_pages
from labs import ROOT
from learner.i18n import N_

# TRANSLATORS: the README's line that points at the course in your language,
# the same on every page; {name} is your language's own name (the language
# switch's); say "this language" with your language's name.
LINE = N_("**{name}:** the course in this language: [{readme}]({readme}) (lessons in `{docs}`, "
          "hints: `{hints}`); `./lab` speaks it with `LANG={locale}` or `./lab --lang {code}`.")


def _line(lang, readme, hints, root):
    words = translated_pages.words_of(lang.po, root)
    return words(LINE).format(name=lang.name, readme=readme, docs="docs/%s/" % lang.pages,
                              hints=hints, locale=lang.locale, code=lang.env[0])


def repo_lines(root=ROOT):
    """README.md's lines, one per language."""
    return [_line(lang, "docs/%s/README.md" % lang.pages,
                  "labs/NN_name/hints.%s.txt" % lang.pages, root) for lang in languages.load(root)]


def kit_lines(present, root=ROOT):
    """The kit README's lines, one per language whose README.<pages>.md the
    kit has (`present`: the kit's paths)."""
    return [_line(lang, "README.%s.md" % lang.pages, "./lab hint N", root)
            for lang in languages.load(root) if "README.%s.md" % lang.pages in present]


def _is_line(text, root=ROOT):
    """Whether a README line is a language line: "**<name>:**" (or "：") for
    a name of the registry."""
    names = "|".join(re.escape(lang.name) for lang in languages.load(root))
    return bool(re.match(r"^\*\*(?:%s)\s*[:：]" % names, text))


def _readme(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        return f.read()


def readme_with_lines(text, root=ROOT):
    """README.md's text with its language lines as the registry and the
    catalogues make them: the run of them replaced where it is, else put after
    the paragraph that follows the lab table."""
    lines = text.split("\n")
    found = [i for i, l in enumerate(lines) if _is_line(l, root)]
    want = "\n\n".join(repo_lines(root)).split("\n")
    if found:
        lines[found[0]:found[-1] + 1] = want
    else:
        rows = [i for i, l in enumerate(lines) if re.match(r"^\| \d+ \|", l)]
        at = rows[-1] + 1 if rows else 0
        while at < len(lines) and lines[at].strip():
            at += 1
        at += 1
        while at < len(lines) and lines[at].strip():   # the paragraph after the table
            at += 1
        lines[at:at] = [""] + want
    return "\n".join(lines)


def rewrite_readme(root=ROOT):
    """Writes README.md's language lines; True if they changed."""
    text = _readme(root)
    new = readme_with_lines(text, root)
    if new == text:
        return False
    with open(os.path.join(root, "README.md"), "w", encoding="utf-8") as f:
        f.write(new)
    return True


def readme_problems(root=ROOT):
    if readme_with_lines(_readme(root), root) != _readme(root):
        return ["README.md's line per language is not what po/languages.json and the "
                "catalogues give today (run ./lab translate)"]
    return []


def fill_catalogue(path, root=ROOT):
    """Copies each language line of README.md into po/<lang>.po as its own
    translation (it is written in its language already); True if any changed."""
    from course.catalogues import load_polib, run
    wanted = set(repo_lines(root))
    po = load_polib().pofile(path, wrapwidth=0)
    changed = False
    for e in po:
        if not e.obsolete and e.msgid.rstrip("\n") in wanted and \
                (e.msgstr != e.msgid or e.fuzzy):
            e.msgstr = e.msgid
            if e.fuzzy:
                e.flags.remove("fuzzy")
            e.previous_msgid = None
            changed = True
    if changed:
        po.save(path)
        run(["msgcat", "-o", path, path])   # gettext's layout again, as po4a wrote it
    return changed
