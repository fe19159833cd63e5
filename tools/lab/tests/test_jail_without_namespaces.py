"""A jail all the same where the kernel refuses namespaces (issue 29,
deliverable 5): the host's secret places made private, Landlock for the
compiler, a job's System V IPC objects removed with it, and a compile cache
that never serves an object built behind a weaker wall."""
import json
import os
import subprocess

import pytest

from grader import grade
from grader import ipc
from grader import jail
from grader import learner_jail
from grader import sandbox
from grading_fakes import make_grading, passing_source

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a one-off uid)")


def test_a_host_secret_place_is_private_whole_or_all_but_the_way_to_the_work_root(workdir):
    ag = workdir / "autograder"
    for p in ("source/x", "submission/a.cc", "results/r.json"):
        (ag / p).parent.mkdir(parents=True, exist_ok=True)
        (ag / p).write_text("x")
    (ag / "submission_metadata.json").write_text("{}")
    assert grade.host_secrets("/var/tmp/w", [str(ag)]) == [str(ag)]
    inside = grade.host_secrets(str(ag / "source" / "work"), [str(ag), str(workdir / "none")])
    assert sorted(inside) == sorted([str(ag / "results"), str(ag / "submission"),
                                     str(ag / "submission_metadata.json"),
                                     str(ag / "source" / "x")])


SHM = """key      shmid perms size cpid lpid nattch   uid   gid  cuid  cgid atime dtime ctime rss swap
 1234       7   666 4096  100  100      0  1500  1500  1500  1500 0 0 0 4096 0
 1235       8   666 4096  100  100      0     0     0  1500  1500 0 0 0 4096 0
 1236       9   600 4096  100  100      0     0     0     0     0 0 0 0 4096 0
"""
MSG = """key msqid perms cbytes qnum lspid lrpid uid gid cuid cgid stime rtime ctime
  1  3  666 0 0 0 0 1500 1500 1500 1500 0 0 0
"""
SEM = """key semid perms nsems uid gid cuid cgid otime ctime
  2  4  666 1 0 0 7 7 0 0
"""


def test_the_ipc_objects_of_a_uid_are_those_it_created_or_owns(workdir):
    for kind, text in (("shm", SHM), ("msg", MSG), ("sem", SEM)):
        (workdir / kind).write_text(text)
    # Segment 8 was handed to root with IPC_SET: its creator is still the job's uid.
    assert ipc.objects_of(1500, str(workdir)) == [("shm", 7), ("shm", 8), ("msg", 3)]
    assert ipc.objects_of(7, str(workdir)) == [("sem", 4)]


MAKE_SEGMENT = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
ident = libc.shmget(0, 4096, 0o1666)          # IPC_PRIVATE, IPC_CREAT | 0666
buf = (ctypes.c_byte * 256)()                 # struct shmid64_ds, uid at offset 4 (ipc64_perm)
libc.shmctl(ident, 2, buf)                    # IPC_STAT
ctypes.c_uint32.from_buffer(buf, 4).value = int(sys.argv[1])
assert libc.shmctl(ident, 1, buf) == 0        # IPC_SET: the owner is now sys.argv[1]
print(ident)
"""


def segment_given_away(uid, to=65534):
    """A segment `uid` made and handed to `to` (its creator stays `uid`)."""
    out = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                          "/usr/bin/python3", "-I", "-S", "-c", MAKE_SEGMENT, str(to)],
                         capture_output=True, text=True, check=True).stdout
    return int(out)


@ROOT_ONLY
def test_a_segment_a_job_gave_away_is_removed_as_its_uid_even_without_cap_sys_admin():
    from grader.uids import claim_uid
    uid = claim_uid()
    ident = segment_given_away(uid)
    assert ("shm", ident) in ipc.objects_of(uid)
    # Root without CAP_SYS_ADMIN (Docker's, Gradescope's) may not remove it
    # itself: the removal runs as the job's uid, its creator.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, %r)\nfrom grader import ipc\n"
            "print(ipc.remove_job_objects(%d))" % (here, uid))
    p = subprocess.run(["capsh", "--drop=cap_sys_admin", "--", "-c",
                        "/usr/bin/python3 -c '%s'" % code.replace("'", "'\\''")],
                       capture_output=True, text=True)
    assert p.stdout.strip() == "1", p.stderr
    assert ipc.objects_of(uid) == []


@ROOT_ONLY
def test_a_clean_up_that_fails_stops_the_grading_naming_the_object(monkeypatch):
    from grader.uids import claim_uid
    uid = claim_uid()
    ident = segment_given_away(uid)
    try:
        monkeypatch.setattr(ipc.process, "run", lambda *a, **k: ipc.process.Result(
            1, "ipcrm: permission denied", False, 0.0))      # as if ipcrm failed
        with pytest.raises(ipc.IpcCleanupError, match="shared memory segment %d" % ident):
            ipc.remove_job_objects(uid)
    finally:
        monkeypatch.undo()
        ipc.remove_job_objects(uid)
    assert ipc.objects_of(uid) == []


def test_a_posix_message_queue_cannot_be_made_by_a_learners_process():
    argv = learner_jail.prlimit(256, 5, 1, 16, 32)
    assert "--msgqueue=0" in argv


def test_an_object_built_behind_a_weaker_wall_is_compiled_again(workdir):
    g = make_grading(workdir, jobs=1)
    g.isolation.wall = "file modes"
    grade.grade_all(g, [grade.Submission("alice", {1: passing_source(1)})], labs=g.labs[:1])
    g.isolation.wall = "mount namespace"
    g.forget_runs()
    grade.grade_all(g, [grade.Submission("alice", {1: passing_source(1)})], labs=g.labs[:1])
    assert g.isolation.toolchain.compiles == 2


def test_the_isolation_names_the_compilers_wall():
    iso = sandbox.Isolation(True, True, True, False, landlock=True,
                            missing={"namespaces": "refused"})
    d = iso.describe()
    assert "compiler jailed by Landlock" in d["summary"] and d["compiler_wall"] == "landlock"
    assert sandbox.Isolation(True, True, True, False).build_wall() == "file modes"
    assert sandbox.Isolation(True, True, True, True, jail=True).build_wall() == "mount namespace"
    assert sandbox.Isolation(False, False, False, False).build_wall() == "none"


LANDLOCK = pytest.mark.skipif(os.geteuid() != 0 or jail.landlock_abi() < 1,
                              reason="needs root and a kernel with Landlock")


@LANDLOCK
def test_landlock_lets_the_compiler_work_and_refuses_a_file_every_user_may_read(workdir):
    from grader.uids import claim_uid
    uid = claim_uid()
    os.chmod(workdir, 0o711)
    secret = workdir / "submission_metadata.json"
    secret.write_text('{"previous_submissions": "MHA-METADATA-SECRET"}\n')
    os.chmod(secret, 0o644)
    work = workdir / "job"
    work.mkdir()
    os.chown(work, uid, uid)
    (work / "a.cc").write_text('asm(".section .rodata\\n.incbin \\"%s\\"\\n.previous");\n'
                               "int main() { return 0; }\n" % secret)
    os.chmod(work / "a.cc", 0o644)
    spec = {"landlock": True, "launcher": learner_jail.build_launcher(str(workdir)),
            "mnt": "", "ro": [], "rw": [str(work)], "uid": uid,
            "cwd": str(work), "env": {"PATH": "/usr/bin:/bin", "TMPDIR": str(work)},
            "rlimits": {}, "cgroup": "", "argv": ["sh", "-c", "g++ -c a.cc -o a.o; "
                                                  "g++ -x c++ -c /dev/null -o b.o && echo built"]}
    p = subprocess.run(["/usr/bin/python3", "-I", "-S", jail.__file__, json.dumps(spec)],
                       capture_output=True, text=True)
    assert "built" in p.stdout                          # the compiler works in the domain
    assert not (work / "a.o").exists()                  # the .incbin was refused
    assert "submission_metadata.json" in p.stderr       # as says "file not found"
    assert "MHA-METADATA-SECRET" not in p.stdout + p.stderr


def test_the_objects_an_earlier_grading_left_are_found_by_the_uid_range(workdir):
    for kind, text in (("shm", SHM), ("msg", MSG), ("sem", SEM)):
        (workdir / kind).write_text(text)
    assert ipc.objects_in_range(1000, 1000, str(workdir)) == [
        ("shm", 7, 1500), ("shm", 8, 1500), ("msg", 3, 1500)]
    assert ipc.objects_in_range(2000, 10, str(workdir)) == []


LEARNER_TRIES = """
import socket, sys
port, secret = int(sys.argv[1]), sys.argv[2]
for what, act in (("connect", lambda s: s.connect(("127.0.0.1", port))),
                  ("bind", lambda s: s.bind(("127.0.0.1", 0)))):
    s = socket.socket()
    try:
        act(s)
        print(what, "ok")
    except OSError as e:
        print(what, "refused", e.errno)
try:
    print("read", open(secret).read().strip())
except OSError as e:
    print("read refused", e.errno)
"""


@LANDLOCK
def test_a_learner_process_in_its_domain_reaches_no_tcp_port_and_reads_nothing_outside(workdir):
    import socket
    from grader.uids import claim_uid
    if jail.landlock_abi() < 4:
        pytest.skip("Landlock ABI %d has no network rules" % jail.landlock_abi())
    os.chmod(workdir, 0o711)
    secret = workdir / "notes.txt"
    secret.write_text("MHA-READABLE-SECRET\n")
    os.chmod(secret, 0o644)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    launcher = learner_jail.build_launcher(str(workdir))
    seen = {}
    for landlock in (True, False):          # without the domain, the same tries succeed
        argv = learner_jail.launch(launcher, str(workdir / "jail"), claim_uid(), False, landlock, [
            "/usr/bin/python3", "-I", "-S", "-c", LEARNER_TRIES, str(port), str(secret)])
        seen[landlock] = subprocess.run(argv, capture_output=True, text=True).stdout
    assert "connect refused" in seen[True] and "bind refused" in seen[True], seen[True]
    assert "read refused" in seen[True] and "MHA-READABLE-SECRET" not in seen[True]
    assert "connect ok" in seen[False] and "MHA-READABLE-SECRET" in seen[False]
    listener.close()


SECCOMP_TRIES = r"""
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def attempt(what, call):
    try:
        ok = call()
        print(what, "ok" if ok is not False else "refused")
    except OSError as e:
        print(what, "refused", e.errno)
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
# add_key(2) of a keyring named in the global namespace, in the user keyring (-4).
attempt("keyring", lambda: libc.syscall(248, b"keyring", b"mha-test-%s" % sys.argv[1].encode(),
                                        None, 0, -4) > 0 or False)
attempt("shmget", lambda: libc.shmget(0, 4096, 0o1666) >= 0 or False)
"""


@ROOT_ONLY
def test_under_the_seccomp_filter_a_learner_process_opens_no_socket_keyring_or_segment(workdir):
    from grader.uids import claim_uid
    os.chmod(workdir, 0o711)
    launcher = learner_jail.build_launcher(str(workdir))
    seen = {}
    for seccomp in (True, False):           # without the filter, the same tries succeed
        uid = claim_uid()
        argv = learner_jail.launch(launcher, str(workdir / "jail"), uid, False, False, [
            "/usr/bin/python3", "-I", "-S", "-c", SECCOMP_TRIES, str(uid)], seccomp=seccomp)
        seen[seccomp] = subprocess.run(argv, capture_output=True, text=True).stdout
        ipc.remove_job_objects(uid)
    for what in ("udp", "unix", "keyring", "shmget"):
        assert "%s refused" % what in seen[True], seen[True]
        assert "%s ok" % what in seen[False], seen[False]
