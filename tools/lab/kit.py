"""./lab export-kit DIR: the learner's copy of the suite.

What goes in (an allow-list): the Bazel workspace files, ./lab and
tools/setup.sh, the learner's tools (tools/lab/main.py, labs.py, learner.py,
messages.py, limits.py), common/,
labs/ (headers, BUILD files, public tests and their goldens, hints, and each
learner file as its stub), docs/ (the lessons, the tolerance policy, the
NumPy bridge, images), third_party/, and a learner README.md.

What never does: solutions/, tests/ (hidden tests, goldens, mutants, hostile
submissions, the rubric), tools/goldens/ (the generators compute the hidden
goldens), the grader's own modules, the instructors' documents
(docs/INSTRUCTORS.md, docs/SCALING.md, docs/PERFORMANCE.md, docs/AUTHORING.md: grading,
caches, benchmarks of the reference solutions), .git and caches.

Three checks run on an exported kit: leaks() (nothing secret got in),
symbol_check() (built, no object file but a lab's stub defines a function of
that lab's header: tools/lab/kitsymbols.py) and reference_problems() (no
text in the kit names a repository path the kit does not have).
selftest_checks() is what ./lab test runs.
"""
import fnmatch
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

from labs import ROOT, load_labs

_TOP = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore", ".gitignore", "lab"]
_DIRS = ["common", "labs", "docs", "third_party", "tools/lab", ".devcontainer"]
_SKIP_FILES = {"docs/INSTRUCTORS.md", "docs/SCALING.md", "docs/PERFORMANCE.md",
               "docs/AUTHORING.md"}
_SKIP_DIRS = {"__pycache__"}
# Of tools/lab/, only what the learner's commands import (main.py routes the
# kit's ./lab to learner.py; see learner.main).
_KIT_TOOLS = {"main.py", "labs.py", "learner.py", "messages.py", "limits.py", "surface.py"}

README = """# Multi-head attention, one lab at a time: the learner's kit

{count} labs, each one C++ file to write. The header next to it says exactly
what each function must do; the lesson in docs/ explains the idea, the maths
and the classic mistakes.

| lab | you write | lesson |
| --- | --- | --- |
{rows}

## Set up (once)

On Debian 12 (bookworm), from this folder:

    tools/setup.sh          # installs Bazel, a compiler, GoogleTest, xtensor, OpenBLAS

(every `./lab` command runs it first; it says nothing when all is installed).
Without root it installs nothing: it prints the `apt-get install` line to
hand to an administrator, and the dev-container alternative.

On macOS, Windows, or any machine that is not Debian 12: use the dev
container in `.devcontainer/` (Debian 12 with everything installed; arm64
too, so Apple silicon runs it natively). Install Docker or Podman, then
either open this folder in VS Code with the Dev Containers extension and
choose "Reopen in Container" (GitHub Codespaces works the same), or run,
from this folder:

    docker build -t mha-labs -f .devcontainer/Dockerfile .
    docker run --rm -it -v "$PWD":/workspaces/mha -w /workspaces/mha mha-labs

## The loop

    ./lab status            # where you are: each lab not started / failing / passing
    bazel test //labs/01_split_heads/...    # the public tests of lab 1
    ./lab watch 1           # re-run them every time you save the file (Ctrl-C stops)
    ./lab hint 1            # a hint, when stuck (gentle first)
    ./lab grade             # a provisional scoreboard from the public tests

The first build takes a few minutes; later ones seconds. A failure that says
"lab N: X is not implemented yet" means the stub is still there: that is
where you start. When your file does not compile, `./lab status` and
`./lab watch` print the first error in your own file (file:line: message)
before the compiler's long template backtrace, and the warnings about your
file (`-Wall -Wextra -Wshadow`: a constructor that writes `d_model = d_model;`
warns).

Only `labs/NN_name/<name>.cc` is yours; headers, tests and BUILD files stay
as they are. Commit your work with git if you like: the tools recognise an
untouched stub by its content, not by git history.

`./lab grade` is not your grade. Your instructor grades the `.cc` files
with hidden tests that check more than the public ones (other shapes and
seeds, bad arguments, numbers compared with PyTorch): make the public tests
pass, then re-read the header and the lesson's "Classic mistakes".
"""


class StubError(RuntimeError):
    pass


def stub_bytes(lab, root=ROOT):
    """The untouched stub of a lab: the working tree's learner file when its
    sha256 is the registry's stub_sha256, else the one committed at git HEAD
    when that one is. Raises StubError when neither is (an instructor's
    checkout whose labs/ holds finished work must not ship it)."""
    with open(os.path.join(root, lab.learner_file), "rb") as f:
        data = f.read()
    if not lab.stub_sha256 or lab.is_stub(data):
        return data
    try:
        head = subprocess.run(["git", "-C", root, "show", "HEAD:" + lab.learner_file],
                              check=True, capture_output=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        head = None
    if head is not None and lab.is_stub(head):
        return head
    raise StubError("%s is not the stub recorded in labs/labs.json (sha256 %s...), neither in "
                    "the working tree nor at git HEAD; restore it (git checkout %s) or record "
                    "the new stub's sha256" % (lab.learner_file, lab.stub_sha256[:12],
                                                 lab.learner_file))


def collect(top, dirs, skip_dirs=(), skip_files=()):
    """{relative path: bytes}: the files `top` and everything under `dirs`
    (no links, caches or .pyc), plus tools/setup.sh, with every learner file
    replaced by its stub (stub_bytes). Shared by the kit and the Gradescope
    bundle."""
    labs = load_labs()
    files = {}
    for name in top:
        p = os.path.join(ROOT, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                files[name] = f.read()
    with open(os.path.join(ROOT, "tools", "setup.sh"), "rb") as f:
        files["tools/setup.sh"] = f.read()
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = sorted(x for x in dirnames
                                 if x not in _SKIP_DIRS and x not in skip_dirs
                                 and not x.startswith((".", "bazel-")))
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, ROOT)
                if rel in skip_files or os.path.islink(full) or fn.endswith(".pyc"):
                    continue
                with open(full, "rb") as f:
                    files[rel] = f.read()
    for lab in labs:
        files[lab.learner_file] = stub_bytes(lab)
    return files


# .bazelrc configs that build what the kit does not have: the reference
# solutions, the benchmarks of them, the graders' shared cache.
_INSTRUCTOR_CONFIGS = ("solutions", "bench", "remote-cache")


def kit_bazelrc(text):
    """The repository's .bazelrc without the instructors' configs: each
    paragraph (blank-line separated) that only defines one of them is left
    out, so that `--config=solutions` in a kit says the config is not defined
    instead of failing on a missing package."""
    kept, dropped = [], []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        settings = [l for l in para.splitlines() if l.strip() and not l.lstrip().startswith("#")]
        configs = {re.match(r"^\w+:([\w-]+)", l).group(1) if re.match(r"^\w+:[\w-]+", l)
                   else None for l in settings}
        if settings and configs <= set(_INSTRUCTOR_CONFIGS):
            dropped += sorted(configs)
        else:
            kept.append(para)
    if dropped:
        kept.append("\n".join(textwrap.wrap(
            "The instructors' configs (%s) are not in the learner kit."
            % ", ".join("--config=" + c for c in dict.fromkeys(dropped)),
            width=78, initial_indent="# ", subsequent_indent="# ")))
    return "\n\n".join(kept) + "\n"


def kit_files(labs):
    """{relative path: bytes} of the learner's kit."""
    files = collect(_TOP, _DIRS, skip_files=_SKIP_FILES)
    if ".bazelrc" in files:
        files[".bazelrc"] = kit_bazelrc(files[".bazelrc"].decode()).encode()
    for rel in list(files):
        if rel.startswith("tools/lab/") and rel[len("tools/lab/"):] not in _KIT_TOOLS:
            del files[rel]
    rows = "\n".join("| %d | `%s` | [%s](docs/%s.md) |" % (lab.number, lab.learner_file,
                                                             lab.title, lab.dir)
                     for lab in labs)
    words = {7: "Seven", 8: "Eight", 9: "Nine", 10: "Ten", 11: "Eleven", 12: "Twelve",
             13: "Thirteen", 14: "Fourteen", 15: "Fifteen"}
    files["README.md"] = README.format(count=words.get(len(labs), str(len(labs))),
                                       rows=rows).encode()
    return files


_EXECUTABLE = {"lab", "tools/setup.sh"}


def export(dest, labs=None):
    labs = labs or load_labs()
    if os.path.exists(dest) and os.listdir(dest):
        raise FileExistsError("%s exists and is not empty" % dest)
    files = kit_files(labs)
    for rel, data in files.items():
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        if rel in _EXECUTABLE or rel.endswith(".sh"):
            os.chmod(p, 0o755)
    return files


def leaks(dest):
    """Files of the kit that must not be there: [reason]."""
    problems = []
    secret = {}
    for d in ("solutions", "tests"):
        for dirpath, _, filenames in os.walk(os.path.join(ROOT, d)):
            for fn in filenames:
                full = os.path.join(dirpath, fn)
                with open(full, "rb") as f:
                    data = f.read()
                if len(data) >= 64:   # tiny files (an empty BUILD) prove nothing
                    secret[hashlib.sha256(data).hexdigest()] = os.path.relpath(full, ROOT)
    # Bytes the repository itself publishes in labs/ are public whatever else
    # holds the same bytes (the 5x5 causal mask is an input of public and
    # hidden tests alike).
    for dirpath, _, filenames in os.walk(os.path.join(ROOT, "labs")):
        for fn in filenames:
            with open(os.path.join(dirpath, fn), "rb") as f:
                secret.pop(hashlib.sha256(f.read()).hexdigest(), None)
    for dirpath, dirnames, filenames in os.walk(dest):
        rel_dir = os.path.relpath(dirpath, dest)
        for d in dirnames:
            r = os.path.normpath(os.path.join(rel_dir, d))
            if r in ("solutions", "tests", "tools/goldens", ".git"):
                problems.append("the kit has %s/" % r)
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            rel = os.path.normpath(os.path.join(rel_dir, fn))
            if rel in _SKIP_FILES or fn == "rubric.json":
                problems.append("the kit has %s" % rel)
            with open(full, "rb") as f:
                h = hashlib.sha256(f.read()).hexdigest()
            if h in secret:
                problems.append("%s is a copy of %s" % (rel, secret[h]))
    return problems


# --------------------------------------------------------------------------- path references

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
_ELSEWHERE_RE = re.compile(r"instructors'? (?:repository|copy)|"
                           r"not in (?:the |your )?(?:learner(?:'s)? )?kit", re.I)
_COMMENT_RE = re.compile(r"^\s*(//|#|\*|/\*)")


def _passages(rel, text):
    """[(first line number, [lines])]: the units a marker (_ELSEWHERE_RE)
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
#   tools/lab/labs.py: Lab.solution_file and Lab.hidden_test, used only by
#     the instructors' commands;
#   tools/lab/main.py: the help of the instructors' commands, which ./lab
#     does not offer in a kit (learner.main parses a kit's commands).
INSTRUCTOR_ONLY = {
    # The macros also serve the instructors' repository (solutions, grading).
    "common/lab.bzl": ("//solutions/%s", "//tests/%s", "solutions/", "tests/",
                       "--config=solutions"),
    "common/registry.bzl": ("tests/", "solutions/"),
    # Who may depend on common/'s packages: tests/ and bench/ too (Bazel
    # accepts a visibility to a package the kit does not have).
    "common/visibility.bzl": ("//tests:", "//tests/", "//bench:", "tests/", "bench/"),
    "tools/lab/labs.py": ("solutions/%s/%s.cc", "//tests/%s"),
    "tools/lab/main.py": ("docs/INSTRUCTORS.md", "tests/rubric.json", "tests/*/mutants/"),
    # The remote interfaces name the call surface's functions in the instructors'
    # repository; in a kit, surface.units() finds none and the kit reads the
    # learner's own objects instead (learner.surface_warnings).
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
    problems = []
    for rel in sorted(files):
        data = files[rel]
        if not _is_text(rel, data):
            continue
        here = os.path.dirname(rel)
        lines = []
        for start, passage in _passages(rel, data.decode("utf-8", "replace")):
            words = " ".join(_COMMENT_RE.sub("", l) for l in passage)
            if not _ELSEWHERE_RE.search(" ".join(words.split())):
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


def symbol_check(kit_dir, labs):
    """kitsymbols.scan of an exported kit, in a temporary Bazel output base
    that is removed afterwards (no bazel-* links are left in the kit).
    Returns (problems, object files scanned)."""
    import kitsymbols
    ob = tempfile.mkdtemp(prefix="mha-kit-symbols-")
    bazel = ["bazel", "--output_base=" + ob]
    try:
        return kitsymbols.scan(kit_dir, labs, bazel)
    finally:
        subprocess.run(bazel + ["shutdown"], cwd=kit_dir, capture_output=True)
        subprocess.run(["chmod", "-R", "u+w", ob], capture_output=True)
        shutil.rmtree(ob, ignore_errors=True)


def cmd_export_kit(args):
    labs = load_labs()
    try:
        files = export(args.dest, labs)
    except (FileExistsError, StubError) as e:
        print("lab: %s" % e, file=sys.stderr)
        return 1
    bad = leaks(args.dest)
    if bad:
        shutil.rmtree(args.dest, ignore_errors=True)
        print("lab: the kit would leak: %s; nothing written" % "; ".join(bad), file=sys.stderr)
        return 1
    if getattr(args, "skip_symbol_check", False):
        print("lab: warning: the kit's symbols were not checked (--skip-symbol-check)",
              file=sys.stderr)
    else:
        print("checking the kit by symbols: bazel build //... in %s, then nm of every object "
              "file (a few minutes the first time)..." % args.dest, flush=True)
        bad, count = symbol_check(args.dest, labs)
        if bad:
            shutil.rmtree(args.dest, ignore_errors=True)
            print("lab: the kit would hold an answer (%d problem(s)); nothing written:"
                  % len(bad), file=sys.stderr)
            for b in bad[:20]:
                print("  " + b, file=sys.stderr)
            return 1
        print("symbols: %d object files of the kit, and no graded function is defined outside "
              "the learner's stubs." % count, flush=True)
    print("wrote the learner kit to %s (%d files): labs, common, docs, public tests, README.md "
          "and the set-up; no solutions, hidden tests or goldens." % (args.dest, len(files)),
          flush=True)
    refs = reference_problems(files)
    if refs:
        print("lab: warning: %d reference(s) in the kit name a path it does not have:"
              % len(refs), file=sys.stderr)
        for r in refs[:20]:
            print("  " + r, file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- stub hints

# A stub's suggested headers: comment lines "// #include <x>" or '// #include "x"'.
_HINT_INCLUDE_RE = re.compile(r'^//\s*(#include\s*[<"][^>"]+[>"])', re.M)


def hint_include_problems(labs, root=ROOT, compiler="g++"):
    """["lab N: ..."] for each stub whose suggested includes, all uncommented
    at once, do not compile (g++ -fsyntax-only, as the kit builds: C++17, the
    repository's root on the include path). A learner who takes every hint
    must not get errors from inside a library's headers."""
    out = []
    for lab in labs:
        with open(os.path.join(root, lab.learner_file), errors="replace") as f:
            source = f.read()
        if not _HINT_INCLUDE_RE.search(source):
            continue
        text = _HINT_INCLUDE_RE.sub(r"\1", source)
        p = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", "-I" + root, "-x", "c++",
                            "-"], input=text, capture_output=True, text=True, errors="replace")
        errors = [l for l in p.stderr.splitlines() if ": error:" in l]
        if p.returncode != 0:
            out.append("lab %d: %s with its suggested includes uncommented does not compile "
                       "(%d errors; the first: %s)" % (lab.number, lab.learner_file, len(errors),
                                                       (errors or ["?"])[0][:200]))
    return out


# --------------------------------------------------------------------------- ./lab test

def _processes_under(path):
    """{pid: command line} of the processes whose command line or working
    directory is under `path` (a temporary directory of the self-test)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            try:
                cwd = os.readlink("/proc/%s/cwd" % entry)
            except OSError:
                cwd = ""
        except OSError:
            continue
        if cmd and (path in cmd or cwd == path or cwd.startswith(path + "/")):
            out[int(entry)] = cmd
    return out


def _wait_gone(path, seconds=15):
    """The processes still under `path` after waiting up to `seconds` for them to end."""
    deadline = time.time() + seconds
    while True:
        left = _processes_under(path)
        if not left or time.time() > deadline:
            return left
        time.sleep(0.5)


def _kill_all(procs):
    for pid in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# The statuses of Bazel's test summary that the kit check judges.
_KIT_STATUSES = ("PASSED", "FAILED TO BUILD", "FAILED", "NO STATUS", "TIMEOUT")


# The kit check's classic mistake: lab 2's scale by 1/sqrt(d_model), when the
# second lab has it, else that lab's first numeric mutant.
_PREFERRED_MUTANT = "dmodel_scale"


def selftest_checks(labs, make_check):
    """The kit's part of ./lab test: export a kit to a temporary directory and
    use it as a learner would, with its own Bazel output base there (and a
    disk cache under the grader's work directory, so that a second run does
    not compile everything again). Every Bazel server and process started
    under that directory is gone at the end."""
    import grade
    import learner
    import mutants
    t0 = time.time()
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="mha-kit-"))
    kit_dir = os.path.join(tmp, "kit")
    ob = os.path.join(tmp, "output_base")
    disk_cache = os.path.join(grade.work_root(), "kit-disk-cache")
    env = dict(os.environ, MHA_BAZEL_OUTPUT_BASE=ob, MHA_SETUP_FLAGS="")
    env.pop("MHA_BAZEL_STARTUP", None)
    bazel = ["bazel", "--output_base=" + ob]
    checks = []

    def new(name):
        c = make_check(name)
        checks.append(c)
        return c

    def lab_cmd(args, timeout=300, env_=None):
        p = subprocess.run([os.path.join(kit_dir, "lab")] + args, cwd=kit_dir,
                           env=env_ or env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    leftovers = make_check("no Bazel server or other process is left running by the kit's "
                           "./lab commands (each one starts its own server and must end it)")

    def no_leftovers(after):
        left = _wait_gone(tmp)
        if left:
            leftovers.fail("after %s: %s" % (after, "; ".join(
                "%d %s" % (pid, cmd[:120]) for pid, cmd in sorted(left.items()))))
            _kill_all(left)

    try:
        c = new("every stub's suggested includes compile together (all uncommented at once)")
        for problem in hint_include_problems(labs):
            c.fail(problem)

        c = new("export-kit writes the learner's kit; it leaks no solution, hidden "
                "test, golden, rubric or instructors' document")
        files = export(kit_dir, labs)
        for problem in leaks(kit_dir):
            c.fail(problem)

        c = new("no text in the kit names a repository path that the kit does not have "
                "(solutions/, tests/, tools/goldens, bench/, files outside the repository)")
        for problem in reference_problems(read_tree(kit_dir)):
            c.fail(problem)
        del files

        c = new("in the kit, bazel test //labs/... builds and every public test fails only "
                "with 'is not implemented yet'; bazel build //... and bazel query //labs/... "
                "work (the grader's *_remote targets stay out of the way)")
        os.makedirs(disk_cache, exist_ok=True)
        p = subprocess.run(bazel + ["test", "--keep_going", "--color=no", "--curses=no",
                                    "--test_output=summary", "--test_summary=short",
                                    "--disk_cache=" + disk_cache, "//labs/..."],
                           cwd=kit_dir, capture_output=True, text=True, errors="replace")
        out = p.stdout + p.stderr
        summary = {t: s for t, s in learner.parse_summary(out).items() if s in _KIT_STATUSES}
        if not summary:
            c.fail("bazel test //labs/... ran no test: " + " ".join(
                l for l in out.splitlines() if l.startswith("ERROR"))[:500])
        p = subprocess.run(bazel + ["info", "--color=no", "bazel-testlogs"], cwd=kit_dir,
                           capture_output=True, text=True, errors="replace")
        logs = (p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip()
                else os.path.join(ob, "execroot", "mha_labs", "bazel-out", "k8-fastbuild",
                                  "testlogs"))
        for target, status in sorted(summary.items()):
            pkg, name = target[2:].split(":", 1)
            if status in ("FAILED TO BUILD", "NO STATUS"):
                c.fail("%s: %s" % (target, status.lower()))
                continue
            lab = next((l for l in labs if pkg == "labs/" + l.dir), None)
            public = lab is not None and name == lab.target + "_public_test"
            cases = learner.parse_test_xml(
                learner._read(os.path.join(logs, pkg, name, "test.xml")) or "", keep_skipped=True)
            if public:
                if not cases:
                    c.fail("%s: no test results" % target)
                for case, failure in cases:
                    if failure is None:
                        c.fail("%s passes on the stub" % case)
                    elif "is not implemented yet" not in failure:
                        c.fail("%s fails with something else: %s"
                               % (case, " ".join(failure.split())[:200]))
            elif status != "PASSED":
                try:
                    with open(os.path.join(logs, pkg, name, "test.log"),
                              errors="replace") as f:
                        log = f.read()
                except OSError:
                    log = ""
                if "is not implemented yet" not in log:
                    c.fail("%s fails on the stubs, not saying 'is not implemented yet'" % target)
        for args in (["build", "--disk_cache=" + disk_cache, "//..."], ["query", "//labs/..."]):
            p = subprocess.run(bazel + args, cwd=kit_dir, capture_output=True, text=True,
                               errors="replace")
            if p.returncode != 0:
                c.fail("bazel %s fails in the kit: %s" % (" ".join(args[:1] + args[-1:]), " ".join(
                    l for l in p.stderr.splitlines() if l.startswith("ERROR"))[:400]))
        # The kit holds no answer, by symbols: on the objects just built, then
        # with lab 1's stub planted in common/ (which must be refused).
        import kitsymbols
        c = new("by symbols, no object file of the built kit defines a graded function "
                "(one its lab's header declares) except that lab's stub; a stub copied into "
                "common/ is refused")
        p = subprocess.run(bazel + ["info", "--color=no", "bazel-bin"], cwd=kit_dir,
                           capture_output=True, text=True, errors="replace")
        bin_dir = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() \
            else ""
        bad, count = kitsymbols.check_built(bin_dir, labs, kit_dir)
        for problem in bad:
            c.fail(problem)
        c.name += " (%d object files)" % count
        planted = _plant_answer(kit_dir, labs[0])
        try:
            bad, _ = kitsymbols.scan(kit_dir, labs, bazel)
            if not any(b.startswith("common/_objs/planted_answer/") for b in bad):
                c.fail("lab %d's stub compiled in common/ (%s) was not refused: %s"
                       % (labs[0].number, planted, "; ".join(bad)[:300] or "no problem found"))
        finally:
            _unplant_answer(kit_dir)
        subprocess.run(bazel + ["shutdown"], cwd=kit_dir, capture_output=True)
        no_leftovers("bazel test //labs/... in the kit")

        # A classic mistake, dropped into the kit as the learner's file.
        lab2 = labs[1]
        numeric = [m for m in mutants.load(labs, only=lab2) if m.kind == "numeric"]
        mutant = next((m for m in numeric if m.name == _PREFERRED_MUTANT),
                      numeric[0] if numeric else None)
        name = mutant.name if mutant else "(none)"
        c = new("a classic mistake in the kit (mutant %s/%s) fails a public test whose message "
                "names it, and ./lab status shows that message" % (lab2.nn, name))
        lab1 = labs[0]
        if mutant is None or mutant.source is None:
            c.fail("the mutant %s/%s is missing or does not apply: %s"
                   % (lab2.nn, name, getattr(mutant, "error", "")))
        else:
            with open(os.path.join(kit_dir, lab2.learner_file), "wb") as f:
                f.write(mutant.source)
            with open(os.path.join(ROOT, lab1.solution_file), "rb") as f:
                solution1 = f.read()
            with open(os.path.join(kit_dir, lab1.learner_file), "wb") as f:
                f.write(solution1)
            p = subprocess.run(bazel + ["test", "--color=no", "--test_output=errors",
                                        lab2.public_tests],
                               cwd=kit_dir, capture_output=True, text=True, errors="replace")
            if mutant.expect not in p.stdout + p.stderr:
                c.fail("bazel test %s does not say %r" % (lab2.public_tests, mutant.expect))
            subprocess.run(bazel + ["shutdown"], cwd=kit_dir, capture_output=True)
            no_leftovers("bazel test %s" % lab2.public_tests)

        # Every command ./lab help lists, as a learner runs it.
        rc, out, err = lab_cmd(["help"], timeout=30)
        listed = re.findall(r"^\s+\./lab (\w[\w-]*)", out, re.M)
        c = new("./lab help in the kit lists only commands that work there (%s), and ./lab "
                "says nothing about set-up when everything is installed" % ", ".join(listed))
        if rc != 0 or not listed:
            c.fail("./lab help: exit %d, %s" % (rc, (out + err).strip()[:200]))
        if "setup" in (out + err).lower():
            c.fail("./lab help printed: " + (out + err).strip()[:200])
        expected = {"status", "watch", "hint", "grade", "help"}
        if set(listed) != expected:
            c.fail("listed %s, expected %s" % (sorted(listed), sorted(expected)))

        def judge(check, what, rc, out, err, want_rc, words=()):
            text = out + err
            if rc != want_rc:
                check.fail("%s: exit %s, expected %d: %s" % (what, rc, want_rc,
                                                              text.strip()[-300:]))
            if "Traceback (most recent call last)" in text:
                check.fail("%s: a Python traceback: %s" % (what, text.strip()[-300:]))
            if "setup:" in text:
                check.fail("%s: talks about set-up: %s" % (what, text.strip()[:200]))
            flat = " ".join(text.split())          # words a line break cut in two
            for w in words:
                if w not in flat:
                    check.fail("%s: does not say %r: %s" % (what, w, text.strip()[:300]))

        for name in listed:
            c = new("./lab %s in the kit exits with a clear message and status" % name)
            t = time.time()
            if name == "help":
                rc, out, err = lab_cmd([], timeout=30)
                judge(c, "./lab", rc, out, err, 0, ["./lab status"])
            elif name == "hint":
                rc, out, err = lab_cmd(["hint", "1"], timeout=30)
                judge(c, "./lab hint 1", rc, out, err, 0, ["Hint 1 of"])
                rc, out, err = lab_cmd(["hint", "99"], timeout=30)
                judge(c, "./lab hint 99", rc, out, err, 2, ["there is no lab '99'"])
                rc, out, err = lab_cmd(["hint"], timeout=30)
                judge(c, "./lab hint", rc, out, err, 2)
            elif name == "status":
                rc, out, err = lab_cmd(["status"])
                words = ["lab %d" % l.number for l in labs] + ["not started", "passing", "next:"]
                if mutant is not None and mutant.source is not None:
                    words.append(mutant.expect)
                judge(c, "./lab status", rc, out, err, 0, words)
                if not re.search(r"^lab 1 .*passing", out, re.M):
                    c.fail("./lab status does not say lab 1 (the solution) passes: " + out[:300])
            elif name == "grade":
                rc, out, err = lab_cmd(["grade"])
                judge(c, "./lab grade", rc, out, err, 0,
                      ["Provisional", "hidden tests decide the grade"])
                rows = re.findall(r"^lab (\d+) .* (\d+)/(\d+)\b", out, re.M)
                if sorted(int(r[0]) for r in rows) != [l.number for l in labs]:
                    c.fail("./lab grade: not one line per lab: " + out[:400])
                rc, out, err = lab_cmd(["grade", "somewhere"], timeout=30)
                judge(c, "./lab grade somewhere", rc, out, err, 2)
            elif name == "watch":
                rc, out, err = lab_cmd(["watch", "99"], timeout=30)
                judge(c, "./lab watch 99", rc, out, err, 2, ["there is no lab '99'"])
                _check_watch(c, kit_dir, env, lab1, judge)
                no_leftovers("./lab watch 1 and Ctrl-C")
                _check_watch_without_inotify(c, kit_dir, env, tmp, judge)
            c.name += " (%.0f s)" % (time.time() - t)
            no_leftovers("./lab " + name)
    except Exception as e:   # a broken check is a failed check
        c = make_check("the kit self-test ran to the end")
        c.fail("%s: %s" % (type(e).__name__, e))
        checks.append(c)
    finally:
        subprocess.run(bazel + ["shutdown"], cwd=kit_dir if os.path.isdir(kit_dir) else tmp,
                       capture_output=True)
        no_leftovers("the kit self-test")
        subprocess.run(["chmod", "-R", "u+w", tmp], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    checks.append(leftovers)
    if checks:
        checks[0].name += " (the whole kit self-test took %.0f s)" % (time.time() - t0)
    return checks


_PLANTED = "common/planted_answer.cc"
_PLANTED_BUILD = """
# The kit self-test's planted answer (removed again): lab %d's stub, compiled
# outside labs/, must fail the symbol check.
cc_library(
    name = "planted_answer",
    srcs = ["planted_answer.cc"],
    deps = ["//labs/%s:%s_header"],
)
"""


def _plant_answer(kit_dir, lab):
    """Copies the lab's stub into the kit's common/ as a library of its own:
    every graded function of the lab, defined outside the learner's file."""
    shutil.copyfile(os.path.join(kit_dir, lab.learner_file), os.path.join(kit_dir, _PLANTED))
    build = os.path.join(kit_dir, "common", "BUILD")
    with open(build) as f:
        text = f.read()
    with open(build + ".before-planting", "w") as f:
        f.write(text)
    with open(build, "a") as f:
        f.write(_PLANTED_BUILD % (lab.number, lab.dir, lab.target))
    return _PLANTED


def _unplant_answer(kit_dir):
    build = os.path.join(kit_dir, "common", "BUILD")
    if os.path.exists(build + ".before-planting"):
        os.replace(build + ".before-planting", build)
    if os.path.exists(os.path.join(kit_dir, _PLANTED)):
        os.remove(os.path.join(kit_dir, _PLANTED))


def _check_watch(c, kit_dir, env, lab, judge):
    """./lab watch N: runs the tests at once, runs them again when the file is
    saved, and stops with exit 0 on Ctrl-C (SIGINT to its process group, as a
    terminal sends it)."""
    log_path = os.path.join(os.path.dirname(kit_dir), "watch.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([os.path.join(kit_dir, "lab"), "watch", str(lab.number)],
                                cwd=kit_dir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def text():
        with open(log_path, errors="replace") as f:
            return f.read()

    def wait_for(count, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline and proc.poll() is None:
            if text().count("to run again") + text().count("passes its public tests") >= count:
                return True
            time.sleep(0.5)
        return False

    try:
        if not wait_for(1, 240):
            c.fail("./lab watch %d: no test run reported within 240 s: %s"
                   % (lab.number, text()[-300:]))
        else:
            path = os.path.join(kit_dir, lab.learner_file)
            with open(path, "ab") as f:
                f.write(b"\n")
            if not wait_for(2, 120):
                c.fail("./lab watch %d: saving the file did not run the tests again: %s"
                       % (lab.number, text()[-300:]))
        os.killpg(proc.pid, signal.SIGINT)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        judge(c, "./lab watch %d, then Ctrl-C" % lab.number, rc, text(), "", 0,
              ["watching", "watch: stopped"])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _check_watch_without_inotify(c, kit_dir, env, tmp, judge):
    """./lab watch where inotifywait is missing: a clear message, exit 1."""
    bin_dir = os.path.join(tmp, "bin-without-inotify")
    os.makedirs(bin_dir, exist_ok=True)
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if not os.path.isdir(d):
            continue
        for fn in os.listdir(d):
            target = os.path.join(bin_dir, fn)
            if fn.startswith("inotify") or os.path.lexists(target):
                continue
            os.symlink(os.path.join(d, fn), target)
    env2 = dict(env, PATH=bin_dir)
    p = subprocess.run([os.path.join(kit_dir, "lab"), "watch", "1"], cwd=kit_dir, env=env2,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    judge(c, "./lab watch 1 without inotifywait", p.returncode, p.stdout, p.stderr, 1,
          ["inotifywait is not installed"])
