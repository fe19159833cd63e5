#!/usr/bin/python3
"""Times the grader on a roster: `./lab grade --roster` on N made-up submissions.

    /usr/bin/python3 tools/perf/roster_timing.py [--n 20] [--seed 1]

Works on a snapshot of the suite under $TMPDIR (its own grading workspace and
Bazel output base, so it never touches this checkout's .cache/grade). Each
made-up submission has all seven learner files, each one, at random, the
reference solution (60%), one of the lab's mutants (25%: tests/NN/mutants/)
or the untouched stub (15%), with a line naming the submission appended so
that no two submissions share a file: every learner file must be compiled,
the worst case for the shared cache. Then it runs

  ./lab grade --prepare          once: the reference build, warm caches
  ./lab grade --roster DIR       the N submissions, one after another

and prints the time of each, the median per submission and the roster of
100 extrapolated from it (target: <= 25 minutes on a 2-core machine).
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
from labs import load_labs  # noqa: E402


def snapshot(dst):
    subprocess.run("tar --exclude=./bazel-* --exclude=./.cache --exclude=./out -cf - . "
                   "| (cd '%s' && tar xf -)" % dst, shell=True, cwd=ROOT, check=True)


def make_roster(suite, roster, n, seed):
    rng = random.Random(seed)
    labs = load_labs(suite)
    kinds = {}
    for k in range(1, n + 1):
        name = "student%03d" % k
        for lab in labs:
            mutants = sorted(os.listdir(os.path.join(suite, "tests", lab.dir, "mutants"))) \
                if os.path.isdir(os.path.join(suite, "tests", lab.dir, "mutants")) else []
            r = rng.random()
            if r < 0.60 or not mutants:
                src, kind = os.path.join(suite, lab.solution_file), "solution"
            elif r < 0.85:
                m = rng.choice(mutants)
                src, kind = os.path.join(suite, "tests", lab.dir, "mutants", m), "mutant"
            else:
                src, kind = os.path.join(suite, lab.learner_file), "stub"
            kinds[kind] = kinds.get(kind, 0) + 1
            dst = os.path.join(roster, name, lab.learner_file)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(src, "rb") as f:
                text = f.read()
            with open(dst, "wb") as f:
                f.write(text + b"\n// submitted by %s\n" % name.encode())
    return kinds


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20, help="submissions in the roster (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the snapshot and roster")
    args = ap.parse_args(argv)

    work = tempfile.mkdtemp(prefix="mha_roster_")
    suite = os.path.join(work, "suite")
    roster = os.path.join(work, "roster")
    os.makedirs(suite)
    snapshot(suite)
    kinds = make_roster(suite, roster, args.n, args.seed)
    print("roster: %d submissions in %s (learner files: %s)"
          % (args.n, roster, ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items()))))
    lab = ["/usr/bin/python3", os.path.join(suite, "tools", "lab", "main.py"), "grade"]
    env = dict(os.environ, MHA_SETUP_FLAGS="")
    env.pop("MHA_GRADE_CACHE", None)  # the snapshot's own .cache/grade
    try:
        t0 = time.time()
        p = subprocess.run(lab + ["--prepare"], cwd=suite, env=env, text=True,
                           capture_output=True)
        prepare_s = time.time() - t0
        if p.returncode not in (0, 2):
            print(p.stdout[-3000:], p.stderr[-3000:])
            raise SystemExit("roster: ./lab grade --prepare failed (exit %d)" % p.returncode)
        print("roster: ./lab grade --prepare took %.0f s (once per machine and suite version)"
              % prepare_s)
        sys.stdout.flush()
        t0 = time.time()
        p = subprocess.Popen(lab + ["--roster", roster, "--out", os.path.join(work, "grades")],
                             cwd=suite, env=env, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        per = []
        for line in p.stdout:
            sys.stdout.write("  " + line)
            sys.stdout.flush()
            m = re.match(r"\[\d+/\d+\] .*\((\d+) s\)\s*$", line)
            if m:
                per.append(float(m.group(1)))
        p.wait()
        total_s = time.time() - t0
        if p.returncode not in (0, 2) or len(per) != args.n:
            raise SystemExit("roster: ./lab grade --roster failed (exit %d, %d of %d graded)"
                             % (p.returncode, len(per), args.n))
        mean = total_s / args.n
        med = statistics.median(per)
        print("roster: %d submissions in %.0f s: %.1f s per submission (mean, wall), "
              "median %.0f s, min %.0f s, max %.0f s"
              % (args.n, total_s, mean, med, min(per), max(per)))
        print("roster: 100 submissions: about %.1f min (100 x %.1f s; plus %.0f s of --prepare "
              "once) - target <= 25 min: %s"
              % (100 * mean / 60, mean, prepare_s, "met" if 100 * mean <= 25 * 60 else "NOT met"))
        print("roster: load average %s" % " ".join("%.1f" % l for l in os.getloadavg()))
    finally:
        # Stop the snapshot's Bazel server(s), then remove everything.
        for ob in [os.path.join(suite, ".cache", "grade", d) for d in ("output_base", "ob")]:
            if os.path.isdir(ob):
                subprocess.run(["bazel", "--output_base=" + ob, "shutdown"], cwd=suite,
                               capture_output=True)
        if not args.keep:
            subprocess.run(["chmod", "-R", "u+w", work], capture_output=True)
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("roster: kept " + work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
