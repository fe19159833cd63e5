"""learner_build: compiling and linking a learner's file, with a fake toolchain."""
import os

import pytest

import limits
from grader import learner_build
from grader import process
from grader.workspace import Workspace
from grading_fakes import (FakeIsolation, FakeJob, FakeToolchain, make_labs, make_suite,
                           passing_source)


@pytest.fixture
def env(workdir):
    os.chmod(str(workdir), 0o711)
    labs = make_labs(str(workdir / "checkout"))
    ws = Workspace.create(str(workdir / "work"))
    toolchain = FakeToolchain()
    suite = make_suite(labs, ws, str(workdir / "bazel-bin"))
    build = learner_build.Builder(ws, FakeIsolation(toolchain), suite, labs)
    return build, labs, toolchain


def test_the_same_source_is_compiled_once_per_suite_version(env):
    build, labs, toolchain = env
    a = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    b = build.compile_source(labs[0], passing_source(1), FakeJob(1))
    assert a.ok and b.ok and a.key == b.key and toolchain.compiles == 1


def test_a_new_suite_fingerprint_compiles_the_source_again(env):
    build, labs, toolchain = env
    first = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    build.suite.fingerprint = "suite-v2"
    second = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    assert first.key != second.key and toolchain.compiles == 2


def test_a_compiled_object_lands_in_the_private_cache(env):
    build, labs, _ = env
    obj = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    assert obj.path.startswith(build.workspace.cache_dir + "/obj/")
    with open(obj.path, "rb") as f:
        assert f.read() == passing_source(1)


def test_a_compile_error_names_the_learners_file_not_the_job_directory(env):
    build, labs, _ = env
    obj = build.compile_source(labs[0], b"#error\n", FakeJob(0))
    assert not obj.ok and "does not compile: labs/01_alpha/alpha.cc:1" in obj.message
    assert build.workspace.jobs_dir not in obj.message


def test_a_compile_error_is_cached_like_a_success(env):
    build, labs, toolchain = env
    build.compile_source(labs[0], b"#error\n", FakeJob(0))
    again = build.compile_source(labs[0], b"#error\n", FakeJob(0))
    assert not again.ok and toolchain.compiles == 1


def test_a_compiler_that_runs_too_long_is_reported_with_its_limit(env):
    build, labs, toolchain = env
    toolchain.canned["g++ -c"] = process.Result(-9, "", True, 60.0)
    obj = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    assert not obj.ok and "longer than %d s" % limits.COMPILE_SECONDS in obj.message


def test_the_second_layer_rejects_inline_assembly_before_the_compiler_runs(env):
    build, labs, toolchain = env
    obj = build.compile_source(labs[0], b'void f() { asm("nop"); }\n', FakeJob(0))
    assert not obj.ok and "inline assembly" in obj.message and toolchain.compiles == 0


def test_without_the_second_layer_the_source_reaches_the_compiler(env):
    build, labs, toolchain = env
    build.second_layer = False
    obj = build.compile_source(labs[0], b'void f() { asm("nop"); }\n', FakeJob(0))
    assert obj.ok and toolchain.compiles == 1


def test_an_object_carrying_lto_bytecode_is_rejected(env):
    build, labs, _ = env
    build.isolation.toolchain.canned["readelf"] = process.Result(
        0, "  [ 5] .gnu.lto_main.0   PROGBITS  0000 000040 000100 00  E  0 0 1\n", False, 0.0)
    obj = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    assert not obj.ok and obj.message.startswith("rejected: the object carries "
                                                 "link-time-optimisation bytecode")


def test_the_link_puts_the_labs_own_object_first_and_the_runtime_last(env):
    build, labs, toolchain = env
    own = build.compile_source(labs[1], passing_source(2), FakeJob(0))
    dep = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    server = build.link_server(labs[1], "cumulative", [own, dep], FakeJob(0))
    argv = toolchain.links[0]["argv"]
    assert server.ok and toolchain.links[0]["objects"] == [passing_source(2), passing_source(1)]
    assert argv[-4:] == ["-Wl,--whole-archive", "/stage/runtime/02_beta-cumulative.a",
                         "-Wl,--no-whole-archive", "-lopenblas"]


def test_the_link_key_holds_the_mode(env):
    build, labs, toolchain = env
    own = build.compile_source(labs[1], passing_source(2), FakeJob(0))
    iso = build.link_server(labs[1], "isolated", [own], FakeJob(0))
    cum = build.link_server(labs[1], "cumulative", [own], FakeJob(0))
    assert iso.key != cum.key and len(toolchain.links) == 2


def test_a_link_that_fails_is_a_link_error(env):
    build, labs, toolchain = env
    own = build.compile_source(labs[0], passing_source(1), FakeJob(0))
    toolchain.canned["g++ -o"] = process.Result(1, "obj0.o: undefined reference to `mha::x()'",
                                                False, 0.1)
    server = build.link_server(labs[0], "isolated", [own], FakeJob(0))
    assert not server.ok and server.message.startswith("does not link")


def test_a_call_outside_the_call_surface_is_rejected_at_the_link(env):
    build, labs, toolchain = env
    os.makedirs(os.path.join(labs[0].root, "tests", labs[0].dir))
    with open(os.path.join(labs[0].root, "tests", labs[0].dir, "remote.cc"), "w") as f:
        f.write('MHA_REMOTE_FUNCTION(Tensor, alpha_fn, (x))\n')
    toolchain.canned["nm"] = process.Result(0, "                 U mha::alpha_fn(int)\n",
                                            False, 0.0)
    own = build.compile_source(labs[1], passing_source(2), FakeJob(0))
    server = build.link_server(labs[1], "cumulative", [own], FakeJob(0))
    assert not server.ok and "lab 2 may not call alpha_fn" in server.message
    assert toolchain.links == []
