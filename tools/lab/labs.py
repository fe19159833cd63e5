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

    @property
    def nn(self):
        return "%02d" % self.number

    @property
    def learner_file(self):
        """Relative path of the one file the learner edits."""
        return "labs/%s/%s.cc" % (self.dir, self.target)

    @property
    def solution_file(self):
        return "solutions/%s/%s.cc" % (self.dir, self.target)

    @property
    def hidden_test(self):
        return "//tests/%s:%s_test" % (self.dir, self.target)

    @property
    def public_tests(self):
        return "//labs/%s/..." % self.dir


def load_labs(root=ROOT):
    with open(os.path.join(root, "labs", "labs.json")) as f:
        return [Lab(e, root) for e in json.load(f)["labs"]]


def find_lab(labs, key):
    """A lab by number ("3", "03") or directory name; None if unknown."""
    for lab in labs:
        if str(key) in (str(lab.number), lab.nn, lab.dir):
            return lab
    return None
