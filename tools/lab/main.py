"""./lab: the entry script for learners and instructors. See ./lab help."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from labs import ROOT, load_labs  # noqa: E402


def is_kit():
    """The learner's kit has neither the solutions nor the hidden tests."""
    return not (os.path.isdir(os.path.join(ROOT, "solutions")) and
                os.path.isdir(os.path.join(ROOT, "tests")))


def cmd_grade(args):
    from grader import instructor
    return instructor.cmd_grade(args)


def cmd_gradescope_bundle(args):
    from grader import instructor
    return instructor.cmd_gradescope_bundle(args)


def cmd_export_kit(args):
    from course import kit
    return kit.cmd_export_kit(args)


def cmd_rubric(args):
    from grader import instructor
    return instructor.cmd_rubric(args)


def cmd_test(args):
    from checks import selftest
    return selftest.main(args)


def cmd_mutants(args):
    from checks import mutants
    return mutants.main(args)


def cmd_new(args):
    from course import newlab
    return newlab.cmd_new(args)


def cmd_hint(args):
    from learner import learner
    return learner.cmd_hint(args)


def cmd_status(args):
    from learner import learner
    return learner.cmd_status(args)


def cmd_watch(args):
    from learner import learner
    return learner.cmd_watch(args)


def main(argv):
    if is_kit():
        # Only the learner's commands, with their own help (learner.main).
        from learner import learner
        return learner.main(argv)
    labs = load_labs()
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
    g.set_defaults(func=cmd_grade)

    gb = sub.add_parser("gradescope-bundle", help="write the Gradescope autograder "
                        "(setup.sh, run_autograder and the suite) as a .zip or a directory")
    gb.add_argument("dest", help="OUT.zip or a directory")
    gb.set_defaults(func=cmd_gradescope_bundle)

    ek = sub.add_parser("export-kit", help="write the learner's copy of the suite (no solutions, "
                        "no hidden tests) to DIR")
    ek.add_argument("dest", help="a new or empty directory")
    ek.add_argument("--skip-symbol-check", action="store_true",
                    help="do not build the kit to check that no file but the learner's stubs "
                         "defines a graded function (faster; the kit is then unchecked)")
    ek.set_defaults(func=cmd_export_kit)

    rb = sub.add_parser("rubric", help="print every hidden test with its points (tests/rubric.json)")
    rb.set_defaults(func=cmd_rubric)

    t = sub.add_parser("test", help="run the suite's own tests (what CI runs)")
    t.add_argument("--only", metavar="NAME", help="only the checks whose name contains NAME "
                   "(e.g. hostile, mutants, kit)")
    t.set_defaults(func=cmd_test)

    m = sub.add_parser("mutants", help="grade the mutant catalogue (tests/*/mutants/) and "
                       "print a Markdown table of what a learner would read")
    m.add_argument("lab", nargs="?", help="only this lab (%s)" % numbers)
    m.set_defaults(func=cmd_mutants)

    h = sub.add_parser("hint", help="the next hint for lab N (progressive)")
    h.add_argument("lab", help="the lab number (%s)" % numbers)
    h.add_argument("--all", action="store_true", help="show every hint for the lab")
    h.add_argument("--reset", action="store_true", help="start the lab's hints over")
    h.set_defaults(func=cmd_hint)

    s = sub.add_parser("status", help="each lab: not started / failing (and why) / passing, and "
                       "the next one")
    s.set_defaults(func=cmd_status)

    w = sub.add_parser("watch", help="re-run a lab's public tests whenever you save its file")
    w.add_argument("lab", nargs="?", help="the lab number (default: the first lab not passing)")
    w.set_defaults(func=cmd_watch)

    n = sub.add_parser("new", help="course authors: a new lab (mirrored folders, registry line, "
                       "README row) that builds, fails as a stub and passes as a solution")
    n.add_argument("name", help="NN_name, the next number, e.g. 14_sliding_window")
    n.add_argument("title", help="the lab's title, e.g. \"Rotary position embeddings\"")
    n.add_argument("--target", help="the library target and file name (default: name without NN_)")
    n.set_defaults(func=cmd_new)

    from course import bench
    bench.add_parser(sub)

    sub.add_parser("help", help="show this help")
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
