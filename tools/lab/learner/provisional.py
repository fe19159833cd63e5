"""./lab grade in the learner's kit: a provisional scoreboard from the public
tests (the instructor's hidden tests decide the grade)."""
from labs import load_labs
from learner import files
from learner import i18n
from learner.bazel import Bazel
from learner.console import FAILED, OK, USAGE, WIDTH, display_width, err, pad, wrap
from learner.i18n import _, test_text
from learner.public_tests import remember, run_public_tests
from learner.results import bazel_complaint


def scoreboard_lines(rows, width=WIDTH):
    """The provisional scoreboard: rows are (lab, passed, total, message)."""
    # Columns, not characters: a Chinese title is twice as wide as it is long.
    tw = max([display_width(i18n.title(lab)) for lab, _, _, _ in rows] + [5])
    lines = wrap(_("Provisional scoreboard: the public tests only. It is not your "
                   "grade: your instructor grades with hidden tests that check more "
                   "(other shapes and seeds, bad arguments, numbers compared with "
                   "PyTorch), and those decide the grade."), min(width, 80), later="")
    lines.append("")
    passed = total = full = 0
    for lab, p, t, msg in rows:
        passed += p
        total += t
        full += bool(t) and p == t
        score = "%d/%d" % (p, t)
        head = "%s %-2d  %s  %7s" % (_("lab"), lab.number, pad(i18n.title(lab), tw), score)
        if t and p == t:
            lines.append(head + "  " + _("pass"))
            continue
        if not msg:
            lines.append(head)
            continue
        if display_width(head) + 2 + display_width(msg) <= width:
            lines.append(head + "  " + msg)
        else:
            lines.append(head)
            lines += wrap(msg, width, " " * 8)
    lines.append("")
    lines += wrap(_("public tests: %(passed)d/%(total)d pass; %(full)d of %(labs)d "
                    "labs pass all of theirs. Provisional: your instructor's hidden "
                    "tests decide the grade.")
                  % {"passed": passed, "total": total, "full": full, "labs": len(rows)},
                  width, later="")
    return lines


def cmd_provisional_grade(args):
    """./lab grade where the hidden tests are absent (the learner's kit)."""
    for opt in ("submission", "roster", "solutions", "csv", "gradescope", "prepare", "cumulative",
                "json", "out"):
        if getattr(args, opt, None):
            err(_("lab: this copy has no hidden tests or solutions, so it can only show the "
                  "provisional scoreboard of its own labs: run ./lab grade with no arguments "
                  "(instructors grade submissions in their repository)"))
            return USAGE
    labs = load_labs()
    err(_("running the public tests of every lab (the first build takes a few minutes)..."))
    with Bazel() as bz:
        results, rc, out = run_public_tests(labs, bz)
    if not any(r.total for r in results.values()) and rc not in (0, 3):
        err(_("lab grade: Bazel could not run the tests (exit %(rc)d): %(why)s")
            % {"rc": rc, "why": bazel_complaint(out) or _("see `bazel test //labs/...`")})
        return FAILED
    rows, states = [], []
    for lab in labs:
        r = results[lab.number]
        started = files.is_started(lab)
        states.append((lab, "passing" if r.all_pass else "failing" if started else "not started",
                       r if started else None))
        msg = test_text(r.detail)
        if not started and not r.passed:
            msg = _("not started")
        rows.append((lab, r.passed if not r.error else 0, r.total, msg))
    remember(states)
    for line in scoreboard_lines(rows):
        print(line)
    return OK

