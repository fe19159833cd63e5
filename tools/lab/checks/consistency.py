"""The registry check (like rustlings' `dev check`): labs/labs.json against the tree.

A lab is its mirrored folders plus one registry line. This finds, fast and
without building anything:

  * a registered lab with a missing file: header, stub, public test, hints,
    solution, hidden test, remote interface, golden generator, lesson,
    BUILD files;
  * a stub whose sha256 differs from the registry's (the status and grading
    tools recognise the untouched stub by it);
  * a lab folder under labs/, solutions/, tests/ or docs/ with no registry line;
  * numbers that do not run 1, 2, 3, ... or a dir that does not start with its number;
  * README.md's lab table out of step with the registry;
  * a line with no "calls" (its call surface, tools/lab/surface.py), a name in
    it that no earlier lab has, or a lesson whose "What you may call" line
    differs from it;
  * a signature of tests/NN_name/remote.cc that differs from the lab's header
    (checks/signatures.py).
"""
import json
import os
import re

from checks import signatures
from labs import ROOT, load_labs, sha256
import surface

_LAB_DIR = re.compile(r"^(\d\d)_[a-z0-9_]+$")


def expected_files(lab):
    """Every file a registered lab must have, by labs.Lab's names."""
    return [lab.header_file, lab.learner_file, lab.public_test_file, lab.test_util_file,
            lab.hints_file, lab.solution_file, lab.hidden_test_file, lab.remote_file, lab.goldens_generator,
            lab.lesson_file] + lab.build_files


def problems(labs=None, root=ROOT):
    labs = labs if labs is not None else load_labs(root)
    out = []
    numbers = [lab.number for lab in labs]
    if numbers != list(range(1, len(labs) + 1)):
        out.append("labs/labs.json numbers the labs %s; they must run 1, 2, 3, ..." % numbers)
    for lab in labs:
        if not lab.dir.startswith("%02d_" % lab.number) or not _LAB_DIR.match(lab.dir):
            out.append("lab %d: dir %r must be NN_name with NN = %02d" % (lab.number, lab.dir,
                                                                          lab.number))
        for rel in expected_files(lab):
            if not os.path.isfile(os.path.join(root, rel)):
                out.append("lab %d: %s is missing" % (lab.number, rel))
        data = lab.read_learner_file(root)
        if data is not None:
            if not lab.is_stub(data):
                out.append("lab %d: %s is not the stub recorded in labs/labs.json (sha256 %s, "
                           "registry %s): restore the stub, or record the new one's hash"
                           % (lab.number, lab.learner_file, sha256(data)[:12],
                              lab.stub_sha256[:12]))
        if not lab.hints:
            out.append("lab %d: %s has no hints" % (lab.number, lab.hints_file))
        out += surface.registry_problems(lab, labs, root)
        if lab.calls is not None:
            out += surface.lesson_problems(lab, root)
        out += signatures.problems(lab, root)
    registered = {lab.dir for lab in labs}
    for top in ("labs", "solutions", "tests"):
        base = os.path.join(root, top)
        for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if _LAB_DIR.match(name) and name not in registered:
                out.append("%s/%s is a lab folder with no line in labs/labs.json" % (top, name))
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        stem = name[:-3] if name.endswith(".md") else ""
        if _LAB_DIR.match(stem) and stem not in registered:
            out.append("docs/%s is a lesson with no line in labs/labs.json" % name)
    out += readme_problems(labs, root)
    return out


README_ROW = re.compile(r"^\| \d+ \| `labs/")


def readme_rows(labs, title_of=None):
    """The README's lab table, as the registry says it must be (title_of(lab):
    the title a translated README shows; the registry's by default)."""
    return ["| %d | `%s` | `%s` | [%s](%s) |" % (
        lab.number, os.path.dirname(lab.learner_file), os.path.basename(lab.learner_file),
        title_of(lab) if title_of else lab.title, lab.lesson_file) for lab in labs]


def readme_problems(labs, root=ROOT):
    path = os.path.join(root, "README.md")
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        lines = f.read().splitlines()
    rows = [l for l in lines if README_ROW.match(l)]
    want = readme_rows(labs)
    if rows != want:
        missing = [r for r in want if r not in rows]
        extra = [r for r in rows if r not in want]
        detail = ""
        if missing:
            detail += " missing: %s" % missing[0]
        if extra:
            detail += " unexpected: %s" % extra[0]
        return ["README.md's lab table differs from labs/labs.json (%d rows, %d labs);%s"
                % (len(rows), len(labs), detail)]
    return []


def registry_line(number, dir_name, target, title, stub_bytes, calls=()):
    """One line of labs/labs.json."""
    return json.dumps({"number": number, "dir": dir_name, "target": target, "title": title,
                       "calls": list(calls), "stub_sha256": sha256(stub_bytes)})
