"""The lab table (labs/labs.json) and paths shared by every subcommand."""
import functools
import hashlib
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sha256(data):
    """The hex sha256 of bytes (how labs/labs.json records a stub)."""
    return hashlib.sha256(data).hexdigest()


class Lab:
    def __init__(self, entry, root=ROOT):
        self.root = root
        self.number = entry["number"]
        self.dir = entry["dir"]
        self.target = entry["target"]
        self.title = entry["title"]
        self.stub_sha256 = entry.get("stub_sha256", "")
        # The earlier-lab functions this lab's file may call (tools/lab/surface.py);
        # None when the line has no "calls" (the consistency check says so).
        self.calls = entry.get("calls")

    def is_stub(self, data):
        """True when `data` (bytes) is the lab's untouched stub: its sha256 is
        the registry's stub_sha256. False when the registry records none."""
        return bool(self.stub_sha256) and sha256(data) == self.stub_sha256

    @functools.cached_property
    def hints(self):
        """The lab's hints, gentle first: the paragraphs of labs/NN_name/hints.txt."""
        try:
            with open(os.path.join(self.root, "labs", self.dir, "hints.txt")) as f:
                text = f.read()
        except OSError:
            return []
        return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]

    # ------------------------------------------------------------------ names
    # The only place that spells a lab's paths and Bazel labels (common/lab.bzl
    # derives the same names from the registry on the Bazel side).

    @property
    def nn(self):
        return "%02d" % self.number

    @property
    def learner_file(self):
        """Relative path of the one file the learner edits."""
        return "labs/%s/%s.cc" % (self.dir, self.target)

    @property
    def header_file(self):
        return "labs/%s/%s.h" % (self.dir, self.target)

    @property
    def public_test_file(self):
        return "labs/%s/%s_public_test.cc" % (self.dir, self.target)

    @property
    def test_util_file(self):
        return "labs/%s/%s_test_util.h" % (self.dir, self.target)

    @property
    def hints_file(self):
        return "labs/%s/hints.txt" % self.dir

    @property
    def lesson_file(self):
        return "docs/%s.md" % self.dir

    @property
    def solution_file(self):
        return "solutions/%s/%s.cc" % (self.dir, self.target)

    @property
    def hidden_test_file(self):
        return "tests/%s/%s_test.cc" % (self.dir, self.target)

    @property
    def remote_file(self):
        return "tests/%s/remote.cc" % self.dir

    @property
    def goldens_generator(self):
        return "tests/%s/gen_goldens.py" % self.dir

    @property
    def mutants_dir(self):
        return "tests/%s/mutants" % self.dir

    @property
    def build_files(self):
        """The BUILD files of the lab's three mirrored folders: public, solution, hidden tests."""
        return ["labs/%s/BUILD" % self.dir, "solutions/%s/BUILD" % self.dir,
                "tests/%s/BUILD" % self.dir]

    @property
    def package(self):
        """The lab's public Bazel package (its labels start with package + ":")."""
        return "//labs/%s" % self.dir

    @property
    def library(self):
        """The lab's library: the learner's file behind its header."""
        return "//labs/%s:%s" % (self.dir, self.target)

    @property
    def public_test(self):
        """The lab's main public test (the package may hold more: lab 8's
        configurator test, the programs' quick tests)."""
        return "//labs/%s:%s_public_test" % (self.dir, self.target)

    @property
    def public_tests(self):
        """Every public test of the lab: what `bazel test` runs for a learner."""
        return "//labs/%s/..." % self.dir

    @property
    def header_library(self):
        """The lab's header alone (what a library that only needs the declarations links)."""
        return "//labs/%s:%s_header" % (self.dir, self.target)

    @property
    def hidden_tests(self):
        """Every hidden test of the lab (the instructors' repository)."""
        return "//tests/%s/..." % self.dir

    @property
    def hidden_test(self):
        return "//tests/%s:%s_test" % (self.dir, self.target)

    @property
    def public_test_remote(self):
        """The public tests built against a client of the learner's process."""
        return self.public_test + "_remote"

    @property
    def hidden_test_remote(self):
        """The grading tests built against a client of the learner's process."""
        return self.hidden_test + "_remote"

    def learner_runtime(self, mode):
        """What a learner's object is linked with: mode "isolated" or "cumulative"."""
        if mode not in ("isolated", "cumulative"):
            raise ValueError("learner runtime mode %r: expected isolated or cumulative" % (mode,))
        return "//tests/%s:learner_runtime_%s" % (self.dir, mode)

    # ------------------------------------------------------------------ the stub

    def read_learner_file(self, root=None):
        """The learner file's bytes under root (default: the lab's root), or None
        when it is missing or unreadable."""
        try:
            with open(os.path.join(root or self.root, self.learner_file), "rb") as f:
                return f.read()
        except OSError:
            return None

    def file_is_stub(self, root=None):
        """True while the learner file under root is the untouched stub. A
        missing file is not the stub (the build will say it is missing)."""
        data = self.read_learner_file(root)
        return data is not None and self.is_stub(data)


def bin_path(label):
    """Where Bazel puts a target, relative to bazel-bin: the package's folder
    joined with the target's name."""
    if not label.startswith("//") or ":" not in label:
        raise ValueError("%r is not a //package:target label" % (label,))
    package, name = label[2:].split(":", 1)
    return os.path.join(package, name)


def objects_path(label):
    """Where Bazel puts the object files of a C++ target, relative to bazel-bin:
    the package's folder, then _objs/ and the target's name."""
    package, name = os.path.split(bin_path(label))
    return os.path.join(package, "_objs", name)


def load_labs(root=ROOT):
    with open(os.path.join(root, "labs", "labs.json")) as f:
        return [Lab(e, root) for e in json.load(f)["labs"]]


def find_lab(labs, key):
    """A lab by number ("3", "03") or directory name; None if unknown."""
    for lab in labs:
        if str(key) in (str(lab.number), lab.nn, lab.dir):
            return lab
    return None
