"""./lab export-kit DIR: the learner's copy of the suite.

What goes in (an allow-list): the Bazel workspace files, ./lab and
tools/setup.sh, the learner's tools (tools/lab/main.py and every module its
learner path imports: kit_tools()), tools/plot/ (draw_chart.py: the
programs' charts), tools/reader/ (./lab read's script and style), common/,
labs/ (headers, BUILD files, public tests and their goldens, hints, and each
learner file as its stub), docs/ (the lessons, the tolerance policy, the
NumPy bridge, images), third_party/, po/cli/ (the terminal's catalogues,
which the public tests read to print their failures in the learner's
language), and a learner README.md.

What never does: solutions/, tests/ (hidden tests, goldens, mutants, hostile
submissions, the rubric), tools/goldens/ (the generators compute the hidden
goldens), the grader's own modules, the instructors' documents
(docs/INSTRUCTORS.md, docs/SCALING.md, docs/PERFORMANCE.md, docs/AUTHORING.md: grading,
caches, benchmarks of the reference solutions), .git and caches.

Three checks run on an exported kit: leaks() (nothing secret got in),
symbol_check() (built, no object file but a lab's stub defines a function of
that lab's header: tools/lab/checks/kitsymbols.py) and reference_problems()
(no text in the kit names a repository path the kit does not have:
tools/lab/course/kit_references.py). ./lab test's kit check, which uses an
exported kit as a learner would, is tools/lab/checks/kit_check.py.
"""
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

from checks import kitsymbols
from course import language_lines, translated_pages
from course.kit_references import reference_problems
from grader import course_key
import languages
from labs import ROOT, load_labs

# po/languages.json: the registry of languages ./lab and the public tests read
# (tools/lab/languages.py, common/testing/translation.h); po/BUILD gives it and
# po/cli/'s catalogues to the tests.
_TOP = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore", ".gitignore", "lab",
        languages.REGISTRY, "po/BUILD"]
_DIRS = ["common", "labs", "docs", "third_party", "tools/lab", "tools/plot", "tools/reader",
         ".devcontainer", "po/cli"]
_SKIP_FILES = {"docs/INSTRUCTORS.md", "docs/SCALING.md", "docs/PERFORMANCE.md",
               "docs/AUTHORING.md"} | {
               # The repository README's learner sections, translated: the kit has
               # its own README in each language (README.es.md, README.pt-BR.md, ...).
               "docs/%s/README.md" % lang.pages for lang in languages.load()}
_SKIP_DIRS = {"__pycache__"}
# ./lab runs this module; the kit ships it and what its learner path imports.
_ENTRY = "main.py"
_TOOLS = os.path.join("tools", "lab")

# The kit's README: tools/lab/course/kit_readme/README.md, a Markdown file po4a
# translates (README.es.md, README.pt-BR.md, ... next to it); kit_readme() adds
# one table row per lab.
README_DIR = os.path.join("tools", "lab", "course", "kit_readme")
# The kit's name of each README: {file in README_DIR: path in the kit}.
READMES = dict([("README.md", "README.md")] + [
    ("README.%s.md" % lang.pages,) * 2 for lang in languages.load()])


class StubError(RuntimeError):
    pass


def stub_bytes(lab, root=ROOT):
    """The untouched stub of a lab: the working tree's learner file when its
    sha256 is the registry's stub_sha256, else the one committed at git HEAD
    when that one is. Raises StubError when neither is (an instructor's
    checkout whose labs/ holds finished work must not ship it)."""
    data = lab.read_learner_file(root)
    if data is not None and (not lab.stub_sha256 or lab.is_stub(data)):
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


def _kit_branch(test):
    """For the test of an `if`: True if it is `is_kit()` (any module's), False
    if it is `not is_kit()`, None if it is something else."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if negated else test
    if isinstance(call, ast.Call):
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        if name == "is_kit":
            return not negated
    return None


def imported_names(source):
    """The modules a module's source imports when it runs in a kit: every
    import statement, except that of a module-level `if is_kit():` (or
    `if not is_kit():`) only the branch a kit takes counts. `from p import m`
    names p and p.m (m may be a module of package p)."""
    names = []

    def visit(statements):
        for node in statements:
            branch = _kit_branch(node.test) if isinstance(node, ast.If) else None
            if branch is not None:
                visit(node.body if branch else node.orelse)
                continue
            for n in ast.walk(node):
                if isinstance(n, ast.Import):
                    names.extend(a.name for a in n.names)
                elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
                    names.append(n.module)
                    names.extend(n.module + "." + a.name for a in n.names)

    visit(ast.parse(source).body)
    return names


def _module_file(name, tools):
    """The file under `tools` of a dotted module name, or None (the standard
    library, or a name imported from a module)."""
    base = os.path.join(*name.split("."))
    for rel in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(os.path.join(tools, rel)):
            return rel
    return None


def kit_tools(root=ROOT):
    """The files of tools/lab/ that the kit ships, relative to it: main.py and
    every module it imports on a kit's path, transitively, with the
    __init__.py of every package on the way."""
    tools = os.path.join(root, _TOOLS)
    found, todo = set(), [_ENTRY]
    while todo:
        rel = todo.pop()
        if rel in found:
            continue
        found.add(rel)
        with open(os.path.join(tools, rel)) as f:
            source = f.read()
        for name in imported_names(source):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                path = _module_file(".".join(parts[:i]), tools)
                if path is not None:
                    todo.append(path)
    return found


def kit_files(labs):
    """{relative path: bytes} of the learner's kit."""
    files = collect(_TOP, _DIRS, skip_files=_SKIP_FILES)
    if ".bazelrc" in files:
        files[".bazelrc"] = kit_bazelrc(files[".bazelrc"].decode()).encode()
    shipped = {os.path.join(_TOOLS, rel) for rel in kit_tools()}
    for rel in list(files):
        if rel.startswith(_TOOLS + "/") and rel not in shipped:
            del files[rel]
    readmes = {dest: os.path.join(ROOT, README_DIR, name) for name, dest in READMES.items()
               if os.path.isfile(os.path.join(ROOT, README_DIR, name))}
    for dest, path in readmes.items():
        with open(path, encoding="utf-8") as f:
            files[dest] = kit_readme(f.read(), labs, _readme_lang(dest), files,
                                     readmes).encode()
    files.update(compiled_catalogues())
    return files


# The terminal's translations: po/cli/<lang>.po (domain "lab") and the
# quizzes' po/quiz/<lang>.po (domain "quiz"), compiled where the learner's
# ./lab looks for them (tools/lab/learner/i18n.py).
def _catalogues(folder):
    return {code: "po/%s/%s.po" % (folder, code) for code in languages.codes()}


CATALOGUES = _catalogues("cli")
QUIZ_CATALOGUES = _catalogues("quiz")


def compiled_catalogues(root=ROOT):
    """{kit path of lab.mo or quiz.mo: bytes} of each catalogue, compiled with
    msgfmt (gettext, tools/setup.sh); none (with a warning: the kit's ./lab then
    speaks English) where msgfmt is missing."""
    out = {}
    if shutil.which("msgfmt") is None:
        print("lab: warning: msgfmt is missing (Debian's gettext, tools/setup.sh --dev): the "
              "kit's ./lab will speak only English", file=sys.stderr)
        return out
    for domain, catalogues in (("lab", CATALOGUES), ("quiz", QUIZ_CATALOGUES)):
        for lang, po in catalogues.items():
            if not os.path.isfile(os.path.join(root, po)):
                continue
            with tempfile.TemporaryDirectory(prefix="mha-mo-") as tmp:
                mo = os.path.join(tmp, domain + ".mo")
                subprocess.run(["msgfmt", "-o", mo, os.path.join(root, po)], check=True,
                               capture_output=True)
                with open(mo, "rb") as f:
                    out["tools/lab/locale/%s/LC_MESSAGES/%s.mo" % (lang, domain)] = f.read()
    return out


def _readme_lang(name):
    """The pages' language suffix of a README (README.es.md: "es"), or None."""
    m = re.match(r"README\.([\w-]+)\.md$", name)
    return m.group(1) if m else None


def kit_readme(text, labs, lang, files, readmes=()):
    """The README's text with one row per lab after its table's separator
    line: the lab, its learner file, and its lesson (the page in `lang`,
    docs/<lang>/NN_name.md, when the kit has it, titled as that page is);
    then a line per language whose README the kit has, in that language
    (course/language_lines.py; `readmes`: the kit's READMEs besides those in
    files)."""
    rows = []
    for lab in labs:
        lesson, title = lab.lesson_file, lab.title
        if lang:
            translated = "docs/%s/%s" % (lang, os.path.basename(lab.lesson_file))
            if translated in files:
                lesson = translated
                title = translated_pages.translated_title(
                    lab, files.get(lab.lesson_file, b"").decode(), files[translated].decode(),
                    lang)
        rows.append("| %d | `%s` | [%s](%s) |" % (lab.number, lab.learner_file, title, lesson))
    others = language_lines.kit_lines(set(files) | set(readmes))
    return translated_pages.insert_rows(text, rows + ([""] + "\n\n".join(others).split("\n")
                                                      if others else []))


_EXECUTABLE = {"lab", "tools/setup.sh"}


def write_tree(dest, files, executable=_EXECUTABLE):
    """Writes {relative path: bytes} under dest; the paths of `executable`
    and every .sh file executable. Shared by the kit and the Gradescope bundle."""
    for rel, data in files.items():
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        if rel in executable or rel.endswith(".sh"):
            os.chmod(p, 0o755)


def export(dest, labs=None):
    labs = labs or load_labs()
    if os.path.exists(dest) and os.listdir(dest):
        raise FileExistsError("%s exists and is not empty" % dest)
    files = kit_files(labs)
    write_tree(dest, files)
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
    # The course key (grader/course_key.py) never leaves the instructors' side.
    try:
        key = course_key.load(course_key.DEFAULT).secret.hex().encode()
    except course_key.CourseKeyError:
        key = b""
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
                data = f.read()
            h = hashlib.sha256(data).hexdigest()
            if fn == "course.key" or (key and key in data):
                problems.append("%s holds the course key" % rel)
            if h in secret:
                problems.append("%s is a copy of %s" % (rel, secret[h]))
    return problems


def symbol_check(kit_dir, labs):
    """kitsymbols.scan of an exported kit, in a temporary Bazel output base
    that is removed afterwards (no bazel-* links are left in the kit).
    Returns (problems, object files scanned)."""
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


