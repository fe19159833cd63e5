"""The trusted half of grading: built once by Bazel, never from a learner's file.

For every registered lab, `bazel build -c opt --config=solutions` builds

  //tests/NN_name:<target>_test_remote          the hidden tests, calling the lab
  //labs/NN_name:<target>_public_test_remote    the public tests, likewise
  //tests/NN_name:learner_runtime_isolated      what a learner's object is linked with
  //tests/NN_name:learner_runtime_cumulative    (see common/lab.bzl)

The grader finds them by asking Bazel (`bazel query`, `bazel info`), never by
reading BUILD files, and copies what the learner's side needs (the headers,
the runtime archives, the shared libraries of a jail) into a staging
directory that the unprivileged build user may read. Everything else (the
test binaries with their goldens, the solutions) stays where only root reads.
"""
import hashlib
import json
import os
import shutil
import subprocess

from labs import ROOT

BAZEL_FLAGS = ["-c", "opt", "--config=solutions"]
# Compiler flags of a learner's file: Bazel's -c opt, C++17, and warnings that
# catch the classic C++ slips. No LTO: link-time code generation would run
# code the learner chose inside the linker (objcheck.py rejects LTO objects too).
CXXFLAGS = ["-std=c++17", "-O2", "-DNDEBUG", "-fPIC", "-g0", "-Wall", "-Wextra", "-Wshadow",
            "-fno-lto", "-fdiagnostics-color=never", "-fno-diagnostics-show-caret"]
LDFLAGS = ["-fno-use-linker-plugin", "-fno-lto", "-pthread"]
# Headers nearly every lab file includes, precompiled once per grading run:
# parsing xtensor is most of a learner file's compile time (a precompiled
# header halves it; not xtensor-blas, whose declarations clash with
# <cblas.h>, which some labs use). Included first with -include, so a file that forgets one
# of these still compiles here; in the learner's own Bazel build it would not.
PCH_HEADERS = ["cmath", "optional", "stdexcept", "string", "vector", "xtensor/xtensor.hpp",
               "xtensor/xarray.hpp", "xtensor/xview.hpp", "xtensor/xmath.hpp",
               "xtensor/xmanipulation.hpp", "common/core/tensor.h"]


class BuildError(RuntimeError):
    pass


def bazel_command():
    """bazel, with the startup options in $MHA_BAZEL_STARTUP (e.g. an output base
    of its own, for a grading run beside another build of the same checkout)."""
    return ["bazel"] + os.environ.get("MHA_BAZEL_STARTUP", "").split()


def bazel(args, capture=True, timeout=3600):
    cmd = bazel_command() + args
    p = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=capture,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        tail = "\n".join(((p.stdout or "") + (p.stderr or "")).splitlines()[-30:])
        raise BuildError("`%s` failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, tail))
    return p.stdout


class LabArtefacts:
    def __init__(self, lab, bin_dir):
        self.lab = lab
        pkg = os.path.join(bin_dir, "tests", lab.dir)
        self.hidden = os.path.join(pkg, lab.target + "_test_remote")
        self.public = os.path.join(bin_dir, "labs", lab.dir, lab.target + "_public_test_remote")
        self.manifests = {m: os.path.join(pkg, "learner_runtime_%s.manifest" % m)
                          for m in ("isolated", "cumulative")}
        self.runtime = {}   # mode: [(kind, value)], the staged runtime (Suite._stage)
        self.hidden_tests = []
        self.public_tests = []

    def binary(self, kind):
        return self.hidden if kind == "hidden" else self.public

    def runfiles(self, kind):
        """The working directory of a test binary: its runfiles workspace root."""
        return self.binary(kind) + ".runfiles/mha_labs"

    def tests(self, kind):
        return self.hidden_tests if kind == "hidden" else self.public_tests


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
    """Builds the trusted artefacts and stages the public part in `stage`."""

    def __init__(self, labs, stage, log):
        self.labs = labs
        self.stage = stage
        self.log = log
        self.labs_by_number = {lab.number: lab for lab in labs}
        self.artefacts = {}
        self.include_root = os.path.join(stage, "include")
        self.pch = None   # the -include argument, when the header precompiled
        self.runtime_root = os.path.join(stage, "runtime")
        self.fingerprint = ""

    def build(self):
        targets = []
        for lab in self.labs:
            targets += ["//tests/%s:%s_test_remote" % (lab.dir, lab.target),
                        "//labs/%s:%s_public_test_remote" % (lab.dir, lab.target),
                        "//tests/%s:learner_runtime_isolated" % lab.dir,
                        "//tests/%s:learner_runtime_cumulative" % lab.dir]
        self.log("grade: building the hidden tests and the grading runtime (bazel build "
                 "-c opt --config=solutions, %d targets)" % len(targets))
        bazel(["build"] + BAZEL_FLAGS + ["--"] + targets)
        bin_dir = bazel(["info"] + BAZEL_FLAGS + ["bazel-bin"]).strip()
        exec_root = bazel(["info"] + BAZEL_FLAGS + ["execution_root"]).strip()
        for lab in self.labs:
            a = LabArtefacts(lab, bin_dir)
            for path in [a.hidden, a.public] + list(a.manifests.values()):
                if not os.path.exists(path):
                    raise BuildError("Bazel built no %s" % path)
            a.hidden_tests = _list_tests(a.hidden)
            a.public_tests = _list_tests(a.public)
            self.artefacts[lab.number] = a
        self._stage(exec_root)

    def _stage(self, exec_root):
        """Copies headers and runtime archives where the build user may read them."""
        for d in (self.include_root, self.runtime_root):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        digest = hashlib.sha256()
        for top in ("labs", "common"):
            for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for fn in sorted(filenames):
                    if fn.endswith((".h", ".inc")):
                        src = os.path.join(dirpath, fn)
                        rel = os.path.relpath(src, ROOT)
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
        # The grader's own code: a fix in it must not meet stale cached verdicts.
        here = os.path.dirname(os.path.abspath(__file__))
        for fn in sorted(os.listdir(here)):
            if fn.endswith(".py"):
                with open(os.path.join(here, fn), "rb") as f:
                    digest.update(fn.encode() + f.read())
        digest.update(subprocess.run(["g++", "--version"], capture_output=True).stdout)
        self.fingerprint = digest.hexdigest()

    def _precompile(self):
        header = os.path.join(self.include_root, "mha_grading_pch.h")
        with open(header, "w") as f:
            f.write("// Precompiled for grading (tools/lab/suite.py).\n")
            for h in PCH_HEADERS:
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
