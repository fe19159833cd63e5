"""Instructor commands: ./lab grade, ./lab rubric, ./lab gradescope-bundle.

docs/INSTRUCTORS.md is the manual. Exit status of ./lab grade: 0 when it
graded (whatever the scores), 2 when the rubric has errors (it still grades
and writes every report), 1 when it could not grade at all.
"""
import json
import os
import stat
import sys
import time
import zipfile

from course import kit
from grader import course_key
from grader import grade
from grader import ipc
from grader import roster
from grader import slurm
from grader import submission
from grader import timing
from grader.workspace import make_private_dir
from labs import ROOT, load_labs
from reports import class_report
from reports import report
from reports import rubric as rubric_mod


def _log(msg):
    print(msg, file=sys.stderr)
    sys.stderr.flush()


def _fallback_results(directory, why):
    """Gradescope must always get a results.json, even when the grader itself failed."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "results.json"), "w") as f:
        json.dump({"score": 0, "execution_time": 0, "tests": [],
                   "output": "The autograder failed before it could grade (not your code): "
                             "%s\nPlease tell your instructor." % why}, f, indent=1)


def checkout_submission(labs):
    """The learner files of this checkout, as a submission."""
    files = {}
    for lab in labs:
        data = lab.read_learner_file()
        if data is not None:
            files[lab.number] = data
    return grade.Submission("checkout", files)


def solutions_submission(labs):
    """The reference solutions of `labs`, as one submission."""
    files = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
            files[lab.number] = f.read()
    return grade.Submission("solutions", files)


def _selected_labs(args):
    labs = load_labs()
    if not getattr(args, "labs", None):
        return labs, None
    wanted = set()
    for part in args.labs.split(","):
        if not part.strip().isdigit() or int(part) not in {l.number for l in labs}:
            raise SystemExit("lab: --labs %s: %r is not a lab number (the labs are %d-%d)"
                             % (args.labs, part, labs[0].number, labs[-1].number))
        wanted.add(int(part))
    return labs, sorted(wanted)


def _output_dirs(args):
    """The directories this grading writes into (absolute)."""
    dirs = []
    if args.roster:
        dirs.append(os.path.abspath(_roster_out(args)))
    elif args.out:
        dirs.append(os.path.abspath(args.out))
    if args.gradescope:
        dirs.append(os.path.abspath(args.gradescope))
    for f in (args.json, args.csv):
        # A file's folder is made private only when this grading makes it: an
        # existing one (/tmp for --json /tmp/r.json) keeps its mode, and the
        # file itself is written 0600 (umask 077).
        if f and not os.path.exists(os.path.dirname(os.path.abspath(f))):
            dirs.append(os.path.dirname(os.path.abspath(f)))
    return dirs


def _roster_out(args):
    return args.out or os.path.join(ROOT, "out", "grades", roster.folder_names(
        [os.path.basename(os.path.abspath(args.roster))]).popitem()[1])


def cmd_grade(args):
    try:
        return _cmd_grade(args)
    except ipc.GradingStopped as e:     # e.g. a job's IPC objects that would not go
        print("lab: %s" % e, file=sys.stderr)
        return 1


def _cmd_grade(args):
    mode = "cumulative" if args.cumulative else "isolated"
    os.umask(0o077)                 # every file and directory of this grading: private
    if getattr(args, "slurm_task", None):
        return slurm.run_task(args.slurm_task, args.slurm_round, _slurm_write_submission)
    if getattr(args, "slurm_merge", None):
        return slurm.run_merge(args.slurm_merge, write_roster_outputs)
    if getattr(args, "slurm", False) and not args.roster:
        raise SystemExit("lab: --slurm grades a roster: give --roster DIR")
    if getattr(args, "slurm", False) and args.status:
        return slurm.status(args, os.path.abspath(_roster_out(args)))
    key = getattr(args, "course_key", None)
    entries = ignored = None
    try:
        labs, only = _selected_labs(args)
        if args.roster:
            # A roster whose entries cannot be told apart is refused here,
            # before anything is built or graded.
            entries, ignored = roster.read(args.roster)
        secrets = [os.path.abspath(args.roster)] if args.roster else []
        # Every output place exists, private, before any learner code runs
        # (a directory made later would take the umask of whoever made it).
        for d in _output_dirs(args):
            make_private_dir(d)
            secrets.append(d)
        # A report file that exists already keeps its mode when rewritten.
        secrets += [os.path.abspath(f) for f in (args.json, args.csv) if f and os.path.exists(f)]
        if getattr(args, "slurm", False):
            return slurm.submit(args, os.path.abspath(_roster_out(args)), mode, labs, only,
                                secrets, key)
        grading = grade.open_grading(labs, _log, grade.Options(mode=mode, jobs=args.jobs),
                                     secrets=secrets, only=only, course_key=key)
    except (roster.RosterError, course_key.CourseKeyError) as e:
        if args.gradescope and not args.roster:
            _fallback_results(args.gradescope, str(e))
        raise SystemExit("lab: %s" % e)
    except Exception as e:
        if args.gradescope and not args.roster:
            _fallback_results(args.gradescope, "%s: %s" % (type(e).__name__, e))
        raise
    for e in grading.rubric.errors:
        _log("rubric error: " + e)
    _log("grade: isolation: " + grading.isolation.describe()["summary"])
    if args.prepare:
        t0 = time.time()
        reps = grade.grade_all(grading, [solutions_submission(labs)])
        _log("grade: prepared in %.0f s (the solutions score %s/%s)" % (
            time.time() - t0, report.fmt_points(reps[0]["points"]),
            report.fmt_points(reps[0]["max_points"])))
        return 2 if grading.rubric.errors else 0
    if args.roster:
        return _grade_roster(grading, args, mode, entries, ignored)
    if args.solutions:
        sub = solutions_submission(labs)
    elif args.submission:
        files, ignored, notes = submission.collect(args.submission, labs)
        sub = grade.Submission(os.path.basename(os.path.abspath(args.submission)), files,
                               ignored, notes)
    else:
        sub = checkout_submission(labs)
    try:
        rep = grade.grade_all(grading, [sub])[0]
    except Exception as e:
        if args.gradescope:
            _fallback_results(args.gradescope, "%s: %s" % (type(e).__name__, e))
        raise
    sys.stdout.write(report.scoreboard(rep))
    print("graded in %.0f s" % rep["seconds"])
    _say_if_graded_otherwise(args.json, rep)
    if args.json:
        report.write_json(rep, args.json)
    if args.gradescope:
        report.write_gradescope(rep, args.gradescope, grading.rubric)
    if args.csv:
        report.write_csv([rep], labs, args.csv)
    grading.check_private(_written(args, [args.json, args.csv]))
    return 2 if grading.rubric.errors else 0


def _slurm_write_submission(rep, rubric, gradescope, folder):
    """What a Slurm task writes for one submission besides its report.json:
    the Gradescope results, where a local roster grading writes them."""
    if gradescope:
        report.write_gradescope(rep, os.path.join(gradescope, folder), rubric)


def _written(args, files, dirs=()):
    """Every file and folder a grading wrote, for the "private" self-check."""
    out = [f for f in files if f]
    for top in list(dirs) + ([args.gradescope] if args.gradescope else []):
        out.append(top)
        for dirpath, dirnames, filenames in os.walk(top):
            out += [os.path.join(dirpath, n) for n in dirnames + filenames]
    return out


def _say_if_graded_otherwise(path, rep):
    """Prints a note when `path` (a report this grading replaces) was graded
    with another course key or suite: the grades may differ for that reason."""
    try:
        with open(path) as f:
            before = json.load(f)
    except (TypeError, OSError, ValueError):
        return
    note = course_key.difference(before, rep) if isinstance(before, dict) else ""
    if note:
        print("note: %s %s" % (path, note))


def _grade_roster(grading, args, mode, entries=None, ignored=None):
    if entries is None:   # refused before any grading when two entries cannot be told apart
        entries, ignored = roster.read(args.roster)
    out = _roster_out(args)
    make_private_dir(out)
    t0 = time.time()
    submissions = submission.of_roster(entries, grading.labs)
    count = [0]
    folders = {e.id: e.folder for e in entries}

    def progress(rep, sub):
        count[0] += 1
        d = os.path.join(args.gradescope or out, folders[sub.ident])
        report.write_gradescope(rep, d, grading.rubric)
        report.write_json(rep, os.path.join(out, folders[sub.ident], "report.json"))
        trouble = ["lab %d %s" % (r["lab"], r["status"].replace("_", " "))
                   for r in rep["labs"] if r["status"] not in ("graded",)]
        print("[%d/%d] %-30s %s/%s points%s" % (
            count[0], len(submissions), sub.name, report.fmt_points(rep["points"]),
            report.fmt_points(rep["max_points"]),
            (" - " + ", ".join(trouble)) if trouble else ""))
        sys.stdout.flush()

    _say_if_graded_otherwise(args.json or os.path.join(out, "report.json"),
                             {"course_key": grading.course_key.fingerprint,
                              "suite": grading.suite_hash})
    with timing.Recorder() as timer:
        reports = grade.grade_all(grading, submissions, progress)
    csv_path, json_path, lines = write_roster_outputs(
        args, out, reports, submissions, ignored, grading.labs, grading.graded_labs,
        grading.rubric, grading.isolation, mode)
    seconds = time.time() - t0
    print("graded %d submissions in %.0f s (%.1f s each); gradebook: %s; reports: %s"
          % (len(entries), seconds, seconds / max(1, len(entries)), csv_path, out))
    for line in lines + [timer.line(reports)]:
        print(line)
    timer.write(os.path.join(out, "timing.json"), reports, total_s=round(seconds, 1))
    # The self-check: nothing this grading wrote is readable by a job's user.
    grading.check_private(_written(args, [csv_path, json_path], [out]))
    for name in ignored:
        print("ignored in the roster: " + name)
    return 2 if grading.rubric.errors else 0


def write_roster_outputs(args, out, reports, submissions, ignored, labs, graded_labs, rubric,
                         isolation, mode):
    """What a graded roster writes over the whole class: the gradebook, the
    roster's report.json with its class section, and the class report (HTML).
    The same for one machine and for a Slurm merge job (grader/slurm.py), so
    that both write the same gradebook. Returns (csv path, json path, lines)."""
    csv_path = args.csv or os.path.join(out, "gradebook.csv")
    report.write_csv(reports, graded_labs, csv_path)
    roster_name = os.path.basename(os.path.abspath(args.roster))
    run_note = "%s mode; isolation: %s." % (mode, isolation.describe()["summary"])
    klass, lines = class_report.for_roster(reports, submissions, labs, rubric, run_note,
                                           roster_name, out, args.similarity_threshold, _log)
    json_path = args.json or os.path.join(out, "report.json")
    report.write_roster_json(reports, isolation, rubric, roster_name, mode, ignored, json_path,
                             klass)
    return csv_path, json_path, lines


def cmd_course_key(args):
    """./lab course-key new FILE | show FILE."""
    try:
        key = course_key.new(args.file) if args.action == "new" else course_key.load(args.file)
    except course_key.CourseKeyError as e:
        print("lab: %s" % e, file=sys.stderr)
        return 1
    if args.action == "new":
        print("wrote a new course key to %s (fingerprint %s, readable by you only).\n"
              "Keep it with the course's grading files, never in the learners' kit, and grade "
              "every submission of the course with it: ./lab grade ... --course-key %s (or "
              "MHA_COURSE_KEY=%s), on every machine, Slurm and Gradescope included "
              "(./lab gradescope-bundle --course-key %s)." % (
                  args.file, key.fingerprint, args.file, args.file, args.file))
    else:
        print("%s: course key, fingerprint %s" % (args.file, key.fingerprint))
    return 0


def cmd_rubric(args):
    labs = load_labs()
    grading = grade.open_grading(labs, _log)
    tests = {lab.dir: grading.suite.artefacts[lab.number].hidden_test_names for lab in labs}
    eff = rubric_mod.effective(labs, tests, grading.rubric)
    total = 0.0
    for lab in labs:
        pts = sum(eff[lab.dir].values())
        total += pts
        print("lab %d (%s): %d tests, %g points" % (lab.number, lab.dir, len(eff[lab.dir]), pts))
        for t, p in eff[lab.dir].items():
            kind = ("  (argument check: scores beside a passing computation only)"
                    if grading.rubric.is_argument_check(lab.dir, t) else
                    "  (weight draw)" if grading.rubric.is_weight_draw(lab.dir, t) else "")
            print("  %5g  %s%s" % (p, t, kind))
    print("total: %g points" % total)
    for e in grading.rubric.errors:
        print("rubric error: " + e)
    return 2 if grading.rubric.errors else 0


# ---------------------------------------------------------------------------
# Gradescope

SETUP_SH = r'''#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image, with this
# bundle unpacked in /autograder/source. Written by ./lab gradescope-bundle.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || true
tools/setup.sh
# Build the reference and warm the grading caches inside the image, so a
# submission only compiles its own files.
./lab grade --prepare --course-key /autograder/source/course.key
'''

RUN_AUTOGRADER = r'''#!/usr/bin/env bash
# Gradescope runs this for each submission: the learner's files are in
# /autograder/submission, the results go to /autograder/results/results.json.
# Written by ./lab gradescope-bundle.
cd /autograder/source
mkdir -p /autograder/results
rm -f /autograder/results/results.json
# The suite (solutions, goldens) is readable by root only.
chmod 0700 /autograder/source
# course.key: the course's key (./lab course-key), so that a submission gets
# the grade it gets on every other machine that grades the course.
MHA_SETUP_FLAGS= ./lab grade /autograder/submission --gradescope /autograder/results \
  --json /autograder/results/report.json --course-key /autograder/source/course.key
if [ ! -s /autograder/results/results.json ]; then
  cat > /autograder/results/results.json <<'EOF'
{"score": 0, "execution_time": 0, "tests": [],
 "output": "The autograder failed before it could grade (not your code). Please tell your instructor."}
EOF
fi
'''

_BUNDLE_TOP = ["WORKSPACE", "BUILD", ".bazelrc", ".bazelignore", "lab", "po/BUILD",
               "po/languages.json"]
_BUNDLE_DIRS = ["common", "labs", "po/cli", "solutions", "tests", "third_party", "tools/lab"]


def bundle_files(labs, key):
    """{path in the bundle: bytes}: the suite, with the learner files as
    committed stubs, and the course key `key` (course_key.CourseKey)."""
    files = kit.collect(_BUNDLE_TOP, _BUNDLE_DIRS, skip_dirs=("mutants", "hostile"))
    files["setup.sh"] = SETUP_SH.encode()
    files["run_autograder"] = RUN_AUTOGRADER.encode()
    files["course.key"] = key.text().encode()
    return files


_EXECUTABLE = {"lab", "setup.sh", "run_autograder", "tools/setup.sh"}


def cmd_gradescope_bundle(args):
    labs = load_labs()
    try:
        key = course_key.resolve(getattr(args, "course_key", None), _log)
    except course_key.CourseKeyError as e:
        print("lab: %s" % e, file=sys.stderr)
        return 1
    files = bundle_files(labs, key)
    dest = args.dest
    if dest.endswith(".zip"):
        os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
            for rel in sorted(files):
                info = zipfile.ZipInfo(rel, date_time=(2024, 1, 1, 0, 0, 0))
                mode = 0o755 if rel in _EXECUTABLE or rel.endswith(".sh") else \
                    0o600 if rel == "course.key" else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, files[rel])
    else:
        if os.path.exists(dest) and os.listdir(dest):
            print("lab: %s exists and is not empty" % dest, file=sys.stderr)
            return 1
        kit.write_tree(dest, files, _EXECUTABLE)
        os.chmod(os.path.join(dest, "course.key"), 0o600)
    print("wrote the Gradescope autograder to %s (%d files), with %s. Upload it as the "
          "autograder (.zip); see docs/INSTRUCTORS.md, \"Gradescope\"." % (
              dest, len(files), key.describe()))
    return 0
