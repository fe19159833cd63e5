"""workspace.make_private_dir: the grader's output folders are private before any learner code runs."""
import os
import stat

from grader import workspace


def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_a_missing_output_folder_and_its_missing_parents_are_made_0700(tmp_path):
    out = tmp_path / "grades" / "week1"
    workspace.make_private_dir(str(out))
    assert mode(out) == 0o700 and mode(tmp_path / "grades") == 0o700


def test_an_existing_output_folder_loses_what_others_may_do(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o755)
    workspace.make_private_dir(str(out))
    assert mode(out) == 0o750
