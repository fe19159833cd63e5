"""./lab test's kit check: export a kit to a temporary directory and use it as
a learner would (bazel test, the symbol check, a classic mistake, every
command ./lab help lists there, watch and Ctrl-C), and check that no Bazel
server or other process is left behind. The export itself is
tools/lab/course/kit.py."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from checks import kitsymbols, mutants
from course.kit import export, leaks
from course.kit_references import read_tree, reference_problems
from grader import workspace
from labs import ROOT, bin_path, objects_path
from learner import results
from learner.files import read_text


# A stub's suggested headers: comment lines "// #include <x>" or '// #include "x"'.
_HINT_INCLUDE_RE = re.compile(r'^//\s*(#include\s*[<"][^>"]+[>"])', re.M)


def hint_include_problems(labs, root=ROOT, compiler="g++"):
    """["lab N: ..."] for each stub whose suggested includes, all uncommented
    at once, do not compile (g++ -fsyntax-only, as the kit builds: C++17, the
    repository's root on the include path). A learner who takes every hint
    must not get errors from inside a library's headers."""
    out = []
    for lab in labs:
        source = (lab.read_learner_file(root) or b"").decode("utf-8", "replace")
        if not _HINT_INCLUDE_RE.search(source):
            continue
        text = _HINT_INCLUDE_RE.sub(r"\1", source)
        p = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", "-I" + root, "-x", "c++",
                            "-"], input=text, capture_output=True, text=True, errors="replace")
        errors = [l for l in p.stderr.splitlines() if ": error:" in l]
        if p.returncode != 0:
            out.append("lab %d: %s with its suggested includes uncommented does not compile "
                       "(%d errors; the first: %s)" % (lab.number, lab.learner_file, len(errors),
                                                       (errors or ["?"])[0][:200]))
    return out


# --------------------------------------------------------------------------- ./lab test

def _processes_under(path):
    """{pid: command line} of the processes whose command line or working
    directory is under `path` (a temporary directory of the self-test)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            try:
                cwd = os.readlink("/proc/%s/cwd" % entry)
            except OSError:
                cwd = ""
        except OSError:
            continue
        if cmd and (path in cmd or cwd == path or cwd.startswith(path + "/")):
            out[int(entry)] = cmd
    return out


def _wait_gone(path, seconds=15):
    """The processes still under `path` after waiting up to `seconds` for them to end."""
    deadline = time.time() + seconds
    while True:
        left = _processes_under(path)
        if not left or time.time() > deadline:
            return left
        time.sleep(0.5)


def _kill_all(procs):
    for pid in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# The statuses of Bazel's test summary that the kit check judges.
_KIT_STATUSES = ("PASSED", "FAILED TO BUILD", "FAILED", "NO STATUS", "TIMEOUT")


# The kit check's classic mistake: lab 2's scale by 1/sqrt(d_model), when the
# second lab has it, else that lab's first numeric mutant.
_PREFERRED_MUTANT = "dmodel_scale"


def selftest_checks(labs, make_check):
    """The kit's part of ./lab test: export a kit to a temporary directory and
    use it as a learner would, with its own Bazel output base there (and a
    disk cache under the grader's work directory, so that a second run does
    not compile everything again). Every Bazel server and process started
    under that directory is gone at the end."""
    t0 = time.time()
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="mha-kit-"))
    kit_dir = os.path.join(tmp, "kit")
    ob = os.path.join(tmp, "output_base")
    disk_cache = os.path.join(workspace.work_root(), "kit-disk-cache")
    env = dict(os.environ, MHA_BAZEL_OUTPUT_BASE=ob, MHA_SETUP_FLAGS="")
    env.pop("MHA_BAZEL_STARTUP", None)
    # The kit's ./lab in English, whatever the caller's language: the checks
    # read its English words (learner/i18n.py).
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        env.pop(name, None)
    env["LANG"] = "C.UTF-8"
    bazel = ["bazel", "--output_base=" + ob]
    checks = []

    def new(name):
        c = make_check(name)
        checks.append(c)
        return c

    def lab_cmd(args, timeout=300, env_=None):
        p = subprocess.run([os.path.join(kit_dir, "lab")] + args, cwd=kit_dir,
                           env=env_ or env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    leftovers = make_check("no Bazel server or other process is left running by the kit's "
                           "./lab commands (each one starts its own server and must end it)")

    def no_leftovers(after):
        left = _wait_gone(tmp)
        if left:
            leftovers.fail("after %s: %s" % (after, "; ".join(
                "%d %s" % (pid, cmd[:120]) for pid, cmd in sorted(left.items()))))
            _kill_all(left)

    try:
        c = new("every stub's suggested includes compile together (all uncommented at once)")
        for problem in hint_include_problems(labs):
            c.fail(problem)

        c = new("export-kit writes the learner's kit; it leaks no solution, hidden "
                "test, golden, rubric or instructors' document")
        files = export(kit_dir, labs)
        for problem in leaks(kit_dir):
            c.fail(problem)

        c = new("no text in the kit names a repository path that the kit does not have "
                "(solutions/, tests/, tools/goldens, bench/, files outside the repository)")
        for problem in reference_problems(read_tree(kit_dir)):
            c.fail(problem)
        del files

        c = new("in the kit, bazel test //labs/... builds and every public test fails only "
                "with 'is not implemented yet'; bazel build //... and bazel query //labs/... "
                "work (the grader's *_remote targets stay out of the way)")
        os.makedirs(disk_cache, exist_ok=True)
        # --test_tag_filters= : the lab programs' quick runs too (.bazelrc leaves them out).
        p = subprocess.run(bazel + ["test", "--keep_going", "--color=no", "--curses=no",
                                    "--test_output=summary", "--test_summary=short",
                                    "--test_tag_filters=",
                                    "--disk_cache=" + disk_cache, "//labs/..."],
                           cwd=kit_dir, capture_output=True, text=True, errors="replace")
        out = p.stdout + p.stderr
        summary = {t: s for t, s in results.parse_summary(out).items() if s in _KIT_STATUSES}
        if not summary:
            c.fail("bazel test //labs/... ran no test: " + " ".join(
                l for l in out.splitlines() if l.startswith("ERROR"))[:500])
        p = subprocess.run(bazel + ["info", "--color=no", "bazel-testlogs"], cwd=kit_dir,
                           capture_output=True, text=True, errors="replace")
        logs = (p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip()
                else os.path.join(ob, "execroot", "mha_labs", "bazel-out", "k8-fastbuild",
                                  "testlogs"))
        for target, status in sorted(summary.items()):
            if status in ("FAILED TO BUILD", "NO STATUS"):
                c.fail("%s: %s" % (target, status.lower()))
                continue
            public = any(target == lab.public_test for lab in labs)
            logdir = os.path.join(logs, bin_path(target))
            cases = results.parse_test_xml(read_text(os.path.join(logdir, "test.xml")) or "",
                                           keep_skipped=True)
            if public:
                if not cases:
                    c.fail("%s: no test results" % target)
                for case, failure in cases:
                    if failure is None:
                        c.fail("%s passes on the stub" % case)
                    elif "is not implemented yet" not in failure:
                        c.fail("%s fails with something else: %s"
                               % (case, " ".join(failure.split())[:200]))
            elif status != "PASSED":
                log = read_text(os.path.join(logdir, "test.log")) or ""
                if "is not implemented yet" not in log:
                    c.fail("%s fails on the stubs, not saying 'is not implemented yet'" % target)
        for args in (["build", "--disk_cache=" + disk_cache, "//..."], ["query", "//labs/..."]):
            p = subprocess.run(bazel + args, cwd=kit_dir, capture_output=True, text=True,
                               errors="replace")
            if p.returncode != 0:
                c.fail("bazel %s fails in the kit: %s" % (" ".join(args[:1] + args[-1:]), " ".join(
                    l for l in p.stderr.splitlines() if l.startswith("ERROR"))[:400]))
        # The kit holds no answer, by symbols: on the objects just built, then
        # with lab 1's stub planted in common/ (which must be refused).
        c = new("by symbols, no object file of the built kit defines a graded function "
                "(one its lab's header declares) except that lab's stub; a stub copied into "
                "common/ is refused")
        p = subprocess.run(bazel + ["info", "--color=no", "bazel-bin"], cwd=kit_dir,
                           capture_output=True, text=True, errors="replace")
        bin_dir = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() \
            else ""
        bad, count = kitsymbols.check_built(bin_dir, labs, kit_dir)
        for problem in bad:
            c.fail(problem)
        c.name += " (%d object files)" % count
        planted = _plant_answer(kit_dir, labs[0])
        try:
            bad, _ = kitsymbols.scan(kit_dir, labs, bazel)
            if not any(b.startswith(objects_path(_PLANTED_LABEL) + "/") for b in bad):
                c.fail("lab %d's stub compiled in common/ (%s) was not refused: %s"
                       % (labs[0].number, planted, "; ".join(bad)[:300] or "no problem found"))
        finally:
            _unplant_answer(kit_dir)
        subprocess.run(bazel + ["shutdown"], cwd=kit_dir, capture_output=True)
        no_leftovers("bazel test //labs/... in the kit")

        # A classic mistake, dropped into the kit as the learner's file.
        lab2 = labs[1]
        numeric = [m for m in mutants.load(labs, only=lab2) if m.kind == "numeric"]
        mutant = next((m for m in numeric if m.name == _PREFERRED_MUTANT),
                      numeric[0] if numeric else None)
        name = mutant.name if mutant else "(none)"
        c = new("a classic mistake in the kit (mutant %s/%s) fails a public test whose message "
                "names it, and ./lab status shows that message" % (lab2.nn, name))
        lab1 = labs[0]
        if mutant is None or mutant.source is None:
            c.fail("the mutant %s/%s is missing or does not apply: %s"
                   % (lab2.nn, name, getattr(mutant, "error", "")))
        else:
            with open(os.path.join(kit_dir, lab2.learner_file), "wb") as f:
                f.write(mutant.source)
            with open(os.path.join(ROOT, lab1.solution_file), "rb") as f:
                solution1 = f.read()
            with open(os.path.join(kit_dir, lab1.learner_file), "wb") as f:
                f.write(solution1)
            p = subprocess.run(bazel + ["test", "--color=no", "--test_output=errors",
                                        lab2.public_tests],
                               cwd=kit_dir, capture_output=True, text=True, errors="replace")
            if mutant.expect not in p.stdout + p.stderr:
                c.fail("bazel test %s does not say %r" % (lab2.public_tests, mutant.expect))
            subprocess.run(bazel + ["shutdown"], cwd=kit_dir, capture_output=True)
            no_leftovers("bazel test %s" % lab2.public_tests)

        # Every command ./lab help lists, as a learner runs it.
        rc, out, err = lab_cmd(["help"], timeout=30)
        listed = re.findall(r"^\s+\./lab (\w[\w-]*)", out, re.M)
        c = new("./lab help in the kit lists only commands that work there (%s), and ./lab "
                "says nothing about set-up when everything is installed" % ", ".join(listed))
        if rc != 0 or not listed:
            c.fail("./lab help: exit %d, %s" % (rc, (out + err).strip()[:200]))
        if "setup" in (out + err).lower():
            c.fail("./lab help printed: " + (out + err).strip()[:200])
        expected = {"status", "watch", "hint", "read", "quiz", "grade", "help"}
        if set(listed) != expected:
            c.fail("listed %s, expected %s" % (sorted(listed), sorted(expected)))

        def judge(check, what, rc, out, err, want_rc, words=()):
            text = out + err
            if rc != want_rc:
                check.fail("%s: exit %s, expected %d: %s" % (what, rc, want_rc,
                                                              text.strip()[-300:]))
            if "Traceback (most recent call last)" in text:
                check.fail("%s: a Python traceback: %s" % (what, text.strip()[-300:]))
            if "setup:" in text:
                check.fail("%s: talks about set-up: %s" % (what, text.strip()[:200]))
            flat = " ".join(text.split())          # words a line break cut in two
            for w in words:
                if w not in flat:
                    check.fail("%s: does not say %r: %s" % (what, w, text.strip()[:300]))

        for name in listed:
            c = new("./lab %s in the kit exits with a clear message and status" % name)
            t = time.time()
            if name == "help":
                rc, out, err = lab_cmd([], timeout=30)
                judge(c, "./lab", rc, out, err, 0, ["./lab status"])
            elif name == "hint":
                rc, out, err = lab_cmd(["hint", "1"], timeout=30)
                judge(c, "./lab hint 1", rc, out, err, 0, ["Hint 1 of"])
                rc, out, err = lab_cmd(["hint", "99"], timeout=30)
                judge(c, "./lab hint 99", rc, out, err, 2, ["there is no lab '99'"])
                rc, out, err = lab_cmd(["hint"], timeout=30)
                judge(c, "./lab hint", rc, out, err, 2)
            elif name == "status":
                rc, out, err = lab_cmd(["status"])
                words = ["lab %d" % l.number for l in labs] + ["not started", "passing", "next:"]
                if mutant is not None and mutant.source is not None:
                    words.append(mutant.expect)
                judge(c, "./lab status", rc, out, err, 0, words)
                if not re.search(r"^lab 1 .*passing", out, re.M):
                    c.fail("./lab status does not say lab 1 (the solution) passes: " + out[:300])
            elif name == "grade":
                rc, out, err = lab_cmd(["grade"])
                judge(c, "./lab grade", rc, out, err, 0,
                      ["Provisional", "hidden tests decide the grade"])
                rows = re.findall(r"^lab (\d+) .* (\d+)/(\d+)\b", out, re.M)
                if sorted(int(r[0]) for r in rows) != [l.number for l in labs]:
                    c.fail("./lab grade: not one line per lab: " + out[:400])
                rc, out, err = lab_cmd(["grade", "somewhere"], timeout=30)
                judge(c, "./lab grade somewhere", rc, out, err, 2)
            elif name == "read":
                _check_read(c, kit_dir, env, lab1, judge, lab_cmd)
            elif name == "quiz":
                p = subprocess.run([os.path.join(kit_dir, "lab"), "quiz", "1"], cwd=kit_dir,
                                   env=env, input="a\nb\nc\n" * 10, capture_output=True,
                                   text=True, errors="replace", timeout=60)
                judge(c, "./lab quiz 1", p.returncode, p.stdout, p.stderr, 0,
                      ["Lab 1 quiz", "done:"])
                rc, out, err = lab_cmd(["quiz", "99"], timeout=30)
                judge(c, "./lab quiz 99", rc, out, err, 2, ["there is no lab '99'"])
            elif name == "watch":
                rc, out, err = lab_cmd(["watch", "99"], timeout=30)
                judge(c, "./lab watch 99", rc, out, err, 2, ["there is no lab '99'"])
                _check_watch(c, kit_dir, env, lab1, judge)
                no_leftovers("./lab watch 1 and Ctrl-C")
                _check_watch_without_inotify(c, kit_dir, env, tmp, judge)
            c.name += " (%.0f s)" % (time.time() - t)
            no_leftovers("./lab " + name)
    except Exception as e:   # a broken check is a failed check
        c = make_check("the kit self-test ran to the end")
        c.fail("%s: %s" % (type(e).__name__, e))
        checks.append(c)
    finally:
        subprocess.run(bazel + ["shutdown"], cwd=kit_dir if os.path.isdir(kit_dir) else tmp,
                       capture_output=True)
        no_leftovers("the kit self-test")
        subprocess.run(["chmod", "-R", "u+w", tmp], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    checks.append(leftovers)
    if checks:
        checks[0].name += " (the whole kit self-test took %.0f s)" % (time.time() - t0)
    return checks


_PLANTED = "common/planted_answer.cc"
_PLANTED_LABEL = "//common:planted_answer"
_PLANTED_BUILD = """
# The kit self-test's planted answer (removed again): lab %d's stub, compiled
# outside labs/, must fail the symbol check.
cc_library(
    name = "planted_answer",
    srcs = ["planted_answer.cc"],
    deps = ["%s"],
)
"""


def _plant_answer(kit_dir, lab):
    """Copies the lab's stub into the kit's common/ as a library of its own:
    every graded function of the lab, defined outside the learner's file."""
    shutil.copyfile(os.path.join(kit_dir, lab.learner_file), os.path.join(kit_dir, _PLANTED))
    build = os.path.join(kit_dir, "common", "BUILD")
    with open(build) as f:
        text = f.read()
    with open(build + ".before-planting", "w") as f:
        f.write(text)
    with open(build, "a") as f:
        f.write(_PLANTED_BUILD % (lab.number, lab.header_library))
    return _PLANTED


def _unplant_answer(kit_dir):
    build = os.path.join(kit_dir, "common", "BUILD")
    if os.path.exists(build + ".before-planting"):
        os.replace(build + ".before-planting", build)
    if os.path.exists(os.path.join(kit_dir, _PLANTED)):
        os.remove(os.path.join(kit_dir, _PLANTED))


def _check_read(c, kit_dir, env, lab, judge, lab_cmd):
    """./lab read: --build-only writes out/site/ with every lab's page and the
    learner's last run (lab 1 passes: ./lab status ran before); without it the
    site is served on 127.0.0.1 at the port it prints, until Ctrl-C."""
    rc, out, err = lab_cmd(["read", "--build-only"], timeout=120)
    judge(c, "./lab read --build-only", rc, out, err, 0, ["built"])
    page = read_text(os.path.join(kit_dir, "out", "site", "en", lab.dir + ".html")) or ""
    if "Your last run: passing" not in page:
        c.fail("./lab read: lab %d's page does not show the last run (passing): %s"
               % (lab.number, re.sub(r"\s+", " ", page)[:200]))
    log_path = os.path.join(os.path.dirname(kit_dir), "read.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([os.path.join(kit_dir, "lab"), "read"], cwd=kit_dir, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        port, deadline = None, time.time() + 60
        while port is None and time.time() < deadline and proc.poll() is None:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", read_text(log_path) or "")
            port = int(m.group(1)) if m else None
            time.sleep(0.3)
        if port is None:
            c.fail("./lab read printed no address: " + (read_text(log_path) or "")[-300:])
            return
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d/en/%s.html" % (port, lab.dir),
                                    timeout=10) as r:
            if r.status != 200 or b"quiz-data" not in r.read():
                c.fail("./lab read: lab %d's page is not served with its quiz" % lab.number)
        os.killpg(proc.pid, signal.SIGINT)
        if proc.wait(timeout=20) != 0:
            c.fail("./lab read: exit %s after Ctrl-C" % proc.returncode)
    except Exception as e:
        c.fail("./lab read: %s: %s" % (type(e).__name__, e))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _check_watch(c, kit_dir, env, lab, judge):
    """./lab watch N: runs the tests at once, runs them again when the file is
    saved, and stops with exit 0 on Ctrl-C (SIGINT to its process group, as a
    terminal sends it)."""
    log_path = os.path.join(os.path.dirname(kit_dir), "watch.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([os.path.join(kit_dir, "lab"), "watch", str(lab.number)],
                                cwd=kit_dir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def text():
        with open(log_path, errors="replace") as f:
            return f.read()

    def wait_for(count, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline and proc.poll() is None:
            if text().count("to run again") + text().count("passes its public tests") >= count:
                return True
            time.sleep(0.5)
        return False

    try:
        if not wait_for(1, 240):
            c.fail("./lab watch %d: no test run reported within 240 s: %s"
                   % (lab.number, text()[-300:]))
        else:
            path = os.path.join(kit_dir, lab.learner_file)
            with open(path, "ab") as f:
                f.write(b"\n")
            if not wait_for(2, 120):
                c.fail("./lab watch %d: saving the file did not run the tests again: %s"
                       % (lab.number, text()[-300:]))
        os.killpg(proc.pid, signal.SIGINT)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        judge(c, "./lab watch %d, then Ctrl-C" % lab.number, rc, text(), "", 0,
              ["watching", "watch: stopped"])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _check_watch_without_inotify(c, kit_dir, env, tmp, judge):
    """./lab watch where inotifywait is missing: a clear message, exit 1."""
    bin_dir = os.path.join(tmp, "bin-without-inotify")
    os.makedirs(bin_dir, exist_ok=True)
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if not os.path.isdir(d):
            continue
        for fn in os.listdir(d):
            target = os.path.join(bin_dir, fn)
            if fn.startswith("inotify") or os.path.lexists(target):
                continue
            os.symlink(os.path.join(d, fn), target)
    env2 = dict(env, PATH=bin_dir)
    p = subprocess.run([os.path.join(kit_dir, "lab"), "watch", "1"], cwd=kit_dir, env=env2,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    judge(c, "./lab watch 1 without inotifywait", p.returncode, p.stdout, p.stderr, 1,
          ["inotifywait is not installed"])
