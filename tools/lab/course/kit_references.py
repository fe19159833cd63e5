"""The kit's no-dead-reference scan: no text in the learner's kit may name a
repository path the kit does not have (solutions/, tests/, tools/goldens,
bench/, an instructors' document), a path outside the repository or
somebody's machine. reference_problems() is pure: {path: bytes} in, problems
out (tools/lab/tests/test_kit.py feeds it small trees); read_tree() reads an
exported kit for it."""
import fnmatch
import gettext
import io
import os
import re

from learner.i18n import N_


# The repository's top-level folders: a reference is a path that starts with
# one of them ("docs/01_split_heads.md", "tests/NN_name/"), a Bazel label
# ("//labs/01_split_heads:split_heads"), a relative path ("../common/x.h")
# or a Markdown link.
_TOP_DIRS = ("labs", "docs", "common", "tools", "tests", "solutions", "bench", "third_party")
_TOPS = "|".join(_TOP_DIRS)
_PATH_RE = re.compile(r"(?<![\w./@%$<>{}-])((?:\.\./)*)((?:" + _TOPS + r")/[\w.*<>{}%$/-]*)")
_LABEL_RE = re.compile(r"(?<![\w@.:/-])//((?:" + _TOPS + r")(?:/[\w.*<>{}%$-]*)*)"
                       r"(?::[\w.%<>{}*+-]*)?")
_UP_RE = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-]+(?:/[\w.*-]+)*)")
_MD_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
# Bazel configs that build from a folder the kit does not have (.bazelrc).
_CONFIG_RE = re.compile(r"--config[= ](solutions|bench)\b")
_CONFIG_DIRS = {"solutions": "solutions", "bench": "bench"}
# Absolute paths of somebody's machine (not system paths like /usr/include).
_MACHINE_RE = re.compile(r"(?<![\w.-])(/(?:work|home|root|Users)/[\w./-]+)")
# A passage may name a path of the full repository when it says so: a
# Markdown paragraph, or a run of comment lines, that contains one of these.
# The marker in English (and the wordings the Spanish and Portuguese pages
# used before the markers were messages); every other language says it with
# its catalogue's translation of MARKERS (po/cli/<lang>.po, compiled into the
# kit), so a translated page marks its passages as its English does.
_ELSEWHERE_RE = re.compile(r"instructors'? (?:repository|copy)|"
                           r"not in (?:the |your )?(?:learner(?:'s)? )?kit|"
                           r"de los instructores|no en el kit|"
                           r"dos instrutores|não no kit|fora do kit", re.I)
# TRANSLATORS: a passage of a translated page that names a path only the
# instructors' repository has must contain one of these two, as translated
# here, word for word (the kit check looks for them).
MARKERS = (N_("instructors' repository"), N_("not in the kit"))
_CATALOGUE = re.compile(r"^tools/lab/locale/[^/]+/LC_MESSAGES/lab\.mo$")


def elsewhere_re(files):
    """_ELSEWHERE_RE and each kit catalogue's translation of MARKERS."""
    extra = []
    for rel in sorted(files):
        if _CATALOGUE.match(rel):
            try:
                tr = gettext.GNUTranslations(io.BytesIO(files[rel]))
            except (OSError, gettext.error):
                continue
            extra += [" ".join(tr.gettext(m).split()) for m in MARKERS if tr.gettext(m) != m]
    if not extra:
        return _ELSEWHERE_RE
    return re.compile(_ELSEWHERE_RE.pattern + "".join("|" + re.escape(w) for w in extra), re.I)


_COMMENT_RE = re.compile(r"^\s*(//|#|\*|/\*)")


def passages(rel, text):
    """[(first line number, [lines])]: the units a marker (elsewhere_re())
    covers. Markdown: paragraphs (blank-line separated). Other files: each run
    of comment lines, and every other line on its own."""
    lines = text.splitlines()
    out = []
    cur, start = [], 1
    for i, line in enumerate(lines, 1):
        if rel.endswith(".md"):
            joins = bool(line.strip())
        else:
            joins = bool(_COMMENT_RE.match(line)) and bool(cur) and \
                bool(_COMMENT_RE.match(cur[-1]))
        if joins and cur:
            cur.append(line)
            continue
        if cur:
            out.append((start, cur))
        cur, start = [line], i
        if rel.endswith(".md") and not line.strip():
            cur = []
            start = i + 1
    if cur:
        out.append((start, cur))
    return out


# References that the kit keeps on purpose, in code that never runs in a kit
# ({file: (reference as written, ...)}):
#   common/lab.bzl: the --config=solutions branch of a select() and the
#     grader's manual *_remote targets; no kit build loads them (the kit
#     self-test runs bazel test //labs/..., bazel build //... and
#     bazel query //labs/... in a kit to make sure);
#   tools/lab/labs.py: the Lab names of instructors' files and targets
#     (solution_file, hidden_test, remote_file, ...), used only by the
#     instructors' commands;
#   tools/lab/main.py: the help of the instructors' commands, which ./lab
#     does not offer in a kit (learner/cli.py parses a kit's commands).
INSTRUCTOR_ONLY = {
    # The macros also serve the instructors' repository (solutions, grading).
    "common/lab.bzl": ("//solutions/%s", "//tests/%s", "solutions/", "tests/",
                       "--config=solutions"),
    "common/registry.bzl": ("tests/", "solutions/"),
    # Who may depend on common/'s packages: tests/ and bench/ too (Bazel
    # accepts a visibility to a package the kit does not have).
    "common/visibility.bzl": ("//tests:", "//tests/", "//bench:", "tests/", "bench/"),
    "tools/lab/labs.py": ("solutions/{dir}/", "//tests/{dir}", "tests/{dir}/"),
    "tools/lab/main.py": ("docs/INSTRUCTORS.md", "tests/rubric.json", "tests/*/mutants/"),
    # The remote interfaces name the call surface's functions in the instructors'
    # repository; in a kit, surface.units() finds none and the kit reads the
    # learner's own objects instead (learner/public_tests.py, surface_warnings).
    "tools/lab/surface.py": ("tests/NN_name/remote.cc", "tests/"),
}
_TEXT_SUFFIXES = (".md", ".txt", ".h", ".cc", ".inc", ".bzl", ".py", ".sh", ".json", ".BUILD",
                  ".bazelrc", ".cfg", ".toml", ".yaml", ".yml", ".in")
_TEXT_NAMES = ("BUILD", "WORKSPACE", "lab", ".bazelrc", ".bazelignore", ".gitignore")


def _is_text(rel, data):
    name = os.path.basename(rel)
    if not (name in _TEXT_NAMES or name.endswith(_TEXT_SUFFIXES)):
        return False
    return b"\0" not in data[:4096]


def _pattern(ref):
    """A path with placeholders (NN_name, <target>, %s, {x}, *) as an fnmatch pattern."""
    p = ref
    p = re.sub(r"<[^>/]*>|\{[^}/]*\}|%0?\d*[sd]|\$\([^)/]*\)|\$\{[^}/]*\}|\$\w+", "*", p)
    parts = []
    for seg in p.split("/"):
        seg = re.sub(r"\bNN_name\b|\bNN_x\b", "[0-9][0-9]_*", seg)
        seg = re.sub(r"\bNN\b", "[0-9][0-9]", seg)
        parts.append(seg)
    return "/".join(parts)


def _known(files):
    """Every file of `files`, every folder above one, and every Bazel target
    ("common/core/vector_math": a name in common/core/BUILD; tests name the programs
    they run by such runfiles paths)."""
    known = set()
    for rel in files:
        known.add(rel)
        d = os.path.dirname(rel)
        while d:
            known.add(d)
            d = os.path.dirname(d)
        if os.path.basename(rel) == "BUILD" and isinstance(files, dict):
            text = files[rel].decode("utf-8", "replace")
            for name in re.findall(r'\bname\s*=\s*"([^"]+)"', text):
                known.add(os.path.join(os.path.dirname(rel), name))
    return known


def _exists(ref, known):
    ref = ref.rstrip("/")
    if ref.endswith("/..."):                 # a Bazel pattern: its folder
        ref = ref[:-4]
    if not ref:
        return True
    pat = _pattern(ref)
    if not re.search(r"[*?\[]", pat):
        return ref in known
    rx = re.compile(fnmatch.translate(pat))
    return any(rx.match(k) for k in known)


def _clean(ref):
    """A reference without the sentence's punctuation around it."""
    if ref.endswith("/..."):
        return ref
    ref = ref.rstrip(".,;:)'\"`*")
    return ref.rstrip(".") if not ref.endswith("..") else ref


def reference_problems(files):
    """["path:line: `ref` ..."] for each repository path named in the text of
    `files` ({relative path: bytes}) that `files` does not contain; also
    relative paths that climb out of the repository and absolute paths of
    somebody's machine. A line that says the path is in the instructors'
    repository is allowed to name it."""
    known = _known(files)
    elsewhere = elsewhere_re(files)
    problems = []
    for rel in sorted(files):
        data = files[rel]
        if not _is_text(rel, data):
            continue
        here = os.path.dirname(rel)
        lines = []
        for start, passage in passages(rel, data.decode("utf-8", "replace")):
            words = " ".join(_COMMENT_RE.sub("", l) for l in passage)
            if not elsewhere.search(" ".join(words.split())):
                lines += [(start + i, l) for i, l in enumerate(passage)]
        for lineno, line in lines:
            found = []                      # (reference as written, path in the kit or None)
            for m in _LABEL_RE.finditer(line):
                found.append((m.group(0), _clean(m.group(1))))
            for m in _PATH_RE.finditer(line):
                ups, path = m.group(1), _clean(m.group(2))
                if m.start() >= 2 and line[m.start() - 2:m.start()] == "//":
                    continue                # a label, done above
                if ups:
                    target = os.path.normpath(os.path.join(here, ups + path))
                    found.append((ups + path, None if target.startswith("..") else target))
                else:
                    found.append((path, path))
            for m in _UP_RE.finditer(line):
                target = os.path.normpath(os.path.join(here, m.group(1)))
                if target.startswith(".."):
                    found.append((m.group(1), None))
            if rel.endswith(".md"):
                for m in _MD_LINK_RE.finditer(line):
                    link = m.group(1).split("#")[0]
                    if not link or re.match(r"^[a-z]+:", link) or link.startswith("/"):
                        continue
                    target = os.path.normpath(os.path.join(here, link))
                    found.append((link, None if target.startswith("..") else target))
            for m in _CONFIG_RE.finditer(line):
                found.append((m.group(0), _CONFIG_DIRS[m.group(1)]))
            for m in _MACHINE_RE.finditer(line):
                found.append((m.group(1), None))
            for ref, target in dict.fromkeys(found):
                if any(ref.startswith(ok) for ok in INSTRUCTOR_ONLY.get(rel, ())):
                    continue
                if target is None:
                    problems.append("%s:%d: `%s` is outside the repository" % (rel, lineno, ref))
                elif ref.startswith("--config") and not _exists(target, known):
                    problems.append("%s:%d: `%s` builds from %s/, which is not in the kit"
                                    % (rel, lineno, ref, target))
                elif not _exists(target, known):
                    problems.append("%s:%d: `%s` is not in the kit" % (rel, lineno, ref))
    return problems


def read_tree(dest):
    """{relative path: bytes} of every regular file under dest."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(dest):
        dirnames[:] = [d for d in dirnames if not d.startswith("bazel-")]
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            with open(full, "rb") as f:
                files[os.path.relpath(full, dest)] = f.read()
    return files

