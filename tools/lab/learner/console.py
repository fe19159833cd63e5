"""What every learner command shares at the terminal: exit statuses, the line
width, messages to stderr, and reading a lab argument.

Widths are terminal columns, not characters: a Chinese character (East Asian
Wide or Fullwidth) takes two, a combining mark none, so tables of Chinese
titles stay aligned and wrapped Chinese text (which has no spaces) fills its
lines.
"""
import re
import sys
import textwrap
import unicodedata

from labs import find_lab
from learner.i18n import _

# Exit statuses of the learner's commands.
OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130
WIDTH = 100


def err(msg):
    print(msg, file=sys.stderr, flush=True)


def display_width(text):
    """The columns `text` takes in a terminal: 2 for a wide character (CJK),
    0 for a combining mark, else 1."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text, width):
    """`text` followed by spaces up to `width` columns (%-*s counts characters)."""
    return text + " " * max(0, width - display_width(text))


def after(head, tail, latin=" ", wide=""):
    """`head` then `tail`, joined as the script `head` ends in joins them: by
    `latin` after a Latin character ("Right. because", "failing: 3/9"), by
    `wide` after a wide one, whose full-width punctuation carries its own space
    ("答对了。因为", and a full-width colon: "未通过：3/9")."""
    ends_wide = bool(head) and display_width(head[-1]) == 2
    return head + (wide if ends_wide else latin) + tail


# A place a line may break: after spaces, or before and after a wide
# character (Chinese and Japanese break between any two characters), but
# never before closing punctuation such as "，" "。" "）" (a line must not
# start with one).
_PIECES = re.compile(r"\s+|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f"
                     r"\uff00-\uff60\uffe0-\uffe6]+|.[\u3001\u3002\uff0c\uff1a\uff1b\uff09\uff01"
                     r"\uff1f\u300d\u300f\u3011]*")


def wrap(text, width=WIDTH, indent="", later=None):
    """A paragraph as lines of at most `width` columns, later lines indented
    by `later` (two more than `indent` by default): words and paths are never
    cut; Chinese text breaks between characters."""
    later = indent + "  " if later is None else later
    if all(display_width(c) == 1 for c in text):
        return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=later,
                             break_on_hyphens=False, break_long_words=False)
    lines, line = [], indent
    for piece in _PIECES.findall(" ".join(text.split())):
        if piece.isspace():
            if line.strip():
                line += " "
            continue
        if line.strip() and display_width(line.rstrip()) + display_width(piece) > width:
            lines.append(line.rstrip())
            line = later
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines


def lab_arg(labs, key):
    """The lab named by a command's argument, or None after saying which exist."""
    lab = find_lab(labs, key) if key is not None else None
    if lab is None:
        err(_("lab: there is no lab %(key)r; the labs are %(first)d to %(last)d (./lab status "
              "lists them)") % {"key": key, "first": labs[0].number, "last": labs[-1].number})
    return lab
