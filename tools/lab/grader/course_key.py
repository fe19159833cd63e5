"""The course key: the secret the hidden tests' fresh random inputs come from.

    ./lab course-key new FILE              makes one (mode 0600), prints its fingerprint
    ./lab grade ... --course-key FILE      grades with it (or MHA_COURSE_KEY=FILE)

The fresh inputs of a lab (testing::FreshSeed) are drawn from a seed made of
the key and of what is graded: the lab, the mode and the learner's files
(fresh_seed). So the same submission, graded with the same suite and key,
meets the same inputs on every machine (a local grading, each Slurm node,
Gradescope's container, a colleague's regrade), and gets the same grade;
without the key nobody can tell which inputs a file will meet. The key
belongs to the instructor: kept with the course's grading files, given to
every machine that grades the course, never in the learner's kit.

Without --course-key or MHA_COURSE_KEY a grading uses DEFAULT, beside the
suite (git ignores it), and makes it there, saying where, when it is
missing. Every report names the key's fingerprint (not the key) and the
suite's hash (suite.source_hash), so two gradings made with different keys
or suites say so.
"""
import hashlib
import hmac
import os

from labs import ROOT

MAGIC = "mha-course-key 1"
DEFAULT = os.path.join(ROOT, "course.key")
ENV = "MHA_COURSE_KEY"


class CourseKeyError(RuntimeError):
    """A course key that cannot be used (missing, malformed); nothing is graded."""


class CourseKey:
    """A course key's secret, where it came from, and whether this run made it."""

    def __init__(self, secret, path=None, made=False):
        if len(secret) != 32:
            raise CourseKeyError("a course key is 32 bytes, not %d" % len(secret))
        self.secret = secret
        self.path = path
        self.made = made

    @property
    def fingerprint(self):
        """16 hexadecimal digits that name the key in reports (they reveal nothing of it)."""
        return hashlib.sha256(b"mha course key fingerprint\0" + self.secret).hexdigest()[:16]

    def fresh_seed(self, lab_dir, mode, sources):
        """The seed of the fresh random inputs of lab `lab_dir`'s tests in `mode`
        for a program linked from `sources` (the learner's file, then in
        cumulative mode the earlier labs' files, as bytes): the same on every
        machine for the same key, unpredictable without it."""
        msg = b"fresh inputs\0" + lab_dir.encode() + b"\0" + mode.encode()
        for data in sources:
            msg += b"\0" + hashlib.sha256(data).digest()
        return int.from_bytes(hmac.new(self.secret, msg, hashlib.sha256).digest()[:8], "little")

    def text(self):
        return "%s\n%s\n" % (MAGIC, self.secret.hex())

    def describe(self):
        return "course key %s (fingerprint %s)" % (self.path or "(in memory)", self.fingerprint)


def new(path):
    """Writes a new key to `path` (which must not exist), private to its owner."""
    key = CourseKey(os.urandom(32), os.path.abspath(path), made=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CourseKeyError("%s exists already: a course key is made once and kept (delete "
                             "it first if you really mean to replace it: every grade made "
                             "with it would then differ)" % path)
    with os.fdopen(fd, "w") as f:
        f.write(key.text())
    os.chmod(path, 0o600)
    return key


def load(path):
    """The key in `path`, or CourseKeyError naming the file and what was expected."""
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
    except FileNotFoundError:
        raise CourseKeyError("course key %s: no such file (make one with ./lab course-key new "
                             "%s, once per course)" % (path, path))
    except OSError as e:
        raise CourseKeyError("course key %s: cannot read it (%s)" % (path, e.strerror))
    lines = data.decode("ascii", "replace").split("\n")
    secret = None
    if len(lines) >= 2 and lines[0].strip() == MAGIC and not "".join(lines[2:]).strip():
        try:
            secret = bytes.fromhex(lines[1].strip())
        except ValueError:
            secret = None
    if secret is None or len(secret) != 32:
        raise CourseKeyError("course key %s is not a course key: expected the two lines that "
                             "./lab course-key new writes ('%s', then 64 hexadecimal digits)"
                             % (path, MAGIC))
    return CourseKey(secret, os.path.abspath(path))


def resolve(path=None, log=None):
    """The key to grade with: `path` (--course-key), else $MHA_COURSE_KEY, else
    DEFAULT, made (and said where) when it is not there yet."""
    path = path or os.environ.get(ENV) or None
    if path:
        return load(path)
    if os.path.exists(DEFAULT):
        return load(DEFAULT)
    try:
        key = new(DEFAULT)
    except FileExistsError:            # made by a grading started at the same moment
        return load(DEFAULT)
    if log:
        log("grade: no course key given (--course-key FILE or %s=FILE): made one at %s "
            "(fingerprint %s). Keep it with the course's grading files and give it to every "
            "machine that grades this course: the same key gives the same grades everywhere"
            % (ENV, DEFAULT, key.fingerprint))
    return key


def difference(previous, current):
    """What differs between two reports' gradings (their "course_key" and
    "suite" fields), as a sentence, or "" when nothing does."""
    before, now = [], []
    for field, what in (("course_key", "course key"), ("suite", "suite")):
        a, b = previous.get(field), current.get(field)
        if a != b:
            before.append("%s %s" % (what, a or "(not recorded)"))
            now.append("%s %s" % (what, b))
    if not before:
        return ""
    return ("was graded with %s; this grading uses %s: grades may differ for that reason"
            % (" and ".join(before), " and ".join(now)))
