"""sandbox: the commands that start learner code, built without running them."""
import json
import os

import pytest

from grader import cgroups
from grader import process
from grader import sandbox
from grader import uids


def iso(**kw):
    args = dict(root=True, setuid=True, chroot=True, namespaces=True, pidns=True,
                launcher="/private/launch")
    args.update(kw)
    return sandbox.Isolation(**args)


class FakeJob:
    """A job with a made-up uid (nothing is claimed)."""

    def __init__(self, uid, slot=0, cgroup=None):
        self.uid = uid
        self.slot = slot
        self.mnt = "/mnt-for-tests"
        self.cgroup = cgroup

    def procs(self):
        return os.path.join(self.cgroup, "cgroup.procs") if self.cgroup else ""

    def started(self):
        return False        # its uid was never claimed: nothing of it to kill


@pytest.fixture
def claims(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "CLAIMS", str(tmp_path / "claims"))
    monkeypatch.setattr(uids, "uid_busy", lambda uid: False)
    return tmp_path / "claims"


def learner_spec(argv):
    """What the launcher (launch.cc) is told, at the end of a learner's argv."""
    at = argv.index("/private/launch")
    spec = {"read": []}
    words = argv[at + 1:]
    for i, word in enumerate(words):
        if word == "--":
            spec["argv"] = words[i + 1:]
            break
        key, _, value = word.partition("=")
        if key == "read":
            spec["read"].append(value)
        else:
            spec[key] = value
    return spec


def test_a_learner_process_runs_as_the_jobs_user_in_its_jail_without_network():
    argv = iso().learner_argv("/jail", FakeJob(1500000123), 2048)
    assert "--net" in argv
    assert "--as=%d" % (2048 << 20) in argv
    spec = learner_spec(argv)
    assert spec["uid"] == "1500000123"
    assert spec["root"] == "/jail" and spec["argv"] == ["/server"] and spec["read"] == ["/"]
    assert "env" in " ".join(argv) and "-i" in argv     # a clean environment


def test_where_the_kernel_has_landlock_the_learner_process_runs_in_a_domain():
    assert learner_spec(iso(learner_landlock=7).learner_argv(
        "/jail", FakeJob(7001), 64))["landlock"] == "1"
    assert learner_spec(iso(learner_landlock=0).learner_argv(
        "/jail", FakeJob(7001), 64))["landlock"] == "0"
    summary = iso(namespaces=False, learner_landlock=7).describe()["summary"]
    assert "learner process under Landlock (no TCP)" in summary


def test_a_learner_process_gets_its_own_pid_namespace_so_its_orphans_die_with_it():
    argv = iso().learner_argv("/jail", FakeJob(1500000123), 2048)
    assert "--pid" in argv and "--fork" in argv and "--kill-child" in argv


def test_without_chroot_the_learner_process_still_changes_user_and_reads_its_jail():
    argv = iso(chroot=False, namespaces=False).learner_argv("/jail", FakeJob(5000), 100)
    assert "--net" not in argv
    spec = learner_spec(argv)
    assert spec["uid"] == "5000" and spec["root"] == "" and spec["argv"] == ["/jail/server"]
    assert "/jail" in spec["read"] and "/usr" in spec["read"]


def test_without_root_only_limits_remain_and_the_report_says_so():
    i = sandbox.Isolation(False, False, False, False)
    argv = i.learner_argv("/jail", FakeJob(None), 100)
    assert argv[-1] == "/jail/server" and "/private/launch" not in argv
    assert "limits only" in i.describe()["summary"]


def test_without_a_mount_namespace_the_compiler_runs_as_the_jobs_user_with_limits():
    argv = sandbox.build_argv(["g++", "-c", "x.cc"], iso(), FakeJob(7001), {"PATH": "/usr/bin"})
    assert argv[-3:] == ["g++", "-c", "x.cc"]
    assert "--reuid=7001" in argv
    assert "--no-new-privs" in argv and "PATH=/usr/bin" in argv
    assert any(a.startswith("--fsize=") for a in argv)


def test_run_stops_a_command_at_its_wall_clock_limit(tmp_path):
    res = process.run(["sleep", "5"], cwd=str(tmp_path), timeout=0.5)
    assert res.timed_out and res.seconds < 3


def test_run_keeps_only_the_end_of_a_flood_of_output(tmp_path):
    res = process.run(["sh", "-c", "yes | head -c 1000000"], cwd=str(tmp_path), timeout=20,
                      keep_output=1000)
    assert len(res.output) == 1000 and not res.timed_out


def test_with_a_mount_namespace_the_compiler_sees_only_usr_the_stage_and_its_directory():
    argv = sandbox.build_argv(["g++", "-c", "x.cc"], iso(jail=True), FakeJob(7001),
                              {"PATH": "/usr/bin"}, ro=["/stage"], rw=["/jobs/slot0/compile"])
    assert argv[-2].endswith("jail.py")
    spec = json.loads(argv[-1])
    assert spec["ro"] == ["/stage"] and spec["rw"] == ["/jobs/slot0/compile"]
    assert spec["cwd"] == "/jobs/slot0/compile" and spec["uid"] == 7001
    assert spec["argv"] == ["g++", "-c", "x.cc"]
    assert spec["rlimits"]["FSIZE"] > 0 and spec["rlimits"]["NPROC"] > 0


def test_a_job_with_a_cgroup_joins_it_before_anything_else_runs():
    argv = sandbox.build_argv(["ld"], iso(), FakeJob(7001, cgroup="/cg/job-7001"),
                              {"PATH": "/usr/bin"})
    assert argv[:3] == ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"']
    assert argv[3] == "/cg/job-7001/cgroup.procs"


def test_every_claimed_uid_is_new_and_recorded(claims, monkeypatch):
    monkeypatch.setenv("MHA_SANDBOX_UID_BASE", "70000")
    monkeypatch.setenv("MHA_SANDBOX_UID_COUNT", "50")
    got = [uids.claim_uid() for _ in range(50)]
    assert len(set(got)) == 50 and all(70000 <= u < 70050 for u in got)
    assert sorted(os.listdir(claims)) == sorted(str(u) for u in got)


def test_a_used_up_uid_range_is_an_error_that_names_the_variables(claims, monkeypatch):
    monkeypatch.setenv("MHA_SANDBOX_UID_BASE", "70000")
    monkeypatch.setenv("MHA_SANDBOX_UID_COUNT", "2")
    uids.claim_uid()
    uids.claim_uid()
    with pytest.raises(RuntimeError, match="MHA_SANDBOX_UID_BASE"):
        uids.claim_uid()


def test_a_base_set_by_hand_gets_a_thousand_uids_unless_told_otherwise(monkeypatch):
    monkeypatch.setenv("MHA_SANDBOX_UID_BASE", "63000")
    monkeypatch.delenv("MHA_SANDBOX_UID_COUNT", raising=False)
    assert uids.uid_range() == (63000, 1000)


def test_a_uid_range_that_is_not_a_number_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("MHA_SANDBOX_UID_BASE", "lots")
    with pytest.raises(RuntimeError, match="MHA_SANDBOX_UID_BASE='lots'"):
        uids.uid_range()


def test_the_isolation_summary_names_each_missing_layer():
    i = iso(jail=False, cgroup=None, missing={"cgroup": "cgroup v2 lacks memory"})
    d = i.describe()
    assert "compiler unjailed" in d["summary"] and "no cgroup" in d["summary"]
    assert d["missing"] == {"cgroup": "cgroup v2 lacks memory"}


def test_cgroup_v2_without_the_memory_and_pids_controllers_is_named_missing(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io\n")
    monkeypatch.setattr(cgroups, "ROOTS", (str(tmp_path),))
    parent, why = cgroups.probe_cgroup(str(tmp_path))
    assert parent is None and "memory/pids controllers" in why


def test_no_cgroup_v2_at_all_is_named_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "ROOTS", (str(tmp_path / "nothing"),))
    parent, why = cgroups.probe_cgroup(str(tmp_path))
    assert parent is None and "no cgroup v2" in why


def test_a_jobs_cgroup_gets_its_memory_process_and_cpu_limits(tmp_path):
    d = cgroups.cgroup_for_job(str(tmp_path), "7001", 64 << 20, 8)
    assert open(os.path.join(d, "memory.max")).read() == str(64 << 20)
    assert open(os.path.join(d, "pids.max")).read() == "8"
    assert open(os.path.join(d, "cpu.weight")).read() == "100"


@pytest.fixture
def ran(monkeypatch):
    """The argv and cwd of each command an Isolation runs (nothing runs)."""
    got = []
    monkeypatch.setattr(process, "run", lambda argv, cwd, timeout, env=None: got.append(
        (argv, cwd, env)) or process.Result(0, "", False, 0.0))
    return got


def test_a_build_step_has_only_its_own_directory_as_home_and_temporary_folder(ran):
    i = sandbox.Isolation(False, False, False, False)
    i.run_build(FakeJob(None), ["g++", "-c", "x.cc"], "/jobs/slot0/compile", 10)
    argv, cwd, _ = ran[0]
    assert cwd == "/jobs/slot0/compile" and argv[-3:] == ["g++", "-c", "x.cc"]
    assert "HOME=/jobs/slot0/compile" in argv and "TMPDIR=/jobs/slot0/compile" in argv


def test_the_trusted_binary_runs_in_the_jobs_cgroup_under_its_memory_limit(ran):
    i = iso()
    i.run_trusted(FakeJob(7001, cgroup="/cg/job-7001"), ["/t/test_remote"], "/t", 60,
                  {"PATH": "/usr/bin"}, 1024)
    argv, _, env = ran[0]
    assert argv[3] == "/cg/job-7001/cgroup.procs" and "--as=%d" % (1024 << 20) in argv
    assert argv[-1] == "/t/test_remote" and env == {"PATH": "/usr/bin"}


def test_where_the_kernel_takes_the_filter_the_learner_process_runs_under_seccomp():
    assert learner_spec(iso(seccomp=True).learner_argv("/jail", FakeJob(7001), 64))[
        "seccomp"] == "1"
    assert learner_spec(iso().learner_argv("/jail", FakeJob(7001), 64))["seccomp"] == "0"
    assert "seccomp (no socket" in iso(seccomp=True).describe()["summary"]
    assert "no seccomp" in iso().describe()["summary"]
