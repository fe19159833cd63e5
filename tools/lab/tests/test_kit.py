"""Unit tests of tools/lab/course/kit.py: the path-reference scan, the stub
recognition of the exporter, and what goes into the kit.

Run: /usr/bin/python3 -m pytest tools/lab/tests
"""
import hashlib
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from course import kit, kit_references  # noqa: E402
from labs import Lab, load_labs  # noqa: E402


def scan(files):
    return kit_references.reference_problems({k: v.encode() for k, v in files.items()})


KIT = {
    "labs/01_split_heads/split_heads.cc": "int x;\n",
    "labs/01_split_heads/BUILD": 'lab_library(name = "split_heads")\n',
    "docs/01_split_heads.md": "# Lab 1\n",
    "common/tensor.h": "// tensors\n",
}


def with_file(path, text):
    files = dict(KIT)
    files[path] = text
    return files


# --------------------------------------------------------------------------- the scan

def test_a_path_the_kit_has_is_fine():
    assert scan(with_file("docs/02.md", "Read docs/01_split_heads.md and common/tensor.h.\n")) == []


def test_a_hidden_test_path_is_reported_with_file_and_line():
    problems = scan(with_file("common/x.h", "// one\n// see tests/01_split_heads/x_test.cc\n"))
    assert problems == ["common/x.h:2: `tests/01_split_heads/x_test.cc` is not in the kit"]


def test_solutions_and_tools_goldens_are_reported():
    text = "int a;  // solutions/01_split_heads/split_heads.cc\nint b;  // tools/goldens/\n"
    problems = scan(with_file("labs/01_split_heads/x.h", text))
    assert len(problems) == 2
    assert "solutions/01_split_heads/split_heads.cc" in problems[0]
    assert "tools/goldens/" in problems[1]


def test_placeholders_match_any_lab():
    ok = "See labs/NN_name/BUILD, docs/NN_name.md and labs/<dir>/<target>.cc.\n"
    assert scan(with_file("docs/x.md", ok)) == []
    bad = "The generator is tests/NN_name/gen_goldens.py.\n"
    assert len(scan(with_file("docs/x.md", bad))) == 1


def test_globs_match_existing_files():
    assert scan(with_file("docs/x.md", "every `labs/*/BUILD` file\n")) == []
    assert len(scan(with_file("docs/x.md", "every `tests/*/*_test.cc` file\n"))) == 1


def test_bazel_labels_name_packages_and_patterns():
    ok = "bazel test //labs/01_split_heads/... and //labs/01_split_heads:split_heads\n"
    assert scan(with_file("docs/x.md", ok)) == []
    problems = scan(with_file("docs/x.md", "bazel test //tests/01_split_heads:x_test\n"))
    assert problems == ["docs/x.md:1: `//tests/01_split_heads:x_test` is not in the kit"]


def test_a_bazel_target_counts_as_a_path():
    # Tests name the programs they run by runfiles paths like common/tensor_tool.
    files = with_file("common/BUILD", 'cc_binary(name = "tensor_tool")\n')
    files["common/tool_test.cc"] = 'setenv("X", "common/tensor_tool", 1);\n'
    assert scan(files) == []


def test_markdown_links_resolve_from_the_file():
    ok = "[lesson 1](01_split_heads.md) and [tensor](../common/tensor.h#L3)\n"
    assert scan(with_file("docs/x.md", ok)) == []
    problems = scan(with_file("docs/x.md", "[manual](INSTRUCTORS.md)\n"))
    assert problems == ["docs/x.md:1: `INSTRUCTORS.md` is not in the kit"]


def test_paths_that_leave_the_repository_are_reported():
    problems = scan(with_file("WORKSPACE", "# ../shared/BAZEL_OFFLINE.md explains\n"))
    assert problems == ["WORKSPACE:1: `../shared/BAZEL_OFFLINE.md` is outside the repository"]
    problems = scan(with_file("docs/x.md", "as /work/shared/API.md says\n"))
    assert problems == ["docs/x.md:1: `/work/shared/API.md` is outside the repository"]


def test_system_paths_and_urls_are_not_references():
    text = ("#include </usr/include/xtensor/xarray.hpp>\n"
            "// https://github.com/example/labs/tests/x and @system//:xtensor\n")
    assert scan(with_file("common/y.h", text)) == []


def test_config_solutions_is_a_reference_to_solutions():
    text = "bazel run --config=solutions //labs/01_split_heads:x\n"
    problems = scan(with_file("docs/x.md", text))
    assert problems == ["docs/x.md:1: `--config=solutions` builds from solutions/, which is "
                        "not in the kit"]


def test_a_paragraph_that_says_where_the_path_is_may_name_it():
    md = ("The generator, tests/NN_name/gen_goldens.py,\n"
          "is in the instructors' repository.\n\n"
          "But tests/NN_name/gen_goldens.py here is not excused.\n")
    problems = scan(with_file("docs/x.md", md))
    assert problems == ["docs/x.md:4: `tests/NN_name/gen_goldens.py` is not in the kit"]
    assert scan(with_file("docs/x.md", "see bench/BUILD (not in the learner kit)\n")) == []


def test_a_comment_block_that_says_where_the_path_is_may_name_it():
    code = ("// Goldens from tests/01_split_heads/gen_goldens.py,\n"
            "// in the instructors' repository.\n"
            "int x;  // tests/01_split_heads/gen_goldens.py\n")
    problems = scan(with_file("labs/01_split_heads/y_test.cc", code))
    assert problems == ["labs/01_split_heads/y_test.cc:3: `tests/01_split_heads/gen_goldens.py` "
                        "is not in the kit"]


def test_the_listed_instructor_only_code_is_allowed_and_nothing_else():
    code = '"//tests/%s:remote_client" % lab.dir\n'
    assert scan(with_file("common/lab.bzl", code)) == []
    assert len(scan(with_file("common/other.bzl", code))) == 1


def test_binary_files_are_not_scanned():
    files = {k: v.encode() for k, v in KIT.items()}
    files["labs/01_split_heads/golden/x.npy"] = b"\x93NUMPY\0 tests/secret/x"
    files["docs/images/x.png"] = b"\x89PNG tests/secret"
    assert kit_references.reference_problems(files) == []


def test_passages_split_markdown_by_paragraph_and_code_by_comment_runs():
    assert [(s, len(p)) for s, p in kit_references.passages("x.md", "a\nb\n\nc\n")] == [(1, 2), (4, 1)]
    code = "int a;\n// one\n// two\nint b;\n"
    assert [(s, len(p)) for s, p in kit_references.passages("x.cc", code)] == [(1, 1), (2, 2), (4, 1)]


# --------------------------------------------------------------------------- stubs

def _lab(stub_sha):
    return Lab({"number": 1, "dir": "01_split_heads", "target": "split_heads",
                "title": "Split", "stub_sha256": stub_sha})


def _write(root, rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


STUB = b'throw std::logic_error("lab 1: split_heads is not implemented yet");\n'
WORK = b"return x;  // the learner's work\n"


def test_the_stub_in_the_working_tree_is_taken_when_its_hash_matches(tmp_path):
    root = str(tmp_path)
    _write(root, "labs/01_split_heads/split_heads.cc", STUB)
    assert kit.stub_bytes(_lab(hashlib.sha256(STUB).hexdigest()), root) == STUB


def test_finished_work_in_the_tree_is_replaced_by_the_committed_stub(tmp_path):
    root = str(tmp_path)
    _write(root, "labs/01_split_heads/split_heads.cc", STUB)
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(["git", "-C", root, "add", "-A"], check=True)
    subprocess.run(["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "stub"], check=True)
    _write(root, "labs/01_split_heads/split_heads.cc", WORK)
    assert kit.stub_bytes(_lab(hashlib.sha256(STUB).hexdigest()), root) == STUB


def test_no_stub_anywhere_is_an_error_not_a_leak_of_the_work(tmp_path):
    root = str(tmp_path)
    _write(root, "labs/01_split_heads/split_heads.cc", WORK)
    with pytest.raises(kit.StubError, match="not the stub recorded"):
        kit.stub_bytes(_lab(hashlib.sha256(STUB).hexdigest()), root)


def test_every_registered_stub_is_in_this_checkout():
    for lab in load_labs():
        assert hashlib.sha256(kit.stub_bytes(lab)).hexdigest() == lab.stub_sha256


# --------------------------------------------------------------------------- contents

def test_the_kit_has_the_learner_tools_and_no_instructor_files():
    files = kit.kit_files(load_labs())
    # tools/lab/locale/: the terminal's compiled catalogues (test_i18n.py).
    tools = {f for f in files if f.startswith("tools/lab/") and
             not f.startswith("tools/lab/locale/")}
    assert tools == {"tools/lab/" + f for f in kit.kit_tools()}
    for f in files:
        assert not f.startswith(("solutions/", "tests/", "tools/goldens/", "bench/"))
        assert f not in ("docs/INSTRUCTORS.md", "docs/SCALING.md", "docs/PERFORMANCE.md")
    assert "README.md" in files and "lab" in files and "tools/setup.sh" in files
    readme = files["README.md"].decode()
    assert "not your grade" in readme
    for lab in load_labs():
        assert lab.learner_file in readme


def test_the_kit_of_this_checkout_names_no_path_it_does_not_have():
    # The kit check of ./lab test scans an exported kit the same way, minutes later.
    assert kit_references.reference_problems(kit.kit_files(load_labs())) == []


def test_the_kits_bazelrc_keeps_the_learners_settings_and_drops_the_instructors_configs():
    rc = ("# Learners read failures in the terminal.\n"
          "test --test_output=errors\n\n"
          "# --config=solutions: build from solutions/.\n"
          "build:solutions --define=mha_solutions=1\n\n"
          "# Benchmarks.\nbuild:bench -c opt\nbuild:bench --config=solutions\n\n"
          "# A learner's own config stays.\nbuild:asan --copt=-fsanitize=address\n")
    out = kit.kit_bazelrc(rc)
    assert "test --test_output=errors" in out and "build:asan" in out
    assert "build:solutions" not in out and "build:bench" not in out
    assert "not in the learner kit" in " ".join(l.lstrip("# ") for l in out.splitlines())
    assert kit_references.reference_problems({".bazelrc": out.encode()}) == []
    assert kit.kit_bazelrc("test --x\n") == "test --x\n"


# --------------------------------------------------------------------------- the learner's tools

def test_the_kit_ships_the_learner_path_of_main_and_no_instructors_module():
    tools = kit.kit_tools()
    for must in ("main.py", "labs.py", "learner/__init__.py", "learner/cli.py",
                 "learner/status.py", "learner/watch.py", "learner/hint.py",
                 "reports/__init__.py", "reports/messages.py"):
        assert must in tools
    assert not [t for t in tools if t.startswith(("grader/", "checks/", "course/", "tests/"))]
    assert "reports/report.py" not in tools


def test_imports_follow_the_branch_a_kit_takes():
    source = ("import os\nfrom learner import cli\n"
              "if not cli.is_kit():\n    from grader import instructor\n"
              "else:\n    import kit_only\n"
              "def f():\n    from reports import messages\n")
    assert kit.imported_names(source) == ["os", "learner", "learner.cli", "kit_only",
                                          "reports", "reports.messages"]


def test_a_kit_that_holds_the_course_key_is_refused(workdir, monkeypatch):
    from grader import course_key
    key = course_key.new(str(workdir / "course.key"))
    monkeypatch.setattr(course_key, "DEFAULT", key.path)
    kit_dir = workdir / "kit"
    (kit_dir / "notes").mkdir(parents=True)
    (kit_dir / "notes" / "keep.txt").write_text("mine: " + key.secret.hex() + "\n")
    (kit_dir / "course.key").write_text(key.text())
    problems = kit.leaks(str(kit_dir))
    assert any("notes/keep.txt holds the course key" in p for p in problems)
    assert any("course.key holds the course key" in p for p in problems)
