#!/usr/bin/python3
"""Writes a made-up roster of submissions, for timing the grader and for the
class report.

    /usr/bin/python3 tools/perf/make_roster.py DIR [--n 100] [--seed 1]
    /usr/bin/python3 tools/perf/make_roster.py DIR --catalogue

Default (throughput): N submissions named student001..., each holding every
lab's learner file, each file either the reference solution or one of that
lab's mutants (tests/NN_name/mutants/*.diff applied to the solution). The
choice is drawn from a random generator seeded with --seed, so the same
command writes the same roster; no two submissions hold the same set of
files. Files repeat across submissions (there are only as many distinct
files as solutions plus mutants), as they do in a real class where many
learners reach the same correct file.

--unique: also append a comment naming the submission to every file, so
that no two files are the same and every one must be compiled (the worst
case, as in a real class where every learner's file differs).

--catalogue: one submission per mutant (mutant-NN-name, holding that lab's
file only), plus the hand-written learners of tools/perf/roster_sources
(alice, bob: a near-copy of alice's files, carol: an independent solution).
The class report of that roster must count every mutant's misconception and
flag alice and bob as similar, and no other pair.

DIR must not exist or be empty. Prints one line: what it wrote.
"""
import argparse
import os
import random
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
from checks import mutants as mutants_mod  # noqa: E402
from labs import load_labs  # noqa: E402

SOURCES = os.path.join(ROOT, "tools", "perf", "roster_sources")
SOLUTION_SHARE = 0.5   # the chance that a lab's file is the solution, not a mutant


def _write(roster, name, lab, data):
    path = os.path.join(roster, name, lab.learner_file)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _solutions(labs):
    out = {}
    for lab in labs:
        with open(os.path.join(ROOT, lab.solution_file), "rb") as f:
            out[lab.number] = f.read()
    return out


def _mutants_by_lab(labs):
    """{lab number: [Mutant]} of the mutants whose edit applies, in name order."""
    out = {lab.number: [] for lab in labs}
    for m in mutants_mod.load(labs):
        if m.source is None:
            print("make_roster: skipped %s: %s" % (m.label, m.error), file=sys.stderr)
            continue
        out[m.lab.number].append(m)
    return out


def choose(labs, mutants, n, seed, share=SOLUTION_SHARE):
    """N distinct choices: for each submission, {lab number: None (the solution)
    or the index of a mutant}. Deterministic for a given seed."""
    rng = random.Random(seed)
    seen, out = set(), []
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 100 * n:
            raise SystemExit("make_roster: cannot draw %d distinct submissions" % n)
        pick = {}
        for lab in labs:
            ms = mutants[lab.number]
            pick[lab.number] = None if (not ms or rng.random() < share) \
                else rng.randrange(len(ms))
        key = tuple(sorted(pick.items(), key=lambda kv: kv[0]))
        if key in seen:
            continue
        seen.add(key)
        out.append(pick)
    return out


def throughput_roster(roster, n, seed, unique=False):
    labs = load_labs()
    solutions = _solutions(labs)
    mutants = _mutants_by_lab(labs)
    picks = choose(labs, mutants, n, seed)
    distinct = set()
    used_mutants = 0
    for k, pick in enumerate(picks, 1):
        name = "student%03d" % k
        for lab in labs:
            i = pick[lab.number]
            data = solutions[lab.number] if i is None else mutants[lab.number][i].source
            used_mutants += i is not None
            if unique:
                data += b"\n// submitted by %s\n" % name.encode()
            distinct.add(data)
            _write(roster, name, lab, data)
    return ("wrote %d submissions of %d labs to %s: %d files are mutants, %d solutions; "
            "%d distinct files" % (n, len(labs), roster, used_mutants,
                                   n * len(labs) - used_mutants, len(distinct)))


def catalogue_roster(roster):
    labs = load_labs()
    by_target = {lab.target + ".cc": lab for lab in labs}
    count = 0
    for lab_mutants in _mutants_by_lab(labs).values():
        for m in lab_mutants:
            _write(roster, "mutant-%s-%s" % (m.lab.nn, m.name), m.lab, m.source)
            count += 1
    learners = sorted(d for d in os.listdir(SOURCES) if os.path.isdir(os.path.join(SOURCES, d)))
    for learner in learners:
        for fn in sorted(os.listdir(os.path.join(SOURCES, learner))):
            with open(os.path.join(SOURCES, learner, fn), "rb") as f:
                _write(roster, learner, by_target[fn], f.read())
    return "wrote %d mutant submissions and %d learners (%s) to %s" % (
        count, len(learners), ", ".join(learners), roster)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="where to write the roster (must not exist, or be empty)")
    ap.add_argument("--n", type=int, default=100, help="submissions (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="the draw (default 1)")
    ap.add_argument("--catalogue", action="store_true",
                    help="one submission per mutant, plus tools/perf/roster_sources")
    ap.add_argument("--unique", action="store_true",
                    help="make every file distinct (a comment naming the submission)")
    ap.add_argument("--force", action="store_true", help="replace DIR if it exists")
    args = ap.parse_args(argv)
    if os.path.exists(args.dir) and os.listdir(args.dir):
        if not args.force:
            raise SystemExit("make_roster: %s is not empty (use --force to replace it)" % args.dir)
        shutil.rmtree(args.dir)
    os.makedirs(args.dir, exist_ok=True)
    if args.catalogue:
        print(catalogue_roster(args.dir))
    else:
        print(throughput_roster(args.dir, args.n, args.seed, args.unique))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
