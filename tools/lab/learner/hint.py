"""./lab hint N: the next hint for lab N, gentle first (--all: every hint;
--reset: start over). Hints seen are remembered in .cache/hints.json."""
import textwrap

from labs import load_labs
from learner import files
from learner.console import OK, USAGE, WIDTH, err, lab_arg


def _load_seen():
    data = files.load_json(files.HINTS_STATE)
    try:
        return {str(k): int(v) for k, v in data.get("seen", {}).items()}
    except (AttributeError, TypeError, ValueError):
        return {}


def _save_seen(seen):
    files.save_json(files.HINTS_STATE, {"seen": seen})


def _print_hint(lab, i):
    print("Hint %d of %d for lab %d (%s):" % (i + 1, len(lab.hints), lab.number, lab.title))
    print(textwrap.fill(lab.hints[i], width=WIDTH, initial_indent="  ", subsequent_indent="  "))


def cmd_hint(args):
    labs = load_labs()
    if args.lab is None:
        err("lab: which lab? ./lab hint N, N from %d to %d" % (labs[0].number, labs[-1].number))
        return USAGE
    lab = lab_arg(labs, args.lab)
    if lab is None:
        return USAGE
    seen = _load_seen()
    key = lab.nn
    if args.reset:
        seen.pop(key, None)
        _save_seen(seen)
        print("lab %d: hints reset; ./lab hint %d shows the first one again" % (lab.number,
                                                                                lab.number))
        return OK
    if not lab.hints:
        print("lab %d has no hints yet; read %s" % (lab.number, lab.lesson_file))
        return OK
    n = len(lab.hints)
    if args.all:
        for i in range(n):
            _print_hint(lab, i)
            print()
        seen[key] = n
        _save_seen(seen)
        return OK
    shown = min(seen.get(key, 0), n)
    if shown >= n:
        _print_hint(lab, n - 1)
        print()
        print("That was the last hint. ./lab hint %d --all shows them all again; "
              "%s, \"Classic mistakes\", lists what usually goes wrong."
              % (lab.number, lab.lesson_file))
        return OK
    _print_hint(lab, shown)
    seen[key] = shown + 1
    _save_seen(seen)
    print()
    if shown + 1 < n:
        print("(%d more; run ./lab hint %d again for the next one)" % (n - shown - 1, lab.number))
    else:
        print("(that was the last hint for lab %d)" % lab.number)
    return OK

