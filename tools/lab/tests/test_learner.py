"""Unit tests of the learner package (tools/lab/learner/): stub recognition,
the text of status, of the provisional scoreboard and of the kit's help, the
command line, Bazel's server, and one public-test run.

Run: /usr/bin/python3 -m pytest tools/lab/tests
"""
import hashlib
import os
import re
import subprocess
import sys
import types

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import main  # noqa: E402
from labs import Lab, load_labs  # noqa: E402
from learner import bazel, cli, console, files, hint, provisional, public_tests  # noqa: E402
from learner import results, status, watch  # noqa: E402
from test_learner_results import WSHADOW  # noqa: E402


def _lab(number=1, stub=b"", title="Split and combine heads"):
    return Lab({"number": number, "dir": "%02d_split_heads" % number, "target": "split_heads",
                "title": title, "stub_sha256": hashlib.sha256(stub).hexdigest()})


# --------------------------------------------------------------------------- stubs

STUB = (b'Tensor3 split_heads() {\n'
        b'  throw std::logic_error("lab 1: split_heads is not implemented yet");\n}\n')


def _put(root, lab, data):
    p = os.path.join(root, lab.learner_file)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


def test_the_untouched_stub_is_not_started(tmp_path):
    lab = _lab(stub=STUB)
    _put(str(tmp_path), lab, STUB)
    assert lab.file_is_stub(str(tmp_path))
    assert not files.is_started(lab, str(tmp_path))


def test_an_edited_file_is_started(tmp_path):
    lab = _lab(stub=STUB)
    _put(str(tmp_path), lab, STUB + b"// my notes\n")
    assert files.is_started(lab, str(tmp_path))


def test_committed_work_is_still_started(tmp_path):
    # The old bug: the stub was taken from git HEAD, so committed work looked
    # like the stub.
    root = str(tmp_path)
    lab = _lab(stub=STUB)
    _put(root, lab, b"Tensor3 split_heads() { return {}; }\n")
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(["git", "-C", root, "add", "-A"], check=True)
    subprocess.run(["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                    "-qm", "my work"], check=True)
    assert files.is_started(lab, root)


def test_a_missing_file_is_not_the_stub(tmp_path):
    assert files.is_started(_lab(stub=STUB), str(tmp_path))


def test_every_lab_of_this_checkout_is_recognised_as_its_stub():
    for lab in load_labs():
        assert lab.file_is_stub(), lab.learner_file


# --------------------------------------------------------------------------- what is printed

def test_the_provisional_scoreboard_says_it_is_not_the_grade():
    a, b, c = _lab(1, title="Split"), _lab(2, title="Attention"), _lab(3, title="Layer")
    lines = provisional.scoreboard_lines([(a, 8, 8, ""), (b, 3, 20, "T.X: looks like no scale"),
                                      (c, 0, 10, "does not compile: x.cc:3: error: y")], width=100)
    text = "\n".join(lines)
    assert "not your grade" in text and "hidden tests" in text
    assert [l for l in lines if l.startswith("lab ")] == [
        "lab 1   Split          8/8  pass",
        "lab 2   Attention     3/20  T.X: looks like no scale",
        "lab 3   Layer         0/10  does not compile: x.cc:3: error: y"]
    assert lines[-2].startswith("public tests: 11/38 pass; 1 of 3 labs pass all of theirs.")
    assert "hidden tests decide the grade" in " ".join(lines[-2:])


def test_a_long_message_goes_on_its_own_lines():
    a = _lab(1, title="Split")
    lines = provisional.scoreboard_lines([(a, 0, 8, "word " * 40)], width=60)
    row = lines.index("lab 1   Split      0/8")
    assert all(len(l) <= 60 for l in lines[row:row + 4])
    assert lines[row + 1].startswith(" " * 8 + "word")


def test_status_lines_say_what_fails_and_what_a_lab_builds_on(monkeypatch):
    a, b = _lab(1, title="Split"), _lab(2, title="Attention")
    r = results.LabResult(b)
    r.passed, r.total, r.first = 3, 9, "T.X: looks like no scale"
    r.warnings = ["x.cc:3: warning: unused parameter 'q' [-Wunused-parameter]"]
    monkeypatch.setattr(files, "builds_on", lambda lab, labs, root=None: [a] if lab is b else [])
    lines = status.status_lines([(a, "not started", None), (b, "failing", r)], [a, b])
    assert lines == [
        "lab 1   Split      not started",
        "lab 2   Attention  failing: 3/9 public tests pass",
        "        builds on lab 1 (not started); first failure: T.X: looks like no scale",
        "        x.cc:3: warning: unused parameter 'q' [-Wunused-parameter]"]


def test_the_kit_help_lists_exactly_the_learner_commands():
    text = cli.help_text(load_labs())
    assert re.findall(r"^\s+\./lab (\w+)", text, re.M) == ["status", "watch", "hint", "read",
                                                           "quiz", "grade", "help"]


def test_a_bad_lab_number_is_a_usage_error(capsys):
    assert cli.main(["hint", "99"]) == console.USAGE
    assert "there is no lab '99'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert e.value.code == console.USAGE


def test_the_instructors_parser_has_the_learners_commands_as_the_kit_has_them(capsys):
    labs = load_labs()
    for argv in (["status"], ["watch"], ["watch", "2"], ["hint"], ["hint", "3", "--all"]):
        args = main.instructors_parser(labs).parse_args(argv)
        assert args.func is {"status": status.cmd_status, "watch": watch.cmd_watch,
                             "hint": hint.cmd_hint}[argv[0]]
    # hint without a lab: the same clear message and status in both.
    assert main.instructors_parser(labs).parse_args(["hint"]).lab is None
    assert cli.main(["hint"]) == console.USAGE
    assert "which lab?" in capsys.readouterr().err


def test_grade_with_instructor_arguments_is_refused_in_the_kit(capsys):
    args = types.SimpleNamespace(submission="sub", roster=None)
    assert provisional.cmd_provisional_grade(args) == console.USAGE
    assert "provisional scoreboard" in capsys.readouterr().err


def test_watch_without_inotifywait_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(watch.shutil, "which", lambda name: None)
    assert watch.cmd_watch(types.SimpleNamespace(lab="1")) == console.FAILED
    assert "inotifywait is not installed" in capsys.readouterr().err


# --------------------------------------------------------------------------- Bazel's server

def test_the_output_base_is_bazels_md5_of_the_workspace(tmp_path):
    root = str(tmp_path)
    expected = hashlib.md5(os.path.realpath(root).encode()).hexdigest()
    base = bazel.output_base(["--output_user_root=/x"], root)
    assert base == "/x/" + expected
    assert bazel.output_base(["--output_base=/y"], root) == "/y"


def test_no_pid_file_means_no_server(tmp_path):
    assert bazel.server_pid(str(tmp_path)) is None
    os.makedirs(os.path.join(str(tmp_path), "server"))
    with open(os.path.join(str(tmp_path), "server", "server.pid.txt"), "w") as f:
        f.write(str(os.getpid()))      # alive, but not a server of this output base
    assert bazel.server_pid(str(tmp_path)) is None


def test_a_test_run_reads_the_registry_and_the_warnings_cache_once(tmp_path, monkeypatch):
    calls = {"load_labs": 0, "load_json": 0, "hashed": []}
    real_load_labs, real_load_json, real_hash = (public_tests.load_labs, files.load_json,
                                                 files.sha256_file)

    def load_labs_counted(*a, **k):
        calls["load_labs"] += 1
        return real_load_labs(*a, **k)

    def load_json_counted(*a, **k):
        calls["load_json"] += 1
        return real_load_json(*a, **k)

    monkeypatch.setattr(public_tests, "load_labs", load_labs_counted)
    monkeypatch.setattr(files, "load_json", load_json_counted)
    monkeypatch.setattr(files, "sha256_file", lambda p: calls["hashed"].append(p) or real_hash(p))
    monkeypatch.setattr(files, "WARNINGS_STATE", str(tmp_path / "warnings.json"))
    fake_bazel = types.SimpleNamespace(run=lambda args, stdout_only=False, **kw: (1, WSHADOW))
    labs = real_load_labs()
    results, rc, _ = public_tests.run_public_tests(labs, fake_bazel)
    assert rc == 1 and set(results) == {lab.number for lab in labs}
    assert calls["load_labs"] == 1 and calls["load_json"] == 1
    assert len(calls["hashed"]) == len(set(calls["hashed"])) == len(labs)


