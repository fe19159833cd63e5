"""The hostile corpus's cases (tests/hostile/): reading them, and the one
learner file each submits.

Each tests/hostile/<case>/ holds an expect.json and, but for a roster case,
one learner file with one trick:

    {"lab": 1, "class": "forge" | "leak" | "hurt" | "reach" | "identity" | "drift",
     "trick": "...",
     "max_points": 0             (or "control": true: the case is graded without
                                  its trick too; the trick may not pass any test
                                  that the file without it does not)
     "honest": ["split_heads"]   (optional: these definitions come from
                                  honest/<target>.cc, the honest part of the file)
     "min_points": 1             (optional: the honest part must still earn points)
     "message": "..." or [...]   (optional: the first failure contains one of these)
     "mode": "cumulative"        (optional: graded in that mode; isolated by default)
     "with": [2]                 (optional: the solutions of these labs are submitted
                                  too, as the learner's own: cumulative mode links them)
     "with_files": {"2": "f.cc"} (optional: these labs are submitted from these files
                                  of the case's folder instead; they, and in cumulative
                                  mode the labs that link them, need not earn marks)
     "max_seconds": 60           (optional: the hostile lab's grading takes at most this)
     "needs": "network wall"     (optional: what must hold for the case to be held:
                                  where neither a network namespace nor Landlock's
                                  network rules exist, the check says so and skips it)
     "roster": [{"folder": "alice", "file": "@HONEST@"}, ...]
                                 (a roster case, class "identity": folders, by name
                                  or "folder_hex", and the file each holds: @HONEST@,
                                  @STUB@ or another case's name, whose file it takes)}

A case of class "drift" is one file graded on two work roots
(hostile_roster.py); a roster case is a whole roster; the others are the
corpus that hostile.check() grades.

The case's file is the whole learner file, or, when it has `//@` lines, a
trick written on its lab's stub; assemble() makes the one file a learner
would submit from it (tests/hostile/README.md describes the `//@` lines).
`@ROOT@`, `@WORK@`, `@CANARY@`, `@HOSTSECRET@`, `@READABLE@` and `@PORT@` in
a file are replaced before grading (source(); hostile.py says by what).
"""
import json
import os
import re

from labs import ROOT

HOSTILE = os.path.join(ROOT, "tests", "hostile")


class Case:
    def __init__(self, name, lab, path, expect):
        self.name = name
        self.lab = lab
        self.path = path
        self.expect = expect

    @property
    def kind(self):
        """"roster" (a whole roster), "drift" (one file on two work roots) or
        "corpus" (one file graded with the corpus)."""
        if "roster" in self.expect:
            return "roster"
        return "drift" if self.expect.get("class") == "drift" else "corpus"


def load_cases(labs):
    by_number = {lab.number: lab for lab in labs}
    cases = []
    for name in sorted(os.listdir(HOSTILE)):
        d = os.path.join(HOSTILE, name)
        if not os.path.isfile(os.path.join(d, "expect.json")):
            continue
        with open(os.path.join(d, "expect.json")) as f:
            expect = json.load(f)
        lab = by_number[expect["lab"]]
        cases.append(Case(name, lab, os.path.join(d, lab.target + ".cc"), expect))
    return cases


# ---------------------------------------------------------------------------
# A case's one learner file


def assemble(case, trick=True):
    """The one learner file `case` submits, as text.

    A case file without `//@` lines is the whole file. One with them is a trick
    written on its lab's stub: the stub, then the definitions its expect.json
    names in "honest" taken from honest/<target>.cc, then (trick=True) the
    trick's sections. trick=False gives its control: the same file without the
    trick. The submission stays one file, as a learner sends it."""
    path = case.path
    text = _pasted(path, 0)
    honest = case.expect.get("honest", [])
    if "\n//@ " not in "\n" + text:
        if honest or case.expect.get("control"):
            raise ValueError("%s: \"honest\" and \"control\" need a trick on the stub "
                             "(//@ lines)" % _rel(path))
        return text
    lines = _read(os.path.join(ROOT, case.lab.learner_file)).split("\n")
    if honest:
        where = os.path.join(HOSTILE, "honest", case.lab.target + ".cc")
        src = _read(where).split("\n")
        includes = [l for l in src if l.startswith("#include") and l not in lines]
        _after_includes(lines, [""] + includes if includes else [])
        for name in honest:
            first, last = _definition(src, name, where)
            lines = _replace(lines, name, src[first:last + 1], case.lab.learner_file)
    if not trick:
        return "\n".join(lines)
    head, sections = [], []
    for line in text.split("\n"):
        if line.startswith("//@ "):
            sections.append((line[4:].strip(), []))
        else:
            (sections[-1][1] if sections else head).append(line)
    while lines and lines[0].startswith("//"):      # the stub's own header comment
        lines.pop(0)
    for directive, body in sections:
        while body and not body[-1].strip():
            body.pop()
        if directive == "after includes":
            _after_includes(lines, [""] + body)
        elif directive.startswith("at the start of "):
            name = directive[len("at the start of "):]
            first, last = _definition(lines, name, case.lab.learner_file)
            opening = next(i for i in range(first, last + 1) if "{" in lines[i])
            if opening == last:
                raise ValueError("%s: %s is one line in the stub: write it whole "
                                 "(//@ instead of %s)" % (_rel(path), name, name))
            lines[opening + 1:opening + 1] = body
        elif directive.startswith("instead of "):
            name = directive[len("instead of "):]
            lines = _replace(lines, name, body, case.lab.learner_file)
        else:
            raise ValueError("%s: unknown line //@ %s (expected: after includes, at the start "
                             "of NAME, instead of NAME, paste FILE)" % (_rel(path), directive))
    return "\n".join(head + lines)


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _rel(path):
    return os.path.relpath(path, ROOT)


def _after_includes(lines, new):
    at = max(i for i, l in enumerate(lines) if l.startswith("#include"))
    lines[at + 1:at + 1] = new


def _pasted(path, depth):
    """`path`'s text with each `//@ paste FILE` line (FILE in tests/hostile/) replaced by FILE's."""
    if depth > 4:
        raise ValueError("%s: //@ paste nested more than 4 deep" % _rel(path))
    out = []
    for line in _read(path).split("\n"):
        if line.startswith("//@ paste "):
            out.append(_pasted(os.path.join(HOSTILE, line[len("//@ paste "):].strip()), depth + 1)
                       .rstrip("\n"))
        else:
            out.append(line)
    return "\n".join(out)


def _definition(lines, name, where):
    """(first, last) line of the one definition of function `name` in `lines`
    (house style: it starts at column 0 and ends on its line or at a line "}")."""
    call = re.compile(r"(?<![\w:~])" + re.escape(name) + r"\(")
    starts = [i for i, l in enumerate(lines)
              if l[:1].isalpha() and call.search(l) and not l.rstrip().endswith(";")]
    if len(starts) != 1:
        raise ValueError("%s: %d definitions of %s, not one" % (_rel(where), len(starts), name))
    first = starts[0]
    opening = next(i for i in range(first, len(lines)) if "{" in lines[i])
    if lines[opening].rstrip().endswith("}"):
        return first, opening
    return first, next(i for i in range(opening + 1, len(lines)) if lines[i].rstrip() == "}")


def _replace(lines, name, definition, where):
    first, last = _definition(lines, name, where)
    return lines[:first] + list(definition) + lines[last + 1:]


def source(case, replacements, trick=True):
    """The bytes `case` submits: assemble()'s file with each placeholder of
    `replacements` ({"@PORT@": "40123", ...}) replaced."""
    data = assemble(case, trick).encode()
    for placeholder, value in replacements.items():
        data = data.replace(placeholder.encode(), value.encode())
    return data


def honest_file(lab):
    """honest/<target>.cc of `lab`: an honest learner's whole file."""
    with open(os.path.join(HOSTILE, "honest", lab.target + ".cc"), "rb") as f:
        return f.read()
