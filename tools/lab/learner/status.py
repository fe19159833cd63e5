"""./lab status: each lab not started / failing (and why) / passing, and the next one.

A lab is "not started" while its file is byte for byte the stub (the sha256
recorded in labs/labs.json), whatever git says: committing your work does not
reset it. The started labs' public tests run in one Bazel invocation.
"""
from labs import load_labs
from learner import files
from learner import i18n
from learner.bazel import Bazel
from learner.console import OK, WIDTH, after, display_width, err, pad, wrap
from learner.i18n import N_, _, ngettext
from learner.public_tests import lab_states, next_lab
from learner.results import count_text, shown


# A lab's state, as data (public_tests.lab_states) and as printed.
STATES = {"not started": N_("not started"), "failing": N_("failing"), "passing": N_("passing")}


def status_lines(states, labs, width=WIDTH):
    """The text of ./lab status (without the "next:" line)."""
    state_of = {lab.number: state for lab, state, _ in states}
    # Columns, not characters: a Chinese title is twice as wide as it is long.
    tw = max(display_width(i18n.title(lab)) for lab in labs)
    lines = []
    for lab, state, r in states:
        head = "%s %-2d  %s  %s" % (_("lab"), lab.number, pad(i18n.title(lab), tw),
                                    _(STATES[state]))
        if r is not None and state == "failing" and count_text(r) and not r.error:
            head = after(head, count_text(r), ": ", "：")
        lines.append(head.rstrip())
        indent = " " * 8
        if r is not None and state == "passing":
            for w in r.warnings[:1]:
                lines += wrap(w, width, indent)
            continue
        if r is None:
            continue
        behind = [_("lab %(n)d (%(state)s)") % {"n": d.number,
                                                 "state": _(STATES[state_of[d.number]])}
                  for d in files.builds_on(lab, labs) if state_of.get(d.number) != "passing"]
        detail = shown(r.detail)
        if detail and not r.error:
            detail = _("first failure: %s") % detail
        if behind:
            detail = _("builds on %(labs)s; %(detail)s") % {"labs": ", ".join(behind),
                                                            "detail": detail}
        for text in [detail] + r.notes + r.warnings[:1]:
            if text:
                lines += wrap(text, width, indent)
        if len(r.warnings) > 1:
            more = len(r.warnings) - 1
            lines.append(indent + ngettext("(%(n)d more warning about %(file)s)",
                                           "(%(n)d more warnings about %(file)s)", more)
                         % {"n": more, "file": lab.learner_file})
    return lines


def next_line(lab):
    return _("next: lab %(n)d — %(title)s — bazel test %(target)s") % {
        "n": lab.number, "title": i18n.title(lab), "target": lab.public_tests}


def cmd_status(args):
    labs = load_labs()
    started = [lab for lab in labs if files.is_started(lab)]
    if started:
        err(ngettext("running the public tests of lab %s (the first build takes a few "
                     "minutes)...",
                     "running the public tests of labs %s (the first build takes a few "
                     "minutes)...", len(started)) % ", ".join(str(l.number) for l in started))
    with Bazel() as bz:
        states = lab_states(labs, bz)
    for line in status_lines(states, labs):
        print(line)
    nxt = next_lab(states)
    print()
    if nxt is None:
        print(_("every lab passes its public tests; ./lab grade shows the provisional "
                "scoreboard."))
    else:
        print(next_line(nxt))
    return OK

