#!/usr/bin/python3
"""Checks the class report of the catalogue roster (make_roster.py --catalogue).

    /usr/bin/python3 tools/perf/make_roster.py /tmp/catalogue --catalogue
    ./lab grade --roster /tmp/catalogue --out /tmp/catalogue-grades
    /usr/bin/python3 tools/perf/check_catalogue_report.py /tmp/catalogue-grades/report.json

For every mutant submission: is it counted under at least one named mistake
of its lab, and does one of the wordings it is counted under contain the
mutant's Expect words (the misconception as the tests name it)? And does the
similarity section list alice and bob, and no other pair? Prints one line per
mutant that is not counted under its Expect words, then the totals; exit
status 1 when a mutant is not counted at all or the pairs are wrong.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
import mutants as mutants_mod  # noqa: E402


def main(argv):
    with open(argv[0]) as f:
        data = json.load(f)
    klass = data["class"]
    counted = {}          # submission -> [wordings it is counted under]
    for lab in klass["labs"]:
        for m in lab["mistakes"]:
            for name in m["submissions"]:
                counted.setdefault(name, []).extend(m["wordings"])
    total = named = expect_found = 0
    for m in mutants_mod.load():
        if m.source is None:
            continue
        total += 1
        name = "mutant-%s-%s" % (m.lab.nn, m.name)
        words = counted.get(name, [])
        if words:
            named += 1
        if any(m.expect.lower() in w.lower() for w in words):
            expect_found += 1
        else:
            print("%-50s %s; Expect %r; counted under: %s" % (
                name, "counted" if words else "NOT COUNTED", m.expect,
                " | ".join(words) or "-"))
    pairs = [(p["lab"], p["a"], p["b"]) for p in klass["similarity"]["pairs"]]
    want = {("alice", "bob")}
    pairs_ok = {(a, b) for _, a, b in pairs} == want
    print("mutants counted under a named mistake: %d / %d" % (named, total))
    print("mutants counted under a wording that holds their Expect words: %d / %d"
          % (expect_found, total))
    print("similar pairs: %s (%s)" % (", ".join("lab %d %s-%s" % p for p in pairs) or "none",
                                      "as expected" if pairs_ok else "EXPECTED alice-bob only"))
    return 0 if named == total and pairs_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
