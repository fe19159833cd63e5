"""./lab: the entry script for learners and instructors. See ./lab help."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from labs import load_labs  # noqa: E402
from learner import cli, i18n  # noqa: E402

# The learner's kit ships the learner package and what it imports, not these
# (course/kit.py follows the imports of the branch a kit takes here).
if not cli.is_kit():
    from checks import degenerate, labcheck, mutants, selftest  # noqa: E402
    from course import bench, kit, newlab  # noqa: E402
    from course import i18n as i18n_pages  # noqa: E402
    from grader import instructor  # noqa: E402


def instructors_parser(labs):
    """./lab in the instructors' repository: the learner's commands (learner/cli.py)
    and the instructors' and course authors' commands around them."""
    numbers = "%d-%d" % (labs[0].number, labs[-1].number)
    parser = argparse.ArgumentParser(prog="./lab", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    g = sub.add_parser("grade", help="grade this checkout, a submission or a roster "
                       "(instructors: docs/INSTRUCTORS.md)")
    g.add_argument("submission", nargs="?", help="a submission directory (default: this checkout)")
    g.add_argument("--roster", metavar="DIR", help="grade every submission directory in DIR")
    g.add_argument("--cumulative", action="store_true",
                   help="grade each lab on top of the learner's own earlier labs")
    g.add_argument("--solutions", action="store_true",
                   help="grade the reference solutions (a check of the grader)")
    g.add_argument("--json", metavar="FILE", help="write the JSON report (a roster: all of them)")
    g.add_argument("--csv", metavar="FILE", help="write the CSV gradebook (a roster)")
    g.add_argument("--gradescope", metavar="DIR",
                   help="write DIR/results.json (a roster: DIR/<submission>/results.json)")
    g.add_argument("--out", metavar="DIR", help="a roster's output directory (default "
                   "out/grades/<roster name>): gradebook.csv, report.json, <submission>/...")
    g.add_argument("--labs", metavar="N,M", help="grade only these labs (numbers, comma-separated)")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="labs graded at once (default: the number of CPUs, at most 8)")
    g.add_argument("--similarity-threshold", type=float, default=None, metavar="PERCENT",
                   help="a roster: list pairs sharing at least PERCENT of each file's own code "
                   "(default 50, or the rubric's; 0 turns the similarity check off)")
    g.add_argument("--prepare", action="store_true",
                   help="only build the reference and warm the caches (Gradescope set-up)")
    g.add_argument("--course-key", metavar="FILE",
                   help="the course's key, where the hidden tests' fresh inputs come from "
                   "(default: $MHA_COURSE_KEY, else course.key in this checkout, made if "
                   "missing); the same key gives the same grades on every machine")
    sl = g.add_argument_group("grading a roster on a Slurm cluster")
    sl.add_argument("--slurm", action="store_true",
                    help="with --roster: submit one job array that grades it, and a merge job; "
                    "run it again to grade what is left")
    sl.add_argument("--status", action="store_true",
                    help="with --slurm: graded / running / waiting / failed counts")
    sl.add_argument("--partition", metavar="P", help="the Slurm partition of the jobs")
    sl.add_argument("--max-parallel", type=int, default=0, metavar="K",
                    help="array tasks running at once (default: as many as Slurm allows)")
    sl.add_argument("--time", metavar="T", help="each task's time limit (Slurm's format, "
                    "e.g. 30:00)")
    sl.add_argument("--block", type=int, default=5, metavar="N",
                    help="submissions per array task (default 5)")
    sl.add_argument("--cpus-per-task", type=int, default=2, metavar="C",
                    help="CPUs of each task; it grades C labs at once (default 2)")
    g.add_argument("--slurm-task", metavar="STATE", help=argparse.SUPPRESS)
    g.add_argument("--slurm-round", type=int, default=0, help=argparse.SUPPRESS)
    g.add_argument("--slurm-merge", metavar="STATE", help=argparse.SUPPRESS)
    g.set_defaults(func=instructor.cmd_grade)

    gb = sub.add_parser("gradescope-bundle", help="write the Gradescope autograder "
                        "(setup.sh, run_autograder and the suite) as a .zip or a directory")
    gb.add_argument("dest", help="OUT.zip or a directory")
    gb.add_argument("--course-key", metavar="FILE",
                    help="the course key the bundle grades with (default: as ./lab grade)")
    gb.set_defaults(func=instructor.cmd_gradescope_bundle)

    ck = sub.add_parser("course-key", help="instructors: make the course's key (once per "
                        "course; the fresh inputs of the hidden tests come from it), or show "
                        "a key's fingerprint")
    ck.add_argument("action", choices=["new", "show"])
    ck.add_argument("file", help="the key file (new: must not exist)")
    ck.set_defaults(func=instructor.cmd_course_key)

    ek = sub.add_parser("export-kit", help="write the learner's copy of the suite (no solutions, "
                        "no hidden tests) to DIR")
    ek.add_argument("dest", help="a new or empty directory")
    ek.add_argument("--skip-symbol-check", action="store_true",
                    help="do not build the kit to check that no file but the learner's stubs "
                         "defines a graded function (faster; the kit is then unchecked)")
    ek.set_defaults(func=kit.cmd_export_kit)

    rb = sub.add_parser("rubric", help="print every hidden test with its points (tests/rubric.json)")
    rb.set_defaults(func=instructor.cmd_rubric)

    t = sub.add_parser("test", help="run the suite's own tests (what CI runs)")
    t.add_argument("--only", metavar="NAME", help="only the checks whose name contains NAME "
                   "(e.g. hostile, mutants, kit)")
    t.set_defaults(func=selftest.main)

    m = sub.add_parser("mutants", help="grade the mutant catalogue (tests/*/mutants/) and "
                       "print a Markdown table of what a learner would read")
    m.add_argument("lab", nargs="?", help="only this lab (%s)" % numbers)
    m.set_defaults(func=mutants.main)

    dg = sub.add_parser("degenerate", help="grade the degenerate catalogue (answers that compute "
                        "nothing, written from each lab's solution) and print what each earns")
    dg.add_argument("lab", nargs="?", help="only this lab (%s)" % numbers)
    dg.add_argument("--variant", metavar="NAME", help="only the variants whose name contains NAME "
                    "(e.g. zeros, arg2, inert)")
    dg.add_argument("--write", metavar="DIR", help="write the catalogue's learner files to DIR "
                    "and grade nothing")
    dg.set_defaults(func=degenerate.main)

    ck = sub.add_parser("check", help="course authors: one lab, building only it: rewrite what "
                        "is derived (stub hash, README row, \"What you may call\"), registry check, "
                        "solution passes, stub fails, mutants rejected and named")
    ck.add_argument("lab", help="the lab (%s)" % numbers)
    ck.set_defaults(func=labcheck.main)

    cli.add_commands(sub, labs)

    n = sub.add_parser("new", help="course authors: a new lab (mirrored folders, registry line, "
                       "README row) that builds, fails as a stub and passes as a solution")
    n.add_argument("name", help="NN_name, the next number, e.g. 14_sliding_window")
    n.add_argument("title", help="the lab's title, e.g. \"Rotary position embeddings\"")
    n.add_argument("--target", help="the library target and file name (default: name without NN_)")
    n.set_defaults(func=newlab.cmd_new)

    bench.add_parser(sub)

    tr = sub.add_parser("translate", help="course authors: after an English edit, update the "
                        "translation catalogues (po/) and regenerate every language's "
                        "pages and hints; --pages: only regenerate the pages")
    tr.add_argument("--pages", action="store_true", help="only regenerate the pages from the "
                    "catalogues as they are (no catalogue changes)")
    tr.set_defaults(func=i18n_pages.cmd_translate)

    sub.add_parser("help", help="show this help")
    return parser


def main(argv):
    # The learner's language (--lang, LANGUAGE, LC_ALL, LC_MESSAGES, LANG): the
    # learner's commands speak it; the instructors' and authors' stay English.
    argv, lang = i18n.strip_lang_option(argv)
    if lang is not None and i18n.unknown_language(lang):
        print("lab: --lang %s: the course speaks %s" % (lang, ", ".join(i18n.lang_options())),
              file=sys.stderr)
        return 2
    i18n.setup(i18n.choose(lang))
    if cli.is_kit():
        return cli.main(argv)      # only the learner's commands, with their own help
    parser = instructors_parser(load_labs())
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("\nlab: interrupted", file=sys.stderr)
        sys.exit(130)
