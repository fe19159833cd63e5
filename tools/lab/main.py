"""./lab: the entry script for learners and instructors. See ./lab help."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from labs import load_labs  # noqa: E402


def cmd_grade(args):
    import grade
    labs = load_labs()
    if args.submission:
        import submission
        files, notes = submission.collect(args.submission, labs)
        for note in notes:
            print("note: " + note)
    else:
        files = grade.checkout_submission(labs)
    if args.solutions:
        files = {lab.number: open(os.path.join(grade.ROOT, lab.solution_file), "rb").read()
                 for lab in labs}
    mode = "cumulative" if args.cumulative else "isolated"
    results = grade.grade(files, mode=mode, labs=labs)
    grade.print_scoreboard(results, sys.stdout)
    return 0


def cmd_test(args):
    import selftest
    return selftest.main(args)


def main(argv):
    parser = argparse.ArgumentParser(prog="./lab", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    g = sub.add_parser("grade", help="grade the labs in this checkout (or a submission)")
    g.add_argument("submission", nargs="?", help="a submission directory (default: this checkout)")
    g.add_argument("--cumulative", action="store_true",
                   help="grade each lab on top of the learner's own earlier labs")
    g.add_argument("--solutions", action="store_true",
                   help="grade the reference solutions (a check of the grader)")
    g.set_defaults(func=cmd_grade)

    t = sub.add_parser("test", help="run the suite's own tests (what CI runs)")
    t.set_defaults(func=cmd_test)

    sub.add_parser("help", help="show this help")
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
