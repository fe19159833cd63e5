"""consistency (the registry check) and newlab (./lab new), on throwaway trees."""
import hashlib
import os
import shutil

from checks import consistency
from course import newlab
from labs import ROOT, load_labs


def make_tree(tmp_path):
    """A copy of the registry, README and the files the check looks at."""
    root = str(tmp_path / "suite")
    labs = load_labs()
    for lab in labs:
        for rel in consistency.expected_files(lab):
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), dst)
    for rel in ("labs/labs.json", "README.md"):
        shutil.copy(os.path.join(ROOT, rel), os.path.join(root, rel))
    return root


def test_the_repository_passes_the_registry_check():
    assert consistency.problems() == []


def test_a_missing_lesson_is_found(tmp_path):
    root = make_tree(tmp_path)
    os.remove(os.path.join(root, "docs", "02_batched_attention.md"))
    assert any("docs/02_batched_attention.md is missing" in p for p in consistency.problems(root=root))


def test_an_unregistered_lab_folder_is_found(tmp_path):
    root = make_tree(tmp_path)
    os.makedirs(os.path.join(root, "tests", "42_stray"))
    assert any("tests/42_stray" in p for p in consistency.problems(root=root))


def test_an_edited_stub_is_found(tmp_path):
    root = make_tree(tmp_path)
    with open(os.path.join(root, "labs", "01_split_heads", "split_heads.cc"), "a") as f:
        f.write("// edited\n")
    assert any("is not the stub" in p for p in consistency.problems(root=root))


def test_new_lab_writes_its_mirrored_folders_registry_line_and_readme_row(tmp_path):
    root = make_tree(tmp_path)
    n = len(load_labs()) + 1
    written = newlab.create("%02d_rotary" % n, "Rotary position embeddings", root=root)
    assert "labs/%02d_rotary/rotary.cc" % n in written
    labs = load_labs(root)
    assert labs[-1].number == n and labs[-1].target == "rotary"
    with open(os.path.join(root, "labs", "%02d_rotary" % n, "rotary.cc"), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == labs[-1].stub_sha256
    assert consistency.problems(root=root) == []


def test_new_lab_refuses_a_number_out_of_order(tmp_path):
    root = make_tree(tmp_path)
    try:
        newlab.create("42_late", "Late", root=root)
    except ValueError as e:
        assert "the next lab is number" in str(e)
    else:
        raise AssertionError("no error")


def test_new_labs_mutant_applies_to_its_solution(tmp_path):
    from checks import mutants
    root = make_tree(tmp_path)
    n = len(load_labs()) + 1
    newlab.create("%02d_rotary" % n, "Rotary", root=root)
    lab = load_labs(root)[-1]
    with open(os.path.join(root, "tests", lab.dir, "mutants", "doubled_twice.diff")) as f:
        m = mutants.Mutant(lab, "x.diff", f.read())
    with open(os.path.join(root, lab.solution_file), "rb") as f:
        assert b"x * 4.0f" in mutants.apply(m, f.read())


def test_a_lab_recognises_its_stub_by_the_registrys_sha256():
    from labs import Lab, sha256
    assert sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()
    lab = Lab({"number": 1, "dir": "01_x", "target": "x", "title": "X",
               "stub_sha256": sha256(b"stub\n")})
    assert lab.is_stub(b"stub\n")
    assert not lab.is_stub(b"stub \n")
    unrecorded = Lab({"number": 1, "dir": "01_x", "target": "x", "title": "X"})
    assert not unrecorded.is_stub(b"stub\n") and not unrecorded.is_stub(b"")


def test_every_committed_stub_is_recognised():
    for lab in load_labs():
        with open(os.path.join(ROOT, lab.learner_file), "rb") as f:
            assert lab.is_stub(f.read()), lab.learner_file


def test_the_graders_stub_is_read_and_checked_once(monkeypatch):
    import builtins
    from grader import grade
    lab = load_labs()[0]
    ctx = grade.Grading(load_labs(), None, None, None, None)    # no build: stub() reads the checkout
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open",
                        lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    first = ctx.stub(lab)
    assert ctx.stub(lab) is first and len(opened) == 1
    assert lab.is_stub(first)
