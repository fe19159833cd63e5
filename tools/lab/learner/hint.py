"""./lab hint N: the next hint for lab N, gentle first (--all: every hint;
--reset: start over). Hints seen are remembered in .cache/hints.json."""

from labs import load_labs
from learner import files, i18n
from learner.console import OK, USAGE, WIDTH, err, lab_arg, wrap
from learner.i18n import _


def _load_seen():
    data = files.load_json(files.HINTS_STATE)
    try:
        return {str(k): int(v) for k, v in data.get("seen", {}).items()}
    except (AttributeError, TypeError, ValueError):
        return {}


def _save_seen(seen):
    files.save_json(files.HINTS_STATE, {"seen": seen})


def _print_hint(lab, hints, i):
    print(_("Hint %(i)d of %(n)d for lab %(lab)d (%(title)s):")
          % {"i": i + 1, "n": len(hints), "lab": lab.number, "title": i18n.title(lab)})
    print("\n".join(wrap(hints[i], WIDTH, "  ", later="  ")))


def cmd_hint(args):
    labs = load_labs()
    if args.lab is None:
        err(_("lab: which lab? ./lab hint N, N from %(first)d to %(last)d")
            % {"first": labs[0].number, "last": labs[-1].number})
        return USAGE
    lab = lab_arg(labs, args.lab)
    if lab is None:
        return USAGE
    seen = _load_seen()
    key = lab.nn
    if args.reset:
        seen.pop(key, None)
        _save_seen(seen)
        print(_("lab %(n)d: hints reset; ./lab hint %(n)d shows the first one again")
              % {"n": lab.number})
        return OK
    # The hints in the learner's language where they are translated (the
    # English paragraph where a translation is not current: po4a).
    hints = i18n.read_hints(i18n.hints_path(lab.dir, lab.root)) if i18n.lang() else lab.hints
    if len(hints) != len(lab.hints):
        hints = lab.hints
    lesson = i18n.page(lab.lesson_file)
    if not hints:
        print(_("lab %(n)d has no hints yet; read %(lesson)s") % {"n": lab.number,
                                                                  "lesson": lesson})
        return OK
    n = len(hints)
    if args.all:
        for i in range(n):
            _print_hint(lab, hints, i)
            print()
        seen[key] = n
        _save_seen(seen)
        return OK
    shown = min(seen.get(key, 0), n)
    if shown >= n:
        _print_hint(lab, hints, n - 1)
        print()
        print(_("That was the last hint. ./lab hint %(n)d --all shows them all again; "
                "%(lesson)s, \"Classic mistakes\", lists what usually goes wrong.")
              % {"n": lab.number, "lesson": lesson})
        return OK
    _print_hint(lab, hints, shown)
    seen[key] = shown + 1
    _save_seen(seen)
    print()
    if shown + 1 < n:
        print(_("(%(more)d more; run ./lab hint %(n)d again for the next one)")
              % {"more": n - shown - 1, "n": lab.number})
    else:
        print(_("(that was the last hint for lab %d)") % lab.number)
    return OK

