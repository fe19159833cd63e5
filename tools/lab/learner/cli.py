"""./lab's command line for the learner's commands, defined once.

add_commands() adds status, watch, hint, read and quiz to a parser: main() here is ./lab
in the learner's kit (those three, grade as the provisional scoreboard, and
help); tools/lab/main.py is ./lab in the instructors' repository and adds the
instructors' and authors' commands around the same three.
"""
import argparse
import os
import sys

from labs import ROOT, load_labs
from learner import i18n
from learner.console import OK, USAGE, WIDTH, err, wrap
from learner.hint import cmd_hint
from learner.i18n import N_, _
from learner.provisional import cmd_provisional_grade
from learner.quiz import cmd_quiz
from learner.reader import cmd_read
from learner.status import cmd_status
from learner.watch import cmd_watch

# (command, its argument, what it does): the kit's ./lab help, in this order.
COMMANDS = [
    ("status", "", N_("each lab: not started, failing (and why) or passing; which lab is "
                      "next")),
    ("watch", "[N]", N_("re-run lab N's public tests every time you save its file (default: "
                        "the first lab not passing); Ctrl-C stops")),
    ("hint", "N", N_("the next hint for lab N, gentle first (--all: every hint; --reset: "
                     "start over)")),
    ("read", "", N_("the course in your browser: lessons, search, quizzes, your status, "
                    "pictures and heads (serves out/site/ on 127.0.0.1; --port N, "
                    "--build-only)")),
    ("quiz", "N", N_("lab N's quiz in the terminal (the reader's quiz, answer by letter)")),
    ("grade", "", N_("a provisional scoreboard from the public tests (your instructor's "
                     "hidden tests decide the grade)")),
    ("help", "", N_("this help")),
]
_WHAT = {name: what for name, _arg, what in COMMANDS}


def is_kit(root=ROOT):
    """The learner's kit has neither the solutions nor the hidden tests."""
    return not (os.path.isdir(os.path.join(root, "solutions")) and
                os.path.isdir(os.path.join(root, "tests")))


def add_commands(sub, labs):
    """Adds the learner's commands (status, watch, hint, read, quiz) to the subparsers `sub`."""
    numbers = _("the lab number (%d-%d)") % (labs[0].number, labs[-1].number)
    sub.add_parser("status", help=_(_WHAT["status"])).set_defaults(func=cmd_status)
    w = sub.add_parser("watch", help=_(_WHAT["watch"]))
    w.add_argument("lab", nargs="?", help=numbers + _("; default: the first lab not passing"))
    w.set_defaults(func=cmd_watch)
    h = sub.add_parser("hint", help=_(_WHAT["hint"]))
    # Optional for argparse: without it, cmd_hint says which labs there are.
    h.add_argument("lab", nargs="?", help=numbers)
    h.add_argument("--all", action="store_true", help=_("show every hint for the lab"))
    h.add_argument("--reset", action="store_true", help=_("start the lab's hints over"))
    h.set_defaults(func=cmd_hint)
    r = sub.add_parser("read", help=_(_WHAT["read"]))
    r.add_argument("--port", type=int, default=None, metavar="N",
                   help="serve on 127.0.0.1:N (default: a free port, printed)")
    r.add_argument("--build-only", action="store_true",
                   help="only build out/site/ (open out/site/index.html yourself)")
    r.set_defaults(func=cmd_read)
    q = sub.add_parser("quiz", help=_(_WHAT["quiz"]))
    q.add_argument("lab", nargs="?", help=numbers)
    q.set_defaults(func=cmd_quiz)


def help_text(labs):
    """The kit's ./lab help."""
    lines = [_("usage: ./lab [--lang %s] COMMAND") % "|".join(i18n.lang_options()), "",
             _("The learner's commands (labs %(first)d to %(last)d; ./lab COMMAND -h for a "
               "command's options):") % {"first": labs[0].number, "last": labs[-1].number}, ""]
    for name, arg, what in COMMANDS:
        lines += wrap(_(what), WIDTH, "  %-22s" % ("./lab %s %s" % (name, arg)).strip(),
                      later=" " * 24)
    readme, lessons = "README.md", "docs/NN_name.md"
    if i18n.lang():
        d = i18n.page_dir(i18n.lang())
        if os.path.isfile(os.path.join(ROOT, "README.%s.md" % d)):
            readme = "README.%s.md" % d
        lessons = i18n.page(labs[0].lesson_file).replace(
            os.path.basename(labs[0].lesson_file), "NN_name.md")
    lines += ["", _("By hand: bazel test %(target)s runs lab %(n)d's public tests.")
              % {"target": labs[0].public_tests, "n": labs[0].number},
              _("%(readme)s has the loop; %(lessons)s each lab's lesson.")
              % {"readme": readme, "lessons": lessons}]
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """A usage error is one line and exit status 2, not argparse's usage block."""

    def error(self, message):
        err(_("lab: %s (./lab help lists the commands)") % message)
        sys.exit(USAGE)


def main(argv):
    """./lab in the learner's kit: only the commands that work there."""
    labs = load_labs()
    parser = Parser(prog="./lab", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    add_commands(sub, labs)
    sub.add_parser("grade", help=_(_WHAT["grade"])).set_defaults(func=cmd_provisional_grade)
    sub.add_parser("help", help=_(_WHAT["help"]))
    if not argv or argv[0] in ("help", "-h", "--help"):
        print(help_text(labs))
        return OK
    args = parser.parse_args(argv)
    return args.func(args)
