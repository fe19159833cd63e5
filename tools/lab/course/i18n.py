"""The course in every language of po/languages.json: ./lab translate.

The English Markdown and text files are the only source. po4a (Debian's
po4a, Text module with its markdown option) cuts each into blocks, one
gettext message per block, in po/messages.pot; po/<lang>.po translates them
for each language of the registry (po/languages.json, tools/lab/languages.py).
A block whose English changed becomes fuzzy and the generated page shows the
English block there until it is translated again, so no page ever shows a
stale sentence or a guess.

The modules, by concern:
  - course/po4a_config.py: po/po4a.cfg, written from labs/labs.json and the
    languages (a new lab's lesson and hints reach every language), and the
    learner parts of README.md and docs/TOLERANCES.md cut into po/sources/;
  - course/catalogues.py: the terminal's (po/cli/) and the quizzes'
    (po/quiz/) templates, merged into every language's catalogue;
  - course/translated_pages.py: the pages, with their first line saying how
    much is current and which English commit they follow;
  - course/language_lines.py: the README's line per language, in that language;
  - course/translation_check.py: what ./lab test's translations check fails on;
  - course/translation_work.py: what is left to translate, per file and
    language.

./lab translate              update the configuration, sources, templates,
                             catalogues (creating a new language's) and pages
./lab translate --pages      regenerate only the pages from the catalogues as
                             they are (what the lead runs after merging the
                             translators' catalogues; no catalogue changes)
"""
import os
import subprocess
import sys

import languages
from course import catalogues, language_lines, po4a_config, translated_pages, translation_work
from course.translation_check import problems  # noqa: F401  (./lab test's check)
from labs import ROOT


def update(root=ROOT, log=print):
    """After an English edit: the terminal's and the quizzes' templates and
    catalogues (whose words README.md's language lines use), po4a's
    configuration and extracts, its template and catalogues (a changed block
    becomes fuzzy; a guess is cleared), then every page."""
    log("xgettext: po/cli/messages.pot, merged into po/cli/<lang>.po...")
    catalogues.update_cli(root)
    log("quizzes: po/quiz/messages.pot from labs/*/quiz.json, merged into po/quiz/<lang>.po...")
    catalogues.update_quiz(root)
    po4a_config.write_config(root)
    if language_lines.rewrite_readme(root):
        log("README.md: its line per language rewritten from %s" % languages.REGISTRY)
    po4a_config.write_sources(root)
    log("po4a: po/po4a.cfg from labs/labs.json and %s; po/messages.pot; po/<lang>.po for %s..."
        % (languages.REGISTRY, ", ".join(languages.codes(root))))
    paths = [os.path.join(root, "po", code + ".po") for code in languages.codes(root)]
    before = [catalogues.active_messages(path) for path in paths]
    catalogues.run(["po4a", "--no-translations", po4a_config.CFG], cwd=root)
    for path, active in zip(paths, before):
        catalogues.drop_guesses(path, active)
        language_lines.fill_catalogue(path, root)
    regenerate(root, log)


def regenerate(root=ROOT, log=print):
    """Every page from the catalogues as they are, written in place."""
    written = translated_pages.generate(root, root)
    log("wrote %d pages (%s)" % (len(written), ", ".join(
        lang.pages for lang in languages.load(root))))
    return written


def share_lines(root=ROOT):
    return translation_work.share_lines(root)


def cmd_translate(args):
    try:
        catalogues.need_tools()
        if args.pages:
            regenerate()
        else:
            update()
        report = translation_work.work()
        for line in translation_work.share_lines(report=report):
            print(line)
        print()
        for line in translation_work.table_lines(report=report):
            print(line)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or ""
        print("lab translate: %s %s" % (e, detail.strip()), file=sys.stderr)
        return 1
    return 0
