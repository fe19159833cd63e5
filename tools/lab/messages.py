"""What a learner reads: one line per failure, printable, free of machine paths.

Every string that came from a submission (compiler output, exception
messages, file names) passes through printable() before it is printed or
stored: no control characters, so no terminal escape sequences reach an
instructor's terminal or a report.
"""
import re

import limits

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def printable(text, limit=None):
    """Text with control characters removed (newlines and tabs become spaces)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.replace("\r\n", "\n").replace("\n", " ").replace("\t", " ")
    text = _CONTROL.sub("", text)
    # Unicode bidirectional controls can disguise text in a terminal too.
    text = re.sub("[\u202a-\u202e\u2066-\u2069\u200e\u200f]", "", text)
    text = re.sub(r" {2,}", " ", text).strip()
    if limit and len(text) > limit:
        text = text[:limit - 3].rstrip() + "..."
    return text


def clean_paths(text, prefixes):
    for p in sorted(prefixes, key=len, reverse=True):
        text = text.replace(p, "")
    return text


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? "
                         r"(?P<kind>fatal error|error|warning): (?P<text>.*)$")


def compile_error(output, learner_file):
    """The compiler's first error, preferring one in the learner's own file."""
    diags = [m for m in (_DIAGNOSTIC.match(l) for l in output.splitlines()) if m]
    errors = [m for m in diags if m.group("kind") != "warning"]
    mine = [m for m in errors if m.group("file") == learner_file]
    if any("Killed signal terminated program" in l or "virtual memory exhausted" in l or
           "out of memory" in l for l in output.splitlines()):
        return ("does not compile: the compiler was stopped at its limits (%d MiB of memory, "
                "%d s of CPU)" % (limits.COMPILE_MEMORY_MB, limits.COMPILE_CPU_SECONDS))
    if any("File size limit exceeded" in l or "file too large" in l.lower()
           for l in output.splitlines()):
        return ("does not compile: the object file would exceed %d MiB"
                % limits.COMPILE_FILE_MB)
    for m in (mine or errors)[:1]:
        where = "%s:%s" % (m.group("file"), m.group("line"))
        return printable("does not compile: %s: %s" % (where, m.group("text")),
                         limits.MESSAGE_CHARS)
    for l in output.splitlines():
        if "error" in l:
            return printable("does not compile: " + l, limits.MESSAGE_CHARS)
    return "does not compile (the compiler gave no message)"


def compile_warnings(output, learner_file):
    """Warnings about the learner's own file, one line each (at most five)."""
    out = []
    for l in output.splitlines():
        m = _DIAGNOSTIC.match(l)
        if m and m.group("kind") == "warning" and m.group("file") == learner_file:
            w = printable("%s:%s: warning: %s" % (m.group("file"), m.group("line"),
                                                  m.group("text")), limits.MESSAGE_CHARS)
            if w not in out:   # GCC repeats some (a constructor's two symbols)
                out.append(w)
    return out[:5]


def link_error(output, lab):
    for key in ("undefined reference", "multiple definition"):
        for l in output.splitlines():
            if key in l:
                m = re.search(r"((undefined reference|multiple definition) .*)$", l)
                what = m.group(1) if m else l
                hint = ""
                if key == "multiple definition":
                    hint = ("; a function of another lab or of the grader has that name: make "
                            "your helpers static or put them in an anonymous namespace")
                elif key == "undefined reference":
                    hint = "; is a function of the header missing from your file?"
                return printable("does not link: %s%s" % (what, hint), limits.MESSAGE_CHARS)
    for l in output.splitlines():
        if "error" in l:
            return printable("does not link: " + l, limits.MESSAGE_CHARS)
    return "does not link (the linker gave no message)"


_GTEST_BOILERPLATE = re.compile(
    r"^(Expected equality of these values:|Expected: |  Actual: |Actual: |Value of: |"
    r"Which is: |With diff:|Expected .* (to be|not to be|equal)|The difference between|"
    r"(unknown file|\S+:\d+): Failure$)")


def summarise_failure(message):
    """The line of a gtest failure a learner should read first: the test's own
    words (a "looks like ..." diagnosis, or the message streamed after an
    assertion) first, then gtest's account of the values."""
    raw = [l for l in message.splitlines() if l.strip()]
    for l in raw:
        m = re.match(r'\s*C\+\+ exception with description "(.*)" thrown', l, re.S)
        if m:
            return printable(m.group(1), limits.MESSAGE_CHARS)
    for l in raw:
        if "looks like" in l:
            return printable(l[l.index("looks like"):], limits.MESSAGE_CHARS)
    core, own = [], []
    for l in raw:
        if l.startswith("  ") or _GTEST_BOILERPLATE.match(l.strip()):
            core.append(l.strip())
        else:
            own.append(l.strip())
    # "Value of: pred / Actual: false (why)": the predicate's own reason.
    for l in core:
        m = re.match(r"Actual: false \((.*)\)$", l)
        if m:
            own.insert(0, m.group(1))
            core = []
            break
    core = [l for l in core if not re.match(r"^(unknown file|\S+:\d+): Failure$", l)]
    if own:
        text = " ".join(own)
        if core:
            text += " (" + " ".join(core) + ")"
        return printable(text, limits.MESSAGE_CHARS)
    return printable(" ".join(core) or "failed", limits.MESSAGE_CHARS)
