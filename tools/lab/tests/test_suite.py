"""suite: the trusted artefacts, found by the labs' labels and staged (made-up Bazel outputs)."""
import os
import stat

import pytest

from grader import suite as suite_mod
from grading_fakes import TESTS, make_labs, write_trusted
from labs import bin_path


def fake_bazel_outputs(root, labs):
    """bazel-bin and the execution root as Bazel would leave them for `labs`."""
    bin_dir, exec_root = os.path.join(root, "bazel-bin"), os.path.join(root, "execroot")
    for lab in labs:
        write_trusted(os.path.join(bin_dir, bin_path(lab.hidden_test_remote)), TESTS[lab.number])
        write_trusted(os.path.join(bin_dir, bin_path(lab.public_test_remote)), ["P.One"])
        write_trusted(os.path.join(bin_dir, bin_path(lab.reference_server)), [])
        for mode in suite_mod.MODES:
            rel = "%s/libruntime_%s.a" % (lab.dir, mode)
            os.makedirs(os.path.join(exec_root, lab.dir), exist_ok=True)
            with open(os.path.join(exec_root, rel), "w") as f:
                f.write("archive of %s\n" % rel)
            with open(os.path.join(bin_dir, bin_path(lab.learner_runtime(mode))) + ".manifest",
                      "w") as f:
                f.write("whole %s\narchive common/libtensor.a\nflag -lopenblas\n" % rel)
    os.makedirs(os.path.join(exec_root, "common"))
    with open(os.path.join(exec_root, "common", "libtensor.a"), "w") as f:
        f.write("tensor\n")
    return bin_dir, exec_root


@pytest.fixture
def env(workdir):
    checkout = str(workdir / "checkout")
    labs = make_labs(checkout)
    os.makedirs(os.path.join(checkout, "common"))
    with open(os.path.join(checkout, "common", "tensor.h"), "w") as f:
        f.write("// tensors\n")
    tools = str(workdir / "tools")
    os.makedirs(os.path.join(tools, "grader"))
    os.makedirs(os.path.join(tools, "tests"))
    for rel in ("grader/grade.py", "tests/test_grade.py"):
        with open(os.path.join(tools, rel), "w") as f:
            f.write("# %s\n" % rel)
    bin_dir, exec_root = fake_bazel_outputs(str(workdir), labs)

    def load():
        s = suite_mod.Suite(labs, str(workdir / "stage"), lambda m: None, root=checkout,
                            tools=tools, pch_headers=[])
        s.load(bin_dir, exec_root)
        return s
    return labs, load, tools, checkout, bin_dir


def test_the_suite_builds_every_labs_trusted_binaries_and_runtimes_by_their_labels(env):
    labs = env[0]
    targets = suite_mod.Suite(labs, "/stage", None).targets()
    assert targets[:5] == ["//tests/01_alpha:alpha_test_remote",
                           "//labs/01_alpha:alpha_public_test_remote",
                           "//tests/01_alpha:reference_server",
                           "//tests/01_alpha:learner_runtime_isolated",
                           "//tests/01_alpha:learner_runtime_cumulative"]
    assert len(targets) == 5 * len(labs)


def test_the_suite_finds_each_labs_artefacts_where_bazel_puts_its_labels(env):
    labs, load, _, _, bin_dir = env
    a = load().artefacts[2]
    assert a.hidden == os.path.join(bin_dir, "tests/02_beta/beta_test_remote")
    assert a.public == os.path.join(bin_dir, "labs/02_beta/beta_public_test_remote")
    assert a.runfiles("hidden") == a.hidden + ".runfiles/mha_labs"


def test_the_test_names_come_from_the_binary_in_run_order(env):
    s = env[1]()
    assert s.artefacts[2].test_names("hidden") == ["B.Shape", "B.Values", "B.Edge"]
    assert s.artefacts[2].test_names("public") == ["P.One"]


def test_a_missing_artefact_is_a_build_error_naming_it(env):
    labs, load, _, _, bin_dir = env
    os.remove(os.path.join(bin_dir, "tests/01_alpha/alpha_test_remote"))
    with pytest.raises(suite_mod.BuildError, match="tests/01_alpha/alpha_test_remote"):
        load()


def test_the_staged_runtime_links_whole_archives_between_whole_archive_flags(env):
    labs, load = env[0], env[1]
    s = load()
    args = s.link_inputs(labs[0], "isolated")
    assert args[0] == "-Wl,--whole-archive" and args[2] == "-Wl,--no-whole-archive"
    assert args[1].startswith(s.runtime_root + "/") and args[-1] == "-lopenblas"
    with open(args[1]) as f:
        assert f.read() == "archive of 01_alpha/libruntime_isolated.a\n"


def test_the_suite_stages_the_headers_readable_by_everyone(env):
    s = env[1]()
    staged = os.path.join(s.include_root, "labs", "01_alpha", "alpha.h")
    assert stat.S_IMODE(os.stat(staged).st_mode) == 0o644
    assert not os.path.exists(os.path.join(s.include_root, "labs", "01_alpha", "alpha.cc"))
    assert s.compile_flags()[-2:] == ["-I", s.include_root]     # no headers to precompile


def test_the_suite_fingerprint_changes_when_a_grader_module_changes(env):
    _, load, tools = env[0], env[1], env[2]
    before = load().fingerprint
    with open(os.path.join(tools, "grader", "grade.py"), "a") as f:
        f.write("# a fix\n")
    assert load().fingerprint != before


def test_the_suite_fingerprint_ignores_the_graders_unit_tests(env):
    _, load, tools = env[0], env[1], env[2]
    before = load().fingerprint
    with open(os.path.join(tools, "tests", "test_grade.py"), "a") as f:
        f.write("# one more test\n")
    assert load().fingerprint == before


def test_the_suite_fingerprint_changes_when_a_staged_header_changes(env):
    load, checkout = env[1], env[3]
    before = load().fingerprint
    with open(os.path.join(checkout, "common", "tensor.h"), "a") as f:
        f.write("// changed\n")
    assert load().fingerprint != before
