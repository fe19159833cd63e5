"""submission.collect and roster.read: what a submission directory yields."""
import os
import subprocess

import limits
from grader import roster, submission
from labs import load_labs

LABS = load_labs()
LAB1 = [l for l in LABS if l.number == 1][0]
LAB2 = [l for l in LABS if l.number == 2][0]


def write(path, data=b"// code\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def test_takes_a_learner_file_at_the_top(tmp_path):
    write(str(tmp_path / "split_heads.cc"), b"top")
    files, ignored, notes = submission.collect(str(tmp_path), LABS)
    assert files == {1: b"top"}
    assert ignored == [] and notes == []


def test_prefers_the_repository_path_over_other_copies(tmp_path):
    write(str(tmp_path / "split_heads.cc"), b"top")
    write(str(tmp_path / "labs" / "01_split_heads" / "split_heads.cc"), b"repo")
    files, ignored, _ = submission.collect(str(tmp_path), LABS)
    assert files[1] == b"repo"
    assert any("a second copy" in i for i in ignored)


def test_ignores_other_files_and_symlinks(tmp_path):
    write(str(tmp_path / "BUILD"))
    write(str(tmp_path / "real.cc"))
    os.symlink("/etc/passwd", str(tmp_path / "attention.cc"))
    files, ignored, _ = submission.collect(str(tmp_path), LABS)
    assert files == {}
    assert "BUILD" in ignored and "real.cc" in ignored
    assert "attention.cc (symlink)" in ignored


def test_ignores_an_oversized_learner_file(tmp_path):
    write(str(tmp_path / "attention.cc"), b"x" * (limits.SOURCE_BYTES + 1))
    files, ignored, _ = submission.collect(str(tmp_path), LABS)
    assert files == {}
    assert any("larger than" in i for i in ignored)


def test_survives_a_tree_deeper_than_python_recursion(tmp_path):
    p = str(tmp_path)
    for _ in range(1100):
        p = os.path.join(p, "d")
        os.mkdir(p)
    write(os.path.join(p, "split_heads.cc"))
    files, _, notes = submission.collect(str(tmp_path), LABS)
    # shutil.rmtree (pytest's clean-up) recurses once per level too.
    subprocess.run(["rm", "-rf", str(tmp_path / "d")], check=True)
    assert files == {}
    assert any("deeper than" in n for n in notes)


def test_stops_after_the_entry_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "SUBMISSION_ENTRIES", 5)
    for i in range(10):
        write(str(tmp_path / ("f%d.txt" % i)))
    _, _, notes = submission.collect(str(tmp_path), LABS)
    assert any("more than 5" in n for n in notes)


def test_shows_names_with_control_characters_escaped(tmp_path):
    write(str(tmp_path / "\x1b[31mred\x07.txt"))
    _, ignored, _ = submission.collect(str(tmp_path), LABS)
    assert ignored and all("\x1b" not in i and "\x07" not in i for i in ignored)


def test_roster_keeps_two_submissions_whose_names_print_the_same(tmp_path):
    os.mkdir(str(tmp_path / "a\x07"))
    os.mkdir(str(tmp_path / "a\x08"))
    entries, _ = roster.read(str(tmp_path))
    names = [e.label for e in entries]
    assert len(names) == 2 and len(set(names)) == 2
    assert all("\x07" not in n and "\x08" not in n for n in names)


def test_a_missing_directory_is_an_empty_submission_with_a_note(tmp_path):
    files, _, notes = submission.collect(str(tmp_path / "nope"), LABS)
    assert files == {} and "not a directory" in notes[0]
