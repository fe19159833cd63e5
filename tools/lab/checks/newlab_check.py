"""./lab test's new-lab check: in a temporary copy of the suite, ./lab new
makes a lab that the registry check, Bazel, grading and export-kit handle
with no other file touched. The command itself is tools/lab/course/newlab.py."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import languages
from checks import consistency
from course.kit_references import read_tree, reference_problems
from labs import ROOT, Lab


def _snapshot(root):
    """{relative path: sha256} of every file under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(("bazel-", ".cache"))]
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            if os.path.islink(full):
                continue
            with open(full, "rb") as f:
                out[os.path.relpath(full, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def selftest_checks(labs, make_check):
    """In a temporary copy of the suite: ./lab new makes a lab that test, grade
    and export-kit handle with no other file touched."""
    c = make_check("./lab new makes a lab (in a temporary copy) whose solution passes, whose stub "
                   "fails, that grading and the learner kit include (in every language after "
                   "./lab translate, naming no path the kit lacks), and that the registry check "
                   "accepts")
    tmp = tempfile.mkdtemp(prefix="mha-newlab-")
    copy = os.path.join(tmp, "suite")
    env = {"MHA_GRADE_DIR": tmp + "-grade"}
    try:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                               capture_output=True, check=True).stdout.split(b"\0")
        for rel in files:
            if not rel:
                continue
            rel = rel.decode()
            src = os.path.join(ROOT, rel)
            if not os.path.isfile(src):
                continue
            dst = os.path.join(copy, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
        n = len(labs) + 1
        name = "%02d_throwaway" % n
        # The lab ./lab new must write, by the registry's names.
        lab = Lab({"number": n, "dir": name, "target": "throwaway", "title": "A throwaway lab"},
                  root=copy)
        main = [sys.executable, os.path.join(copy, "tools", "lab", "main.py")]
        # The grading work directory must be reachable by the build user: not under tmp (0700).
        # The same uid range: the machine-wide claim ledger keeps the nested
        # grader's one-off uids apart from this one's.
        env = dict(os.environ, MHA_GRADE_DIR=tmp.replace(tempfile.gettempdir(), "/var/tmp") + "-grade")
        out_base = os.path.join(tmp, "bazel")
        env["MHA_BAZEL_STARTUP"] = "--output_base=" + out_base
        before = _snapshot(copy)
        p = subprocess.run(main + ["new", name, lab.title], cwd=copy, capture_output=True,
                           text=True, env=env)
        after = _snapshot(copy)
        mirrored = tuple(os.path.dirname(b) + "/" for b in lab.build_files) + (lab.lesson_file,)
        for rel in sorted(set(after) - set(before)):
            if not rel.startswith(mirrored):
                c.fail("./lab new wrote %s, outside the lab's mirrored folders" % rel)
        for rel in sorted(r for r in before if after.get(r) != before[r]):
            if rel not in ("labs/labs.json", "README.md"):
                c.fail("./lab new changed %s" % rel)
        if p.returncode != 0:
            c.fail("./lab new failed: " + (p.stderr or p.stdout)[-300:])
            return [c]
        for problem in consistency.problems(root=copy):
            c.fail("registry check: " + problem)
        # The goldens ./lab new wrote are what the lab's generator writes (when
        # NumPy is here to run it): a template whose tests read them, not a
        # generator whose output nothing reads.
        golden = {r: h for r, h in after.items() if "/golden/" in r}
        if not golden:
            c.fail("./lab new wrote no goldens")
        elif subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                            capture_output=True).returncode == 0:
            gen = subprocess.run(["/usr/bin/python3", lab.goldens_generator], cwd=copy,
                                 capture_output=True, text=True)
            now = _snapshot(copy)
            changed = sorted(r for r in golden if now.get(r) != golden[r])
            if gen.returncode != 0 or changed:
                c.fail("its golden generator %s: %s" % (
                    "fails" if gen.returncode else "rewrites " + ", ".join(changed),
                    (gen.stderr or "")[-200:]))
        bazel = ["bazel", "--output_base=" + out_base]
        t = subprocess.run(bazel + ["test", "-c", "opt", "--config=solutions", lab.public_tests,
                                    lab.hidden_tests], cwd=copy, capture_output=True,
                           text=True)
        if t.returncode != 0:
            c.fail("its solution does not pass: " + t.stdout[-400:])
        t = subprocess.run(bazel + ["test", "-c", "opt", lab.public_tests], cwd=copy,
                           capture_output=True, text=True)
        if t.returncode == 0 or "is not implemented yet" not in t.stdout + t.stderr:
            c.fail("its stub does not fail its public tests with 'not implemented'")
        g = subprocess.run(main + ["grade", "--solutions", "--labs", str(n), "--json",
                                   os.path.join(tmp, "grade.json")], cwd=copy, capture_output=True,
                           text=True, env=env)
        try:
            with open(os.path.join(tmp, "grade.json")) as f:
                rep = json.load(f)
            mine = [r for r in rep["labs"] if r["lab"] == n][0]
            if mine["passed"] != mine["total"] or mine["total"] == 0:
                c.fail("grading its solution: %s" % mine["first_failure"])
        except (OSError, ValueError, IndexError, KeyError) as e:
            c.fail("grading it failed (%s): %s" % (e, (g.stderr or g.stdout)[-300:]))
        # Every language gets the lab's pages from ./lab translate alone.
        t = subprocess.run(main + ["translate"], cwd=copy, capture_output=True, text=True,
                           env=env)
        if t.returncode != 0:
            c.fail("./lab translate failed on it: " + (t.stderr or t.stdout)[-300:])
        kit_dir = os.path.join(tmp, "kit")
        k = subprocess.run(main + ["export-kit", kit_dir], cwd=copy, capture_output=True,
                           text=True, env=env)
        if k.returncode != 0 or not os.path.isfile(os.path.join(kit_dir, lab.learner_file)):
            c.fail("the learner kit does not include it: " + (k.stderr or k.stdout)[-300:])
        for lang in languages.load(copy):
            page = "docs/%s/%s.md" % (lang.pages, name)
            if t.returncode == 0 and not os.path.isfile(os.path.join(kit_dir, page)):
                c.fail("the learner kit has no %s after ./lab translate" % page)
        for problem in reference_problems(read_tree(kit_dir)):
            if name in problem:
                c.fail("in the kit, " + problem)
        subprocess.run(bazel + ["shutdown"], cwd=copy, capture_output=True)
    finally:
        subprocess.run(["rm", "-rf", tmp, env["MHA_GRADE_DIR"]])
    return [c]
