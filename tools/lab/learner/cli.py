"""./lab's command line for the learner's commands, defined once.

add_commands() adds status, watch, hint, read and quiz to a parser: main() here is ./lab
in the learner's kit (those three, grade as the provisional scoreboard, and
help); tools/lab/main.py is ./lab in the instructors' repository and adds the
instructors' and authors' commands around the same three.
"""
import argparse
import os
import sys
import textwrap

from labs import ROOT, load_labs
from learner.console import OK, USAGE, WIDTH, err
from learner.hint import cmd_hint
from learner.provisional import cmd_provisional_grade
from learner.quiz import cmd_quiz
from learner.reader import cmd_read
from learner.status import cmd_status
from learner.watch import cmd_watch

# (command, its argument, what it does): the kit's ./lab help, in this order.
COMMANDS = [
    ("status", "", "each lab: not started, failing (and why) or passing; which lab is next"),
    ("watch", "[N]", "re-run lab N's public tests every time you save its file (default: the "
     "first lab not passing); Ctrl-C stops"),
    ("hint", "N", "the next hint for lab N, gentle first (--all: every hint; --reset: start "
     "over)"),
    ("read", "", "the course in your browser: lessons, search, quizzes, your status, "
     "pictures and heads (serves out/site/ on 127.0.0.1; --port N, --build-only)"),
    ("quiz", "N", "lab N's quiz in the terminal (the reader's quiz, answer by letter)"),
    ("grade", "", "a provisional scoreboard from the public tests (your instructor's hidden "
     "tests decide the grade)"),
    ("help", "", "this help"),
]
_WHAT = {name: what for name, _, what in COMMANDS}


def is_kit(root=ROOT):
    """The learner's kit has neither the solutions nor the hidden tests."""
    return not (os.path.isdir(os.path.join(root, "solutions")) and
                os.path.isdir(os.path.join(root, "tests")))


def add_commands(sub, labs):
    """Adds the learner's commands (status, watch, hint, read, quiz) to the subparsers `sub`."""
    numbers = "the lab number (%d-%d)" % (labs[0].number, labs[-1].number)
    sub.add_parser("status", help=_WHAT["status"]).set_defaults(func=cmd_status)
    w = sub.add_parser("watch", help=_WHAT["watch"])
    w.add_argument("lab", nargs="?", help=numbers + "; default: the first lab not passing")
    w.set_defaults(func=cmd_watch)
    h = sub.add_parser("hint", help=_WHAT["hint"])
    # Optional for argparse: without it, cmd_hint says which labs there are.
    h.add_argument("lab", nargs="?", help=numbers)
    h.add_argument("--all", action="store_true", help="show every hint for the lab")
    h.add_argument("--reset", action="store_true", help="start the lab's hints over")
    h.set_defaults(func=cmd_hint)
    r = sub.add_parser("read", help=_WHAT["read"])
    r.add_argument("--port", type=int, default=None, metavar="N",
                   help="serve on 127.0.0.1:N (default: a free port, printed)")
    r.add_argument("--build-only", action="store_true",
                   help="only build out/site/ (open out/site/index.html yourself)")
    r.set_defaults(func=cmd_read)
    q = sub.add_parser("quiz", help=_WHAT["quiz"])
    q.add_argument("lab", nargs="?", help=numbers)
    q.add_argument("--lang", metavar="LANG", help="the quiz in LANG (es, pt-BR) where a "
                   "quiz catalogue translates it (tools/lab/learner/quiz.py)")
    q.set_defaults(func=cmd_quiz)


def help_text(labs):
    """The kit's ./lab help."""
    lines = ["usage: ./lab COMMAND", "",
             "The learner's commands (labs %d to %d; ./lab COMMAND -h for a command's options):"
             % (labs[0].number, labs[-1].number), ""]
    for name, arg, what in COMMANDS:
        lines += textwrap.wrap(what, width=WIDTH,
                               initial_indent="  %-22s" % ("./lab %s %s" % (name, arg)).strip(),
                               subsequent_indent=" " * 24)
    lines += ["", "By hand: bazel test %s runs lab %d's public tests."
              % (labs[0].public_tests, labs[0].number),
              "README.md has the loop; docs/NN_name.md each lab's lesson."]
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """A usage error is one line and exit status 2, not argparse's usage block."""

    def error(self, message):
        err("lab: %s (./lab help lists the commands)" % message)
        sys.exit(USAGE)


def main(argv):
    """./lab in the learner's kit: only the commands that work there."""
    labs = load_labs()
    parser = Parser(prog="./lab", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    add_commands(sub, labs)
    sub.add_parser("grade", help=_WHAT["grade"]).set_defaults(func=cmd_provisional_grade)
    sub.add_parser("help", help=_WHAT["help"])
    if not argv or argv[0] in ("help", "-h", "--help"):
        print(help_text(labs))
        return OK
    args = parser.parse_args(argv)
    return args.func(args)
