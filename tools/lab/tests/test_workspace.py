"""workspace: where a grading run's files live."""
import os
import stat

from grader.workspace import Workspace


def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_the_workspace_folders_get_their_modes(workdir):
    os.chmod(str(workdir), 0o711)
    ws = Workspace.create(str(workdir / "w"))
    assert (mode(ws.root), mode(ws.private_dir), mode(ws.cache_dir), mode(ws.jobs_dir),
            mode(ws.stage_dir), mode(ws.mnt)) == (0o711, 0o700, 0o700, 0o711, 0o755, 0o700)


def test_a_work_folder_under_one_others_cannot_enter_is_refused_by_name(workdir):
    os.chmod(str(workdir), 0o700)
    try:
        Workspace.create(str(workdir / "w"))
    except RuntimeError as e:
        assert "MHA_GRADE_DIR" in str(e) and str(workdir) in str(e)
    else:
        assert os.geteuid() != 0, "root must refuse a work folder its job users cannot reach"


def claim_then_claim_in_a_child(workdir, env=None):
    """This process claims a fresh root, then a child Python claims it again
    with `env` (default: this process's): the child exits 3 printing the
    message it would wait with, or prints "claimed". Returns the root and the
    child's run."""
    import subprocess, sys
    os.chmod(str(workdir), 0o711)
    root = str(workdir / "w")
    Workspace.create(root).claim(lambda msg: None)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from grader.workspace import Workspace\n"
            "Workspace.create(%r).claim(lambda m: (print(m, flush=True), sys.exit(3)), poll=0.1)\n"
            "print('claimed')\n" % (here, root))
    return root, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=30, env=env)


def test_a_second_grading_process_waits_for_the_root_and_says_so(workdir):
    # Another grading, not one this process started: no MHA_GRADE_HOLDER.
    env = {k: v for k, v in os.environ.items() if k != "MHA_GRADE_HOLDER"}
    root, r = claim_then_claim_in_a_child(workdir, env)
    assert r.returncode == 3, r.stderr
    assert "another grading is using %s" % root in r.stdout


def test_one_process_claims_its_root_again_without_waiting(workdir):
    os.chmod(str(workdir), 0o711)
    root = str(workdir / "w")
    Workspace.create(root).claim(lambda msg: None)
    said = []
    Workspace.create(root).claim(said.append)
    assert said == []


def test_a_grading_started_by_the_holder_shares_its_root(workdir):
    _, r = claim_then_claim_in_a_child(workdir)
    assert r.returncode == 0 and "claimed" in r.stdout, r.stdout + r.stderr
