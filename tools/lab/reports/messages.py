"""What a learner reads: one line per failure, printable, free of machine paths.

Every string that came from a submission (compiler output, exception
messages, file names) passes through printable() before it is printed or
stored: no control characters, so no terminal escape sequences reach an
instructor's terminal or a report.
"""
import re
import unicodedata

import limits

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def printable(text, limit=None):
    """Text with control characters removed (newlines and tabs become spaces)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = valid_utf8(text)
    text = text.replace("\r\n", "\n").replace("\n", " ").replace("\t", " ")
    text = _CONTROL.sub("", text)
    # Format characters print as nothing (zero-width spaces and joiners, a
    # soft hyphen, a byte-order mark) or disguise text (the bidirectional
    # controls): "bob\u200b" must not print as a second "bob". Every other
    # space prints as a space.
    if not text.isascii():
        text = "".join(" " if unicodedata.category(c) in ("Zs", "Zl", "Zp") else c for c in text
                       if unicodedata.category(c) != "Cf")
    text = re.sub(r" {2,}", " ", text).strip()
    if limit and len(text) > limit:
        text = text[:limit - 3].rstrip() + "..."
    return text


def valid_utf8(text):
    """`text` with what cannot be written as UTF-8 (a file name's stray byte,
    which os.listdir returns as a lone surrogate) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:        # the file system's bytes back, then each bad byte one U+FFFD
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def clean_paths(text, prefixes):
    for p in sorted(prefixes, key=len, reverse=True):
        text = text.replace(p, "")
    return text


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? "
                         r"(?P<kind>fatal error|error|warning|note): (?P<text>.*)$")
_REQUIRED = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)?\s+required from ")


_GCC_INCLUDE = re.compile(r"^/usr/lib/gcc/[^/]+/\d+/include/")


def short_path(path):
    """A library header's path as a reader knows it: xtensor/xfunction.hpp."""
    for prefix in ("external/system/include/", "/usr/include/", "external/system/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    # GCC's own headers, on any architecture: /usr/lib/gcc/<triplet>/<version>/include/.
    m = _GCC_INCLUDE.match(path)
    return path[m.end():] if m else path


def _first_error(output, own_file, learner_files=()):
    """(file, line, kind, text) of the compiler's first error that points into
    the learner's own file, or None; see first_error."""
    learner_files = set(learner_files) | {own_file}
    best = None                              # (rank, (file, line, kind, text))
    trail = []                               # learner-file lines of the current "required from"
    for raw in output.splitlines():
        line = raw.rstrip()
        m = _REQUIRED.match(line)
        if m:
            if m.group("file") in learner_files:
                trail.append((m.group("file"), m.group("line")))
            continue
        m = _DIAGNOSTIC.match(line)
        if not m:
            continue
        kind = m.group("kind")
        if kind == "note":
            continue
        if kind == "warning":
            trail = []
            continue
        f, text = m.group("file"), m.group("text")
        if f in learner_files:
            where, extra = (f, m.group("line")), ""
        elif trail:
            where, extra = trail[-1], " (in %s:%s)" % (short_path(f), m.group("line"))
        else:
            where, extra = (short_path(f), m.group("line")), ""
        trail = []
        rank = 0 if where[0] == own_file else 1 if where[0] in learner_files else 2
        if best is None or rank < best[0]:
            best = (rank, (where[0], where[1], kind, text + extra))
            if rank == 0:
                break
    return best[1] if best else None


def first_error(output, own_file, learner_files=()):
    """The compiler's first error that points into the learner's own file, as
    one line "file:line: error: message", or None if the output has no error.

    An error inside a library header counts as the learner's when the
    compiler's "required from here" trail leads to a learner file (a template
    the learner's line instantiated): it is reported at that line, with the
    header named. The lab's own file comes first, then another learner file
    (an earlier lab it builds on), then any error at all."""
    err = _first_error(output, own_file, learner_files)
    return printable("%s:%s: %s: %s" % err, limits.MESSAGE_CHARS) if err else None


def compile_error(output, learner_file):
    """The compiler's first error, preferring one in the learner's own file
    (see first_error), as "does not compile: file:line: message"."""
    if any("Killed signal terminated program" in l or "virtual memory exhausted" in l or
           "out of memory" in l for l in output.splitlines()):
        return ("does not compile: the compiler was stopped at its limits (%d MiB of memory, "
                "%d s of CPU)" % (limits.COMPILE_MEMORY_MB, limits.COMPILE_CPU_SECONDS))
    if any("File size limit exceeded" in l or "file too large" in l.lower()
           for l in output.splitlines()):
        return ("does not compile: the object file would exceed %d MiB"
                % limits.COMPILE_FILE_MB)
    err = _first_error(output, learner_file)
    if err:
        return printable("does not compile: %s:%s: %s" % (err[0], err[1], err[3]),
                         limits.MESSAGE_CHARS)
    for l in output.splitlines():
        if "error" in l:
            return printable("does not compile: " + l, limits.MESSAGE_CHARS)
    return "does not compile (the compiler gave no message)"


def warnings_in(output, files):
    """{file: ["file:line: warning: message [-Wflag]", ...]} for the learner
    files given, in order, without repeats (GCC repeats some: a constructor's
    two symbols)."""
    out = {}
    for line in output.splitlines():
        m = _DIAGNOSTIC.match(line.rstrip())
        if m and m.group("kind") == "warning" and m.group("file") in files:
            w = printable("%s:%s: warning: %s" % (m.group("file"), m.group("line"),
                                                  m.group("text")), limits.MESSAGE_CHARS)
            lst = out.setdefault(m.group("file"), [])
            if w not in lst:
                lst.append(w)
    return out


def compile_warnings(output, learner_file):
    """Warnings about the learner's own file, one line each (at most five)."""
    return warnings_in(output, {learner_file}).get(learner_file, [])[:5]


def linker_complaint(output):
    """The linker's first complaint (a missing or a doubly defined symbol) with
    what to do about it, one line, or None if the output names neither."""
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
                    hint = "; is a function of the header missing from your file, or misspelt?"
                return printable("does not link: %s%s" % (what, hint), limits.MESSAGE_CHARS)
    return None


def link_error(output):
    """The linker's first complaint, or failing that its first error line."""
    found = linker_complaint(output)
    if found:
        return found
    for l in output.splitlines():
        if "error" in l:
            return printable("does not link: " + l, limits.MESSAGE_CHARS)
    return "does not link (the linker gave no message)"


_GTEST_BOILERPLATE = re.compile(
    r"^(Expected equality of these values:|Expected: |  Actual: |Actual: |Value of: |"
    r"Which is: |With diff:|Expected .* (to be|not to be|equal)|The difference between|"
    r"(unknown file|\S+:\d+): Failure$)")


def summarise_failure(message, limit=limits.MESSAGE_CHARS):
    """The line of a gtest failure a learner should read first: the test's own
    words (a "looks like ..." diagnosis, or the message streamed after an
    assertion) first, then gtest's account of the values; at most `limit`
    characters (None: all of it, for a caller that translates the line before
    cutting it: a sentence cut short cannot be read back)."""
    raw = [l for l in message.splitlines() if l.strip()]
    for l in raw:
        m = re.match(r'\s*C\+\+ exception with description "(.*)" thrown', l, re.S)
        if m:
            return printable(m.group(1), limit)
    for l in raw:
        if "looks like" in l:
            return printable(l[l.index("looks like"):], limit)
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
        return printable(text, limit)
    return printable(" ".join(core) or "failed", limit)
