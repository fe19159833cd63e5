"""./lab grade --roster's outputs are made from data only (issue 29, deliverable 6):
learner-made names and messages can neither overwrite another learner's
folder, nor put a formula in the gradebook, nor name a mistake in the class
report, nor stop the roster. With fakes (grading_fakes.py): no root, no Bazel."""
import argparse
import csv
import json
import os

import pytest

from grader import instructor
from grader import roster
from grading_fakes import TESTS, make_grading, passing_source
from reports import class_report
from reports import report

# A learner's exception message worded like a test's own named mistake
# ("<words>; see docs/..."), with one byte that is not UTF-8.
OWN_WORDS = b"heads dealt in turn instead of in blocks \xff; see docs/01_alpha.md"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def grade_roster(workdir, folders):
    """Grades a roster of `folders` ({bytes name: lab 1 source}); returns
    (exit status, output folder, roster report)."""
    g = make_grading(workdir)
    roster = os.path.join(str(workdir), "roster")
    for name, source in folders.items():
        write(os.path.join(roster.encode(), name, b"alpha.cc"), source)
    out = os.path.join(str(workdir), "out")
    args = argparse.Namespace(roster=roster, out=out, gradescope=None, csv=None, json=None,
                              similarity_threshold=0)
    status = instructor._grade_roster(g, args, "isolated")
    with open(os.path.join(out, "report.json")) as f:
        return status, out, json.load(f)


def folders_by(out, field):
    """{the report's `field`: its output folder} over a graded roster's folders."""
    found = {}
    for folder in os.listdir(out):
        path = os.path.join(out, folder, "report.json")
        if os.path.exists(path):
            with open(path) as f:
                found[json.load(f)[field]] = folder
    return found


def test_names_that_clean_to_one_folder_get_distinct_folders_and_keep_their_marks(workdir):
    status, out, data = grade_roster(workdir, {b"bob smith": passing_source(1),
                                               b"bob_smith": b"// nothing\n"})
    assert status == 0
    seen = folders_by(out, "submission")
    assert set(seen) == {"bob smith", "bob_smith"}
    assert seen["bob_smith"] == "bob_smith" and seen["bob smith"].startswith("bob_smith-")
    by = {s["submission"]: s["points"] for s in data["submissions"]}
    assert by == {"bob smith": 2 * len(TESTS[1]), "bob_smith": 0}


def test_folder_names_are_distinct_whatever_the_names():
    names = ["bob smith", "bob_smith", "Bob_Smith", "bob?smith", "..", ".", "", "bob_smith-2",
             "caf\udcff", "caf\udcfe"]
    folders = roster.folder_names(names)
    assert len({f.lower() for f in folders.values()}) == len(names)
    assert all(f not in (".", "..") and "/" not in f for f in folders.values())


def test_three_learners_whose_names_print_alike_get_three_rows_with_their_own_grades(workdir):
    # The roster: "alice", "alice " (a trailing space) and a third
    # folder really named "alice (2)", the name the old grader gave the second.
    status, out, data = grade_roster(workdir, {b"alice": passing_source(1),
                                               b"alice ": b"PASS A.Shape\n",
                                               b"alice (2)": b"// nothing\n"})
    assert status == 0
    by_id = {s["submission_id"]: s for s in data["submissions"]}
    assert {k: v["points"] for k, v in by_id.items()} == {
        "alice": 2 * len(TESTS[1]), "alice\\x20": 2, "alice (2)": 0}
    labels = [s["submission"] for s in data["submissions"]]
    assert len(set(labels)) == 3 and "alice (2)" in labels
    twins = [l for l in labels if l != "alice (2)"]
    assert all(l.startswith("alice [2 folders print alike") for l in twins)
    with open(os.path.join(out, "gradebook.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    assert sorted(r[0] for r in rows) == sorted(labels)
    folders = folders_by(out, "submission_id")
    assert folders["alice"] == "alice" and folders["alice (2)"] != folders["alice\\x20"]
    assert len(set(folders.values())) == 3


def test_labels_stay_distinct_when_a_name_is_chosen_to_look_like_anothers_label():
    forged = 'alice [2 folders print alike; this one is "alice\\x20"]'
    ids = ["alice", "alice ", forged, "caf\udcff", "caf\udcfe"]
    labels = roster.labels(ids)
    assert len(set(labels.values())) == len(ids)
    assert labels["caf\udcff"] != labels["caf\udcfe"] and "\\xff" in labels["caf\udcff"]


def test_a_name_with_an_invisible_character_prints_alike_and_shows_its_bytes():
    # A zero-width space, a soft hyphen, a byte-order mark: "bob" twice on screen.
    ids = ["bob", "bob\u200b", "bob\u00ad", "bob\ufeff"]
    labels = roster.labels(ids)
    assert all(l.startswith("bob [4 folders print alike") for l in labels.values())
    assert '"bob\\xe2\\x80\\x8b"]' in labels["bob\u200b"]


def test_a_name_with_a_lookalike_letter_of_another_script_prints_alike():
    labels = roster.labels(["bob", "B\u043eb", "alice", "aIice", "carol"])
    assert "print alike" in labels["B\u043eb"] and "print alike" in labels["bob"]
    assert "print alike" in labels["aIice"] and labels["carol"] == "carol"


def test_a_name_forged_to_look_like_a_decorated_label_shows_its_own_name():
    forged = '\u0430lice [3 folders print alike; this one is "alice\\x20"]'
    labels = roster.labels(["alice", "alice ", forged])
    assert labels[forged].endswith('[its folder is "\\xd0\\xb0lice [3 folders print alike; '
                                   'this one is \\x22alice\\x5cx20\\x22]"]')


def test_names_that_look_alike_only_once_decorated_are_not_refused():
    labels = roster.labels(["bob1", "bobl"])
    assert len(set(labels.values())) == 2


def test_a_roster_whose_entries_cannot_be_told_apart_is_refused_naming_them(workdir):
    with pytest.raises(roster.RosterError, match='"alice" and "alice"'):
        roster.entries(str(workdir), ["alice", "alice"])


def test_a_name_that_is_a_formula_is_text_in_the_gradebook(workdir):
    _, out, _ = grade_roster(workdir, {b"=2+5": b"// nothing\n", b"@SUM(A1)": b"x\n",
                                       b"-1+cmd": b"x\n", b"plain": b"x\n"})
    with open(os.path.join(out, "gradebook.csv"), newline="") as f:
        rows = list(csv.reader(f))
    names = sorted(r[0] for r in rows[1:])
    assert names == ["'-1+cmd", "'=2+5", "'@SUM(A1)", "plain"]
    for row in rows:
        assert not any(c[:1] in ("=", "+", "@", "\t", "\r") for c in row)


def test_a_cell_is_neutralised_only_when_a_spreadsheet_would_evaluate_it():
    assert report.csv_cell("=HYPERLINK(\"x\")") == "'=HYPERLINK(\"x\")"
    assert report.csv_cell("\tx") == "'\tx" and report.csv_cell("\rx") == "'\rx"
    assert report.csv_cell("-3.5") == "-3.5" and report.csv_cell("alice") == "alice"
    assert report.csv_cell(12) == 12


def test_a_folder_name_and_a_message_that_are_not_utf8_stop_nothing(workdir):
    status, out, data = grade_roster(workdir, {
        b"caf\xff": passing_source(1),
        b"carol": b"PASS A.Shape\nSAY A.Values " + OWN_WORDS + b"\n"})
    assert status == 0
    by = {s["submission"]: s for s in data["submissions"]}
    assert set(by) == {"caf\ufffd", "carol"}
    assert by["caf\ufffd"]["points"] == 2 * len(TESTS[1])
    lab1 = by["carol"]["labs"][0]
    # Its verdicts are kept: the lab is graded, one test passed, the message carried.
    assert lab1["status"] == "graded" and lab1["passed"] == 1
    failed = [t for t in lab1["tests"] if not t["passed"]][0]
    assert "heads dealt in turn" in failed["message"] and "\ufffd" in failed["message"]
    assert os.path.exists(os.path.join(out, "html", "index.html"))
    with open(os.path.join(out, "gradebook.csv"), encoding="utf-8") as f:
        assert "caf\ufffd" in f.read()


def test_the_class_report_names_no_mistake_from_a_learners_own_words(workdir):
    _, _, data = grade_roster(workdir, {
        b"carol": b"SAY A.Values " + OWN_WORDS + b"\nSAY A.Shape " + OWN_WORDS + b"\n",
        b"dave": b"PASS A.Shape\n"})
    lab1 = data["class"]["labs"][0]
    assert lab1["mistakes"] == []
    assert sorted(lab1["failed_without_a_named_mistake"]) == ["carol", "dave"]


def test_a_mistake_is_counted_from_the_structured_field_only():
    field = {"name": "interleaved", "words": "columns dealt to heads in turn", "doc": ""}
    lab = {"status": "graded", "tests": [
        {"name": "A", "passed": False, "message": "x y z words; see docs/01_alpha.md"},
        {"name": "B", "passed": False, "message": "but the call returned normally"},
        {"name": "C", "passed": False, "message": "anything", "mistake": field}]}
    assert class_report.lab_diagnoses(lab) == {
        "columns dealt to heads in turn": ["columns dealt to heads in turn"]}
