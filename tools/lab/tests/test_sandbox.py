"""sandbox: the commands that start learner code, built without running them."""
import sandbox


def iso(**kw):
    args = dict(root=True, setuid=True, chroot=True, namespaces=True)
    args.update(kw)
    return sandbox.Isolation(**args)


def test_a_learner_process_runs_as_the_slot_user_in_its_jail_without_network():
    argv = sandbox.learner_argv("/jail", iso(), 3, 2048)
    joined = " ".join(argv)
    assert "--net" in argv
    assert "--as=%d" % (2048 << 20) in argv
    assert "--userspec=%d:%d" % (sandbox.SLOT_UID_BASE + 3, sandbox.SLOT_UID_BASE + 3) in joined
    assert argv[-2:] == ["/jail", "/server"]
    assert "env" in joined and "-i" in argv     # a clean environment


def test_without_chroot_the_learner_process_still_changes_user():
    argv = sandbox.learner_argv("/jail", iso(chroot=False, namespaces=False), 0, 100)
    assert "--net" not in argv
    assert any(a.startswith("--reuid=") for a in argv)
    assert argv[-1] == "/jail/server"


def test_without_root_only_limits_remain_and_the_report_says_so():
    i = sandbox.Isolation(False, False, False, False)
    argv = sandbox.learner_argv("/jail", i, 0, 100)
    assert not any(a.startswith(("--reuid", "--userspec")) for a in argv)
    assert "limits only" in i.describe()["summary"]


def test_the_compiler_runs_as_the_slot_user_with_limits_and_a_clean_environment():
    argv = sandbox.build_argv(["g++", "-c", "x.cc"], iso(), 1, {"PATH": "/usr/bin"})
    assert argv[-3:] == ["g++", "-c", "x.cc"]
    assert "--reuid=%d" % (sandbox.SLOT_UID_BASE + 1) in argv
    assert "--no-new-privs" in argv and "PATH=/usr/bin" in argv
    assert any(a.startswith("--fsize=") for a in argv)


def test_run_stops_a_command_at_its_wall_clock_limit(tmp_path):
    res = sandbox.run(["sleep", "5"], cwd=str(tmp_path), timeout=0.5)
    assert res.timed_out and res.seconds < 3


def test_run_keeps_only_the_end_of_a_flood_of_output(tmp_path):
    res = sandbox.run(["sh", "-c", "yes | head -c 1000000"], cwd=str(tmp_path), timeout=20,
                      keep_output=1000)
    assert len(res.output) == 1000 and not res.timed_out
