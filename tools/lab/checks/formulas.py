"""./lab test's formula check: every formula of every lesson, in every
language (TeX: $...$ inline, $$ ... $$ as a block; learner/reader_lessons.py
finds them as the reader does), parses in KaTeX, the library that draws them
in ./lab read's pages (Debian's libjs-katex, run by Debian's nodejs). A
formula that does not parse fails here, with its file and line, not on the
learner's page.
"""
import glob
import json
import os
import shutil
import subprocess

from labs import ROOT
from learner.reader_lessons import formulas

KATEX_JS = "/usr/share/javascript/katex/katex.js"
PARSER = os.path.join(ROOT, "tools", "lab", "checks", "katex_parse.js")


class Unavailable(RuntimeError):
    pass


def lesson_files(root=ROOT):
    """The lessons and their translated pages (docs/NN_name.md, docs/<lang>/NN_name.md)."""
    return sorted(glob.glob(os.path.join(root, "docs", "[0-9][0-9]_*.md")) +
                  glob.glob(os.path.join(root, "docs", "*", "[0-9][0-9]_*.md")))


def parse_errors(items, katex=KATEX_JS):
    """[KaTeX's message, or None] for each (TeX, display) of items."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None or not os.path.isfile(katex):
        raise Unavailable("the formula check needs Debian's nodejs and libjs-katex "
                          "(tools/setup.sh installs them)")
    p = subprocess.run([node, PARSER, katex], capture_output=True, text=True, timeout=300,
                       input=json.dumps([{"tex": t, "display": d} for t, d in items]))
    if p.returncode != 0:
        raise Unavailable("node could not run %s: %s" % (PARSER, p.stderr.strip()[-300:]))
    return json.loads(p.stdout)


def problems(paths=None, root=ROOT):
    """["file:line: formula: why"] of each formula that does not parse."""
    found = []
    for path in paths if paths is not None else lesson_files(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found += [(os.path.relpath(path, root), line, tex, display)
                  for tex, display, line in formulas(text)]
    errors = parse_errors([(tex, display) for _, _, tex, display in found])
    return ["%s:%d: the formula %r does not parse: %s" % (rel, line, tex[:60], why)
            for (rel, line, tex, _), why in zip(found, errors) if why]


def count(root=ROOT):
    return sum(len(formulas(open(p, encoding="utf-8").read())) for p in lesson_files(root))
