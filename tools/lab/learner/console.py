"""What every learner command shares at the terminal: exit statuses, the line
width, messages to stderr, and reading a lab argument."""
import sys
import textwrap

from labs import find_lab
from learner.i18n import _

# Exit statuses of the learner's commands.
OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130
WIDTH = 100


def err(msg):
    print(msg, file=sys.stderr, flush=True)


def wrap(text, width=WIDTH, indent=""):
    """A paragraph as lines of at most `width`, later lines indented two more:
    words and paths are never cut."""
    return textwrap.wrap(text, width=width, initial_indent=indent,
                         subsequent_indent=indent + "  ",
                         break_on_hyphens=False, break_long_words=False)


def lab_arg(labs, key):
    """The lab named by a command's argument, or None after saying which exist."""
    lab = find_lab(labs, key) if key is not None else None
    if lab is None:
        err(_("lab: there is no lab %(key)r; the labs are %(first)d to %(last)d (./lab status "
              "lists them)") % {"key": key, "first": labs[0].number, "last": labs[-1].number})
    return lab
