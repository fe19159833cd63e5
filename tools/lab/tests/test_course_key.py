"""course_key: the secret behind the fresh inputs, owned by the instructor, the
same on every machine (issue 39, deliverable 3)."""
import os
import stat

import pytest

from grader import course_key
from grader.course_key import CourseKey, CourseKeyError


def test_a_new_key_is_private_and_loads_back_with_the_same_fingerprint(workdir):
    path = str(workdir / "course.key")
    made = course_key.new(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = course_key.load(path)
    assert again.secret == made.secret and again.fingerprint == made.fingerprint
    assert made.secret.hex() not in made.fingerprint


def test_an_existing_key_is_never_overwritten(workdir):
    path = str(workdir / "course.key")
    first = course_key.new(path)
    with pytest.raises(CourseKeyError, match="exists already"):
        course_key.new(path)
    assert course_key.load(path).secret == first.secret


def test_a_file_that_is_not_a_key_is_refused_naming_it_and_the_format(workdir):
    path = str(workdir / "notes.txt")
    with open(path, "w") as f:
        f.write("mha-course-key 1\nnot hex\n")
    with pytest.raises(CourseKeyError, match="notes.txt is not a course key.*64 hexadecimal"):
        course_key.load(path)
    with pytest.raises(CourseKeyError, match="no such file.*course-key new"):
        course_key.load(str(workdir / "missing.key"))


def test_the_seed_is_the_same_for_the_same_key_and_files_and_moves_with_either():
    key = CourseKey(b"\x01" * 32)
    seed = key.fresh_seed("01_split_heads", "isolated", [b"file"])
    assert seed == CourseKey(b"\x01" * 32).fresh_seed("01_split_heads", "isolated", [b"file"])
    assert seed != CourseKey(b"\x02" * 32).fresh_seed("01_split_heads", "isolated", [b"file"])
    assert seed != key.fresh_seed("01_split_heads", "isolated", [b"file "])
    assert seed != key.fresh_seed("01_split_heads", "cumulative", [b"file"])
    assert seed != key.fresh_seed("02_batched_attention", "isolated", [b"file"])


def test_without_a_key_the_default_is_made_once_and_said_where(workdir, monkeypatch):
    default = str(workdir / "course.key")
    monkeypatch.setattr(course_key, "DEFAULT", default)
    monkeypatch.delenv(course_key.ENV, raising=False)
    said = []
    first = course_key.resolve(None, said.append)
    assert first.path == default and default in said[0] and first.fingerprint in said[0]
    said.clear()
    assert course_key.resolve(None, said.append).secret == first.secret and not said


def test_the_environment_names_a_key_when_no_option_does(workdir, monkeypatch):
    path = str(workdir / "elsewhere.key")
    made = course_key.new(path)
    monkeypatch.setenv(course_key.ENV, path)
    assert course_key.resolve(None).secret == made.secret
    other = course_key.new(str(workdir / "option.key"))
    assert course_key.resolve(other.path).secret == other.secret


def test_two_reports_graded_with_another_key_or_suite_say_so():
    a = {"course_key": "aaaa", "suite": "s1"}
    assert course_key.difference(a, dict(a)) == ""
    said = course_key.difference(a, {"course_key": "bbbb", "suite": "s1"})
    assert "with course key aaaa; this grading uses course key bbbb" in said
    assert "suite" not in said
    said = course_key.difference(a, {"course_key": "aaaa", "suite": "s2"})
    assert "with suite s1; this grading uses suite s2" in said
