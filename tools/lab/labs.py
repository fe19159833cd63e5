"""The lab table (labs/labs.json) and paths shared by every subcommand."""
import functools
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sha256(data):
    """The hex sha256 of bytes (how labs/labs.json records a stub)."""
    return hashlib.sha256(data).hexdigest()


class _Named:
    """A read-only name of a Lab (a path or a Bazel label), spelled from a
    template of the lab's fields {dir} and {target}; `doc` says what it names."""

    def __init__(self, template, doc=""):
        self.template = template
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, lab, owner=None):
        if lab is None:
            return self
        return self.template.format(dir=lab.dir, target=lab.target)

    def __set__(self, lab, value):
        raise AttributeError("Lab.%s is derived from the registry; it cannot be set" % self.name)


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

    learner_file = _Named("labs/{dir}/{target}.cc",
                          "Relative path of the one file the learner edits.")
    header_file = _Named("labs/{dir}/{target}.h")
    public_test_file = _Named("labs/{dir}/{target}_public_test.cc")
    test_util_file = _Named("labs/{dir}/{target}_test_util.h")
    hints_file = _Named("labs/{dir}/hints.txt")
    lesson_file = _Named("docs/{dir}.md")
    solution_file = _Named("solutions/{dir}/{target}.cc")
    hidden_test_file = _Named("tests/{dir}/{target}_test.cc")
    remote_file = _Named("tests/{dir}/remote.cc")
    goldens_generator = _Named("tests/{dir}/gen_goldens.py")
    mutants_dir = _Named("tests/{dir}/mutants")

    @property
    def build_files(self):
        """The BUILD files of the lab's three mirrored folders: public, solution, hidden tests."""
        return [path.format(dir=self.dir)
                for path in ("labs/{dir}/BUILD", "solutions/{dir}/BUILD", "tests/{dir}/BUILD")]

    package = _Named("//labs/{dir}",
                     "The lab's public Bazel package (its labels start with package + \":\").")
    library = _Named("//labs/{dir}:{target}",
                     "The lab's library: the learner's file behind its header.")
    public_test = _Named("//labs/{dir}:{target}_public_test",
                         "The lab's main public test (the package may hold more: lab 8's "
                         "configurator test, the programs' quick tests).")
    public_tests = _Named("//labs/{dir}/...",
                          "Every public test of the lab: what `bazel test` runs for a learner.")
    header_library = _Named("//labs/{dir}:{target}_header",
                            "The lab's header alone (what a library that only needs the "
                            "declarations links).")
    hidden_tests = _Named("//tests/{dir}/...",
                          "Every hidden test of the lab (the instructors' repository).")
    hidden_test = _Named("//tests/{dir}:{target}_test")
    public_test_remote = _Named("//labs/{dir}:{target}_public_test_remote",
                                "The public tests built against a client of the learner's process.")
    hidden_test_remote = _Named("//tests/{dir}:{target}_test_remote",
                                "The grading tests built against a client of the learner's "
                                "process.")
    reference_server = _Named("//tests/{dir}:reference_server",
                              "The job's reference process: answers the learner's calls back "
                              "(isolated grading) with the reference solutions.")

    def learner_runtime(self, mode):
        """What a learner's object is linked with: mode "isolated" or "cumulative"."""
        if mode not in ("isolated", "cumulative"):
            raise ValueError("learner runtime mode %r: expected isolated or cumulative" % (mode,))
        return "//tests/{dir}:learner_runtime_{mode}".format(dir=self.dir, mode=mode)

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


def labs_and_chosen(key, root=ROOT):
    """(every lab, the lab a command's optional LAB argument `key` names, or
    None for every lab). An unknown name is printed, and the command ends
    with status 2."""
    labs = load_labs(root)
    if not key:
        return labs, None
    lab = find_lab(labs, key)
    if lab is None:
        print("lab: unknown lab %r; ./lab status lists them" % key, file=sys.stderr)
        raise SystemExit(2)
    return labs, lab


def find_lab(labs, key):
    """A lab by number ("3", "03") or directory name; None if unknown."""
    for lab in labs:
        if str(key) in (str(lab.number), lab.nn, lab.dir):
            return lab
    return None
