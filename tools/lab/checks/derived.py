"""What is derived from a lab's files and registry line, rewritten rather than reported.

Three facts are written down twice, once by the author and once derived:

  * the stub's sha256 in labs/labs.json (how status and grading recognise the
    untouched stub), from labs/NN_name/<target>.cc;
  * README.md's lab table, from the registry, and its line per language,
    from po/languages.json (course/language_lines.py);
  * the lesson's "**What you may call.**" line, from the registry's "calls".

`./lab check N` calls rewrite() before it checks anything, so an author who
edited a stub or a "calls" list reads no 12-character hash fragments: the
derived copies follow, and the command says which files it rewrote.
"""
import json
import os
import re

from checks import consistency
from labs import ROOT, load_labs, sha256
import surface


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def rewrite_stub_hash(lab, root=ROOT):
    """Records the stub's current sha256 on the lab's line of labs/labs.json,
    touching nothing else of the file. True if it changed."""
    data = lab.read_learner_file(root)
    if data is None or lab.is_stub(data):
        return False
    path = os.path.join(root, "labs", "labs.json")
    with open(path) as f:
        lines = f.read().split("\n")
    key = '"dir": %s' % json.dumps(lab.dir)
    for i, line in enumerate(lines):
        if key not in line:
            continue
        entry = json.loads(line.strip().rstrip(","))
        new = sha256(data)
        if '"stub_sha256"' in line:
            lines[i] = re.sub(r'"stub_sha256": "[0-9a-f]*"', '"stub_sha256": "%s"' % new, line)
        else:
            lines[i] = re.sub(r"\}(,?)\s*$", ', "stub_sha256": "%s"}\\1' % new, line)
        assert json.loads(lines[i].strip().rstrip(","))["dir"] == entry["dir"]
        text = "\n".join(lines)
        json.loads(text)   # still a valid registry
        _write(path, text)
        return True
    return False


def rewrite_readme(labs, root=ROOT):
    """README.md's lab table from the registry (the rows replaced in place). True if it changed."""
    path = os.path.join(root, "README.md")
    if not os.path.isfile(path) or not consistency.readme_problems(labs, root):
        return False
    with open(path) as f:
        lines = f.read().split("\n")
    rows = [i for i, l in enumerate(lines) if re.match(r"^\| \d+ \| `labs/", l)]
    if not rows:
        return False
    lines[rows[0]:rows[-1] + 1] = consistency.readme_rows(labs)
    _write(path, "\n".join(lines))
    return True


def rewrite_lesson_line(lab, root=ROOT):
    """The lesson's "What you may call" line from the registry: replaced where
    it is, or added after the title. True if it changed."""
    if lab.calls is None or not isinstance(lab.calls, list):
        return False
    path = os.path.join(root, lab.lesson_file)
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError:
        return False
    want = surface.lesson_line(lab)
    found = [i for i, l in enumerate(lines) if l.startswith(surface.LESSON_PREFIX)]
    if [lines[i] for i in found] == [want]:
        return False
    if found:
        lines[found[0]] = want
        for i in reversed(found[1:]):
            del lines[i]
    else:
        title = next((i for i, l in enumerate(lines) if l.startswith("# ")), -1)
        lines[title + 1:title + 1] = ["", want]
    _write(path, "\n".join(lines))
    return True


def rewrite(lab, root=ROOT):
    """Rewrites what is derived for `lab` (and the README table). Returns the
    paths rewritten, relative to root."""
    changed = []
    if rewrite_stub_hash(lab, root):
        changed.append("labs/labs.json")
    labs = load_labs(root)
    lab = [l for l in labs if l.number == lab.number][0]
    from course import language_lines
    if rewrite_readme(labs, root) | language_lines.rewrite_readme(root):
        changed.append("README.md")
    if rewrite_lesson_line(lab, root):
        changed.append(lab.lesson_file)
    return changed
