"""The trusted half of grading: built once by Bazel, never from a learner's file.

For every registered lab, `bazel build -c opt --config=solutions` builds the
targets labs.Lab names (see common/lab.bzl):

  lab.hidden_test_remote             the hidden tests, calling the lab
  lab.public_test_remote             the public tests, likewise
  lab.learner_runtime("isolated")    what a learner's object is linked with
  lab.learner_runtime("cumulative")
  lab.reference_server               a job's reference process (isolated mode):
                                     answers the learner's calls back

The grader finds them by asking Bazel (`bazel query`, `bazel info`), never by
reading BUILD files, and copies what the learner's side needs (the headers,
the runtime archives, the shared libraries of a jail) into a staging
directory that the unprivileged build user may read. Everything else (the
test binaries with their goldens, the solutions) stays where only root reads.

    suite = Suite(labs, workspace.stage_dir, log)
    suite.build()                        # Bazel, then load(): artefacts, staging
    suite.stage_libraries(scratch)       # the shared libraries of a learner's jail
"""
import hashlib
import json
import os
import shutil
import subprocess

from grader import learner_jail
from labs import ROOT, bin_path
from progress import BAZEL_UI_FLAGS, run_bazel, ticking

MODES = ("isolated", "cumulative")
# The grader's own code (every package of tools/lab): part of the fingerprint.
TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --config=checked (.bazelrc): bounds checks on in every trusted binary.
BAZEL_FLAGS = ["-c", "opt", "--config=solutions", "--config=checked"]
# Compiler flags of a learner's file: Bazel's -c opt, C++17, and warnings that
# catch the classic C++ slips. No LTO: link-time code generation would run
# code the learner chose inside the linker (objcheck.py rejects LTO objects too).
CXXFLAGS = ["-std=c++17", "-O2", "-DNDEBUG", "-fPIC", "-g0", "-Wall", "-Wextra", "-Wshadow",
            "-fno-lto", "-fdiagnostics-color=never", "-fno-diagnostics-show-caret"]
# -s: no symbol table in the learner's executable (nothing to look its linked labs up in).
LDFLAGS = ["-fno-use-linker-plugin", "-fno-lto", "-pthread", "-s"]
# Headers nearly every lab file includes, precompiled once per grading run:
# parsing xtensor is most of a learner file's compile time (a precompiled
# header halves it; not xtensor-blas, whose declarations clash with
# <cblas.h>, which some labs use). Included first with -include, so a file that forgets one
# of these still compiles here; in the learner's own Bazel build it would not.
PCH_HEADERS = ["cmath", "optional", "stdexcept", "string", "vector", "xtensor/xtensor.hpp",
               "xtensor/xarray.hpp", "xtensor/xview.hpp", "xtensor/xmath.hpp",
               "xtensor/xmanipulation.hpp", "common/tensor.h"]


class BuildError(RuntimeError):
    pass


def bazel_command():
    """bazel, with the startup options in $MHA_BAZEL_STARTUP (e.g. an output base
    of its own, for a grading run beside another build of the same checkout)."""
    return ["bazel"] + os.environ.get("MHA_BAZEL_STARTUP", "").split()


def bazel(args, capture=True, timeout=3600, what=None):
    """Bazel's stdout; with `what`, its progress is shown on stderr while it
    works (tools/lab/progress.py) and its output kept for the error."""
    cmd = bazel_command() + args
    if what:
        cmd = bazel_command() + args[:1] + BAZEL_UI_FLAGS + args[1:]
        rc, out = run_bazel(cmd, what, ROOT, timeout=timeout)
        if rc != 0:
            tail = "\n".join(out.splitlines()[-30:])
            raise BuildError("`%s` failed (exit %d):\n%s" % (" ".join(cmd), rc, tail))
        return out
    p = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=capture,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        tail = "\n".join(((p.stdout or "") + (p.stderr or "")).splitlines()[-30:])
        raise BuildError("`%s` failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, tail))
    return p.stdout


def bazel_output_paths():
    """What learner code must not read besides the checkout: Bazel's outputs
    (the folder above its output base), when Bazel answers."""
    try:
        base = subprocess.run(bazel_command() + ["info", "output_base"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [os.path.dirname(base)] if base else []


class LabArtefacts:
    """One lab's trusted binaries (under Bazel's bazel-bin) and their test names."""

    def __init__(self, lab, bin_dir):
        self.lab = lab
        self.hidden = os.path.join(bin_dir, bin_path(lab.hidden_test_remote))
        self.public = os.path.join(bin_dir, bin_path(lab.public_test_remote))
        self.reference = os.path.join(bin_dir, bin_path(lab.reference_server))
        self.manifests = {m: os.path.join(bin_dir, bin_path(lab.learner_runtime(m))) + ".manifest"
                          for m in MODES}
        self.runtime = {}   # mode: [(kind, value)], the staged runtime (Suite._stage)
        self.hidden_test_names = []    # in run order, from the binaries themselves
        self.public_test_names = []

    def binary(self, kind):
        return self.hidden if kind == "hidden" else self.public

    def runfiles(self, kind):
        """The working directory of a test binary: its runfiles workspace root."""
        return self.binary(kind) + ".runfiles/mha_labs"

    def test_names(self, kind):
        return self.hidden_test_names if kind == "hidden" else self.public_test_names


# What the suite's hash covers (source_hash): everything a Gradescope bundle
# carries that decides a grade (grader/instructor.py's bundle_files), but
# the learner files (a checkout's own work; the registry holds the stubs'
# hashes), the lessons and hints, and the grader's own unit tests.
SOURCE_TOP = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore"]
SOURCE_DIRS = ["common", "labs", "solutions", "tests", "third_party", os.path.join("tools", "lab")]
_NOT_SOURCE_DIRS = {"mutants", "hostile", "__pycache__", os.path.join("tools", "lab", "tests")}


def source_hash(root=ROOT, labs=None):
    """The suite's hash: 16 hexadecimal digits of the sha256 of every file
    that decides a grade (SOURCE_TOP, SOURCE_DIRS) and of the compiler's
    version, the same on every machine that holds the same suite. Reports
    name it beside the course key's fingerprint."""
    from labs import load_labs
    learner = {lab.learner_file for lab in (labs or load_labs())}
    digest = hashlib.sha256()
    paths = [os.path.join(root, p) for p in SOURCE_TOP]
    for d in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            rel_dir = os.path.relpath(dirpath, root)
            dirnames[:] = sorted(x for x in dirnames if not x.startswith((".", "bazel-")) and
                                 x not in _NOT_SOURCE_DIRS and
                                 os.path.join(rel_dir, x) not in _NOT_SOURCE_DIRS)
            for fn in sorted(filenames):
                rel = os.path.join(rel_dir, fn)
                if (rel in learner or fn.endswith((".md", ".pyc")) or fn == "quiz.json" or
                        fn.startswith("hints")):
                    continue
                paths.append(os.path.join(root, rel))
    for path in paths:
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                digest.update(os.path.relpath(path, root).encode() + b"\0" + f.read() + b"\0")
    digest.update(subprocess.run(["g++", "--version"], capture_output=True).stdout)
    return digest.hexdigest()[:16]


def code_digest(tools):
    """The sha256 of the grader's own code (every .py under `tools`, its tests
    apart): a fix in it must not meet stale cached verdicts."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(tools):     # top-down: the pruning holds
        dirnames[:] = sorted(d for d in dirnames if d not in ("tests", "__pycache__"))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                path = os.path.join(dirpath, fn)
                with open(path, "rb") as f:
                    digest.update(os.path.relpath(path, tools).encode() + f.read())
    return digest.digest()


def _list_tests(binary):
    """Test names in run order, from the trusted binary itself."""
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True,
                         timeout=60, env={"PATH": "/usr/bin:/bin"}).stdout
    names, suite = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip().rstrip(".")
        else:
            names.append("%s.%s" % (suite, line.split("#")[0].strip()))
    return names


class Suite:
    """Builds the trusted artefacts and stages the public part in `stage`.
    `root` holds the headers to stage (labs/, common/), `tools` the grader's
    code, `pch_headers` what the precompiled header includes."""

    def __init__(self, labs, stage, log, root=ROOT, tools=TOOLS, pch_headers=PCH_HEADERS):
        self.labs = labs
        self.stage = stage
        self.log = log
        self.root = root
        self.tools = tools
        self.pch_headers = list(pch_headers)
        self.artefacts = {}       # lab number: LabArtefacts
        self.include_root = os.path.join(stage, "include")
        self.pch = None   # the -include argument, when the header precompiled
        self.runtime_root = os.path.join(stage, "runtime")
        self.libroot = None       # the shared libraries of a learner's jail (stage_libraries)
        self.fingerprint = ""
        self.bin_dir = self.exec_root = None   # where load() found the artefacts

    def targets(self):
        """The Bazel labels of every lab's trusted binaries and runtimes."""
        out = []
        for lab in self.labs:
            out += [lab.hidden_test_remote, lab.public_test_remote, lab.reference_server] + [
                lab.learner_runtime(m) for m in MODES]
        return out

    def build(self):
        targets = self.targets()
        self.log("grade: building the hidden tests and the grading runtime (bazel build "
                 "-c opt --config=solutions, %d targets)" % len(targets))
        bazel(["build"] + BAZEL_FLAGS + ["--"] + targets,
              what="grade: building the hidden tests (%d targets)" % len(targets))
        bin_dir = bazel(["info"] + BAZEL_FLAGS + ["bazel-bin"]).strip()
        exec_root = bazel(["info"] + BAZEL_FLAGS + ["execution_root"]).strip()
        with ticking("grade: staging the tests, headers and precompiled header"):
            self.load(bin_dir, exec_root)

    def load(self, bin_dir, exec_root):
        """Finds every lab's artefacts under `bin_dir`, lists their tests and
        stages what the build user reads (runtime archives from `exec_root`)."""
        self.bin_dir, self.exec_root = bin_dir, exec_root
        for lab in self.labs:
            a = LabArtefacts(lab, bin_dir)
            for path in [a.hidden, a.public, a.reference] + list(a.manifests.values()):
                if not os.path.exists(path):
                    raise BuildError("Bazel built no %s" % path)
            a.hidden_test_names = _list_tests(a.hidden)
            a.public_test_names = _list_tests(a.public)
            self.artefacts[lab.number] = a
        self._stage(exec_root)

    def freeze(self, dest):
        """Copies what load() reads into `dest` (bin/ and exec/, the same
        relative paths as under Bazel's bazel-bin and execution root), so that
        a machine without this Bazel output (a Slurm task on a compute node)
        can load(dest/bin, dest/exec) the very same binaries, goldens and
        runtime archives. The runfiles' symlinks are copied as files."""
        bin_out, exec_out = os.path.join(dest, "bin"), os.path.join(dest, "exec")

        def copy(src, dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.isdir(src):
                shutil.copytree(src, dst, symlinks=False, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
        for lab in self.labs:
            a = self.artefacts[lab.number]
            for path in [a.hidden, a.public, a.reference, a.hidden + ".runfiles",
                         a.public + ".runfiles"] + list(a.manifests.values()):
                copy(path, os.path.join(bin_out, os.path.relpath(path, self.bin_dir)))
                if path in a.manifests.values():
                    with open(path) as f:
                        for line in f:
                            kind, _, value = line.strip().partition(" ")
                            if kind in ("whole", "archive"):
                                copy(os.path.join(self.exec_root, value),
                                     os.path.join(exec_out, value))
        return bin_out, exec_out

    def _stage(self, exec_root):
        """Copies headers and runtime archives where the build user may read them."""
        for d in (self.include_root, self.runtime_root):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        digest = hashlib.sha256()
        for top in ("labs", "common"):
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, top)):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for fn in sorted(filenames):
                    if fn.endswith((".h", ".inc")):
                        src = os.path.join(dirpath, fn)
                        rel = os.path.relpath(src, self.root)
                        dst = os.path.join(self.include_root, rel)
                        os.makedirs(os.path.dirname(dst), exist_ok=True)
                        shutil.copyfile(src, dst)
                        with open(src, "rb") as f:
                            digest.update(rel.encode() + b"\0" + f.read())
        for lab in self.labs:
            a = self.artefacts[lab.number]
            for mode, manifest in a.manifests.items():
                entries = []
                with open(manifest) as f:
                    for line in f:
                        kind, _, value = line.strip().partition(" ")
                        if kind in ("whole", "archive"):
                            src = os.path.join(exec_root, value)
                            name = hashlib.sha256(value.encode()).hexdigest()[:16] + ".a"
                            dst = os.path.join(self.runtime_root, name)
                            if not os.path.exists(dst):
                                shutil.copyfile(src, dst)
                                with open(src, "rb") as g:
                                    digest.update(g.read())
                            entries.append((kind, dst))
                        elif kind == "flag":
                            entries.append((kind, value))
                a.runtime[mode] = entries
        self._precompile()
        for dirpath, dirnames, filenames in os.walk(self.stage):
            os.chmod(dirpath, 0o755)
            for fn in filenames:
                os.chmod(os.path.join(dirpath, fn), 0o644)
        digest.update(json.dumps(CXXFLAGS + LDFLAGS).encode())
        digest.update(code_digest(self.tools))
        digest.update(subprocess.run(["g++", "--version"], capture_output=True).stdout)
        self.fingerprint = digest.hexdigest()

    def stage_libraries(self, scratch):
        """Stages the shared libraries of a learner's process (found from a
        trivial program linked like one: C++, OpenBLAS) for its jail; `scratch`
        is a private folder to build that program in."""
        d = os.path.join(scratch, "libprobe")
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "probe.cc")
        with open(src, "w") as f:
            f.write("int main() { return 0; }\n")
        exe = os.path.join(d, "probe")
        subprocess.run(["g++", src, "-o", exe, "-Wl,--no-as-needed", "-lopenblas", "-pthread"],
                       check=True, capture_output=True)
        shutil.rmtree(os.path.join(self.stage, "libroot"), ignore_errors=True)
        # The reference processes run in the same kind of jail: their libraries too.
        refs = [a.reference for a in self.artefacts.values() if os.path.exists(a.reference)]
        self.libroot = learner_jail.prepare_libroot(self.stage, [exe] + refs)
        return self.libroot

    def _precompile(self):
        if not self.pch_headers:
            return
        header = os.path.join(self.include_root, "mha_grading_pch.h")
        with open(header, "w") as f:
            f.write("// Precompiled for grading (tools/lab/grader/suite.py).\n")
            for h in self.pch_headers:
                f.write('#include %s\n' % ('"%s"' % h if h.startswith("common/") else "<%s>" % h))
        p = subprocess.run(["g++"] + CXXFLAGS + ["-I", self.include_root, "-x", "c++-header",
                                                header, "-o", header + ".gch"],
                           capture_output=True, text=True)
        if p.returncode == 0:
            self.pch = header
        else:
            self.log("grade: no precompiled header (compiles will be slower): " +
                     (p.stderr.strip().splitlines() or ["?"])[-1])

    def compile_flags(self):
        """Flags of a learner file's compile, besides the file itself."""
        flags = list(CXXFLAGS) + ["-I", self.include_root]
        if self.pch:
            flags += ["-include", self.pch]
        return flags

    def link_inputs(self, lab, mode):
        """The linker arguments after the learner's objects: archives, then flags."""
        a = self.artefacts[lab.number]
        args, flags = [], []
        for kind, value in a.runtime[mode]:
            if kind == "whole":
                args += ["-Wl,--whole-archive", value, "-Wl,--no-whole-archive"]
            elif kind == "archive":
                args.append(value)
            else:
                flags.append(value)
        return args + flags
