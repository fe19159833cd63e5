"""Unit tests of what the learner's tools read from Bazel and the compiler
(tools/lab/learner/results.py, compiler_warnings.py, and the compiler messages
of reports/messages.py): the first error in the learner's own file, the
warnings cache, the test summary, GoogleTest's XML and logs, time limits.

Run: /usr/bin/python3 -m pytest tools/lab/tests
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from labs import ROOT, Lab  # noqa: E402
from learner import compiler_warnings, results  # noqa: E402
from reports import messages  # noqa: E402

OWN = "labs/03_output_projection/multi_head_attention.cc"
LAB1 = "labs/01_split_heads/split_heads.cc"


def _put(root, lab, data):
    p = os.path.join(root, lab.learner_file)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


# --------------------------------------------------------------------------- compiler output

ERROR_IN_OWN_FILE = """\
ERROR: /home/me/kit/labs/03_output_projection/BUILD:4:12: Compiling labs/03_output_projection/multi_head_attention.cc failed: (Exit 1): gcc failed: error executing command /usr/bin/gcc -U_FORTIFY_SOURCE
labs/03_output_projection/multi_head_attention.cc: In member function 'void f()':
labs/03_output_projection/multi_head_attention.cc:20:3: error: 'foo' was not declared in this scope
   20 |   foo();
      |   ^~~
labs/03_output_projection/multi_head_attention.cc:24:10: error: 'outt' was not declared in this scope
"""

TEMPLATE_ERROR = """\
In file included from /usr/include/xtensor/xbuilder.hpp:32,
                 from ./common/tensor.h:15,
                 from labs/03_output_projection/multi_head_attention.cc:4:
/usr/include/xtensor/xoperation.hpp: In instantiation of 'constexpr auto xt::detail::plus::operator()(T1&&, T2&&) const [with T1 = float; T2 = std::string]':
/usr/include/xtensor/xfunction.hpp:145:83:   required from 'struct xt::xcontainer_inner_types<xt::xfunction<xt::detail::plus> >'
labs/03_output_projection/multi_head_attention.cc:43:55:   required from here
/usr/include/xtensor/xoperation.hpp:107:9: error: no match for 'operator+' (operand types are 'float' and 'std::string')
  107 |         BINARY_OPERATOR_FUNCTOR(plus, +);
/usr/include/xtensor/xoperation.hpp:86:9: note: candidate: 'template<class T1, class T2> constexpr auto xt::detail::operator+(const std::complex<_Tp>&, const T2&)'
"""

WSHADOW = """\
INFO: From Compiling labs/03_output_projection/multi_head_attention.cc:
labs/03_output_projection/multi_head_attention.cc: In constructor 'mha::MultiHeadAttention::MultiHeadAttention(int, int, uint64_t)':
labs/03_output_projection/multi_head_attention.cc:20:57: warning: declaration of 'n_heads' shadows a member of 'mha::MultiHeadAttention' [-Wshadow]
   20 | MultiHeadAttention::MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed) {
In file included from labs/03_output_projection/multi_head_attention.cc:4:
./labs/03_output_projection/multi_head_attention.h:48:16: note: shadowed declaration is here
labs/03_output_projection/multi_head_attention.cc:20:44: warning: declaration of 'd_model' shadows a member of 'mha::MultiHeadAttention' [-Wshadow]
labs/03_output_projection/multi_head_attention.cc:20:57: warning: declaration of 'n_heads' shadows a member of 'mha::MultiHeadAttention' [-Wshadow]
"""

WUNUSED = """\
labs/03_output_projection/multi_head_attention.cc:20:44: warning: unused parameter 'embed_dim' [-Wunused-parameter]
labs/03_output_projection/multi_head_attention.cc:29:59: warning: unused parameter 'x' [-Wunused-parameter]
"""


def test_the_first_error_in_the_learners_own_file_comes_as_one_line():
    assert messages.first_error(ERROR_IN_OWN_FILE, OWN) == (
        "labs/03_output_projection/multi_head_attention.cc:20: error: "
        "'foo' was not declared in this scope")


def test_an_error_in_a_library_header_is_reported_at_the_learners_line():
    assert messages.first_error(TEMPLATE_ERROR, OWN) == (
        "labs/03_output_projection/multi_head_attention.cc:43: error: no match for 'operator+' "
        "(operand types are 'float' and 'std::string') (in xtensor/xoperation.hpp:107)")


def test_the_labs_own_file_comes_before_an_earlier_labs_file():
    out = ("labs/01_split_heads/split_heads.cc:5:1: error: expected ';'\n" + ERROR_IN_OWN_FILE)
    assert messages.first_error(out, OWN, [LAB1]).startswith(OWN + ":20: error:")
    # Building lab 3 on a broken lab 1: the error is in lab 1's file.
    assert messages.first_error(out.splitlines()[0], OWN, [LAB1]) == (
        "labs/01_split_heads/split_heads.cc:5: error: expected ';'")


def test_an_error_nowhere_near_a_learner_file_is_still_reported():
    out = "/usr/include/xtensor/xarray.hpp:10:1: error: something odd\n"
    assert messages.first_error(out, OWN) == "xtensor/xarray.hpp:10: error: something odd"


def test_no_error_means_none_and_warnings_are_not_errors():
    assert messages.first_error(WSHADOW + WUNUSED, OWN) is None
    assert messages.first_error("", OWN) is None


def test_a_fatal_error_counts():
    out = "labs/03_output_projection/multi_head_attention.cc:5:10: fatal error: nope.h: " \
          "No such file or directory\n"
    assert messages.first_error(out, OWN) == (
        OWN + ":5: fatal error: nope.h: No such file or directory")


def test_shadow_warnings_come_once_each_in_order():
    assert messages.warnings_in(WSHADOW, {OWN}) == {OWN: [
        OWN + ":20: warning: declaration of 'n_heads' shadows a member of "
        "'mha::MultiHeadAttention' [-Wshadow]",
        OWN + ":20: warning: declaration of 'd_model' shadows a member of "
        "'mha::MultiHeadAttention' [-Wshadow]"]}


def test_warnings_of_other_files_are_not_the_learners():
    assert messages.warnings_in(WSHADOW, {LAB1}) == {}


def test_an_unused_parameter_of_a_function_that_is_still_a_stub_is_not_shown():
    source = "\n" * 19 + (
        "MultiHeadAttention::MultiHeadAttention(int embed_dim, int num_heads) {\n"  # line 20
        "  d_model = d_model;\n"
        "}\n") + "\n" * 6 + (
        "AttentionResult MultiHeadAttention::attend(const Tensor2& x) const {\n"   # line 29
        '  throw std::logic_error("lab 3: attend is not implemented yet");\n'
        "}\n")
    warnings = messages.warnings_in(WUNUSED, {OWN})[OWN]
    assert compiler_warnings.relevant_warnings(warnings, source) == [
        OWN + ":20: warning: unused parameter 'embed_dim' [-Wunused-parameter]"]


def test_a_link_error_says_what_is_missing():
    out = ("/usr/bin/ld: x.o: in function `Test()':\n"
           "x.cc:(.text+0x1): undefined reference to `mha::combine_heads(Tensor3 const&)'\n")
    assert messages.linker_complaint(out).startswith(
        "does not link: undefined reference to `mha::combine_heads(Tensor3 const&)'; is a "
        "function of the header missing")
    assert messages.linker_complaint("all fine") is None


def test_the_compile_command_becomes_a_syntax_check():
    args = ["/usr/bin/gcc", "-MD", "-MF", "x.d", "-Wall", "-c", OWN, "-o", "x.o"]
    assert compiler_warnings.syntax_only_command(args, OWN) == ["/usr/bin/gcc", "-Wall", "-fsyntax-only",
                                                      OWN]
    assert compiler_warnings.syntax_only_command(args, LAB1) is None


def test_warnings_are_remembered_for_the_content_that_had_them(tmp_path):
    root = str(tmp_path)
    lab = Lab({"number": 3, "dir": "03_output_projection", "target": "multi_head_attention",
               "title": "t", "stub_sha256": ""})
    _put(root, lab, b"version 1")
    state = os.path.join(root, "warnings.json")
    got = compiler_warnings.remember_warnings(WSHADOW, [lab], state, root)
    assert len(got[OWN]) == 2
    assert len(compiler_warnings.known_warnings([lab], state, root)[OWN]) == 2   # a later run, cached
    _put(root, lab, b"version 2")
    assert compiler_warnings.known_warnings([lab], state, root) == {}           # the file changed
    # Compiled again without warnings: the entry is replaced by an empty one.
    compiler_warnings.remember_warnings("INFO: From Compiling %s:\n" % OWN, [lab], state, root)
    assert compiler_warnings.known_warnings([lab], state, root) == {}


# --------------------------------------------------------------------------- test results

SUMMARY = """\
//labs/01_split_heads:split_heads_public_test                   (cached) PASSED in 0.1s
//labs/02_batched_attention:attention_public_test                FAILED in 0.3s
//labs/03_output_projection:multi_head_attention_public_test     FAILED TO BUILD
//labs/08_kv_cache:configurator_test                             NO STATUS
"""

GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1">
  <testsuite name="A" tests="3">
    <testcase name="One" status="run" classname="A"/>
    <testcase name="Two" status="run" classname="A">
      <failure message="x"><![CDATA[labs/x_test.cc:12
Value of: AllClose(...)
  Actual: false (looks like scores scaled by 1/sqrt(d_model); see docs/02_batched_attention.md)
Expected: true]]></failure>
    </testcase>
    <testcase name="Three" status="notrun" classname="A"/>
  </testsuite>
</testsuites>
"""

BAZEL_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="labs/01_split_heads/split_heads_public_test" tests="1">
<testcase name="labs/01_split_heads/split_heads_public_test" status="run"><error message="exited with error code 136"></error></testcase>
</testsuite></testsuites>
"""

CRASH_LOG = """\
Running main() from gtest_main.cc
[==========] Running 3 tests from 1 test suite.
[ RUN      ] S.First
labs/01_split_heads/t.cc:9: Failure
C++ exception with description "std::bad_alloc" thrown in the test body.
[  FAILED  ] S.First (0 ms)
[ RUN      ] S.Second
[       OK ] S.Second (0 ms)
[ RUN      ] S.RejectsZeroHeads
"""


def test_the_summary_gives_each_targets_status():
    assert results.parse_summary(SUMMARY) == {
        "//labs/01_split_heads:split_heads_public_test": "PASSED",
        "//labs/02_batched_attention:attention_public_test": "FAILED",
        "//labs/03_output_projection:multi_head_attention_public_test": "FAILED TO BUILD",
        "//labs/08_kv_cache:configurator_test": "NO STATUS"}


def test_test_xml_cases_and_their_failures():
    cases = results.parse_test_xml(GTEST_XML)
    assert [c for c, _ in cases] == ["A.One", "A.Two"]      # not run: not counted
    assert cases[0][1] is None and "looks like" in cases[1][1]


def test_the_kits_check_keeps_the_cases_that_did_not_run():
    cases = results.parse_test_xml(GTEST_XML, keep_skipped=True)
    assert [c for c, _ in cases] == ["A.One", "A.Two", "A.Three"]
    assert cases[2][1] is None and "looks like" in cases[1][1]


def test_the_summary_lines_of_bazel_test():
    out = ("//labs/01_split_heads:split_heads_public_test    (cached) PASSED in 0.1s\n"
           "//labs/02_x:x_public_test      FAILED in 0.2s\n"
           "//labs/03_y:y_public_test    FAILED TO BUILD\n"
           "//labs/04_z:z_public_test    NO STATUS\n")
    assert results.parse_summary(out) == {
        "//labs/01_split_heads:split_heads_public_test": "PASSED",
        "//labs/02_x:x_public_test": "FAILED", "//labs/03_y:y_public_test": "FAILED TO BUILD",
        "//labs/04_z:z_public_test": "NO STATUS"}


def test_a_crashed_program_is_read_from_its_log():
    cases, running = results.parse_gtest_log(CRASH_LOG)
    assert [(c, f is None) for c, f in cases] == [("S.First", False), ("S.Second", True)]
    assert running == "S.RejectsZeroHeads"
    sig = results.exit_signal(results.parse_test_xml(BAZEL_XML)[0][1])
    assert sig == 8
    assert results.crash_note(running, sig) == (
        "S.RejectsZeroHeads crashed the test program (SIGFPE: an integer division by zero?)")


def test_counting_tests_in_a_source_counts_macro_uses():
    src = ("#define BOTH(B) \\\n  TEST(Loop, B) { Check##B(1); } \\\n  TEST(Batched, B) { }\n"
           "TEST(Softmax, Hand) {}\nTEST_F(Fixture, X) {}\nBOTH(Weights) {}\nBOTH(Output) {}\n")
    assert results.count_tests(src) == 6


def test_lab_results_read_the_score_from_the_labs_public_test(tmp_path, monkeypatch):
    logs = str(tmp_path)
    d = os.path.join(logs, "labs", "02_batched_attention", "attention_public_test")
    os.makedirs(d)
    with open(os.path.join(d, "test.xml"), "w") as f:
        f.write(GTEST_XML)
    lab = Lab({"number": 2, "dir": "02_batched_attention", "target": "attention", "title": "t",
               "stub_sha256": ""})
    r = results.lab_results([lab], SUMMARY, 3, logs)[2]
    assert (r.passed, r.total, r.all_pass, r.error) == (1, 2, False, "")
    assert r.first.startswith("A.Two: looks like scores scaled by 1/sqrt(d_model)")


def test_a_lab_that_does_not_compile_says_where():
    lab = Lab({"number": 3, "dir": "03_output_projection", "target": "multi_head_attention",
               "title": "t", "stub_sha256": ""})
    r = results.lab_results([lab], SUMMARY + ERROR_IN_OWN_FILE, 1, None)[3]
    assert r.error == "does not compile: " + OWN + ":20: error: 'foo' was not declared in this " \
                                                    "scope"
    assert r.total == results.count_tests(open(os.path.join(
        ROOT, "labs/03_output_projection/multi_head_attention_public_test.cc")).read())


_TIMEOUT_BUILD = '''load("//common:lab.bzl", "lab_test")

lab_test(
    name = "x_public_test",
    srcs = ["x_public_test.cc"],
)

sh_test(
    name = "quick_test",
    size = "small",
    srcs = ["quick_run_test.sh"],
)

sh_test(
    name = "long_test",
    timeout = "long",
    srcs = ["long.sh"],
)

sh_test(
    name = "plain_test",
    srcs = ["plain.sh"],
)
'''


def test_a_tests_time_limit_comes_from_its_size_or_timeout_in_the_build_file(workdir):
    (workdir / "labs" / "10_x").mkdir(parents=True)
    (workdir / "labs" / "10_x" / "BUILD").write_text(_TIMEOUT_BUILD)
    limit = lambda name: results.time_limit("//labs/10_x:" + name, str(workdir))  # noqa: E731
    assert limit("x_public_test") == 60      # lab_test's size defaults to small
    assert limit("quick_test") == 60
    assert limit("long_test") == 900
    assert limit("plain_test") == 300        # Bazel's default size, medium
    assert limit("missing_test") is None


def test_a_timed_out_test_names_its_limit_and_slow_code_not_only_a_loop(workdir):
    (workdir / "labs" / "10_x").mkdir(parents=True)
    (workdir / "labs" / "10_x" / "BUILD").write_text(_TIMEOUT_BUILD)
    text = results.timeout_message("//labs/10_x:quick_test", str(workdir))
    assert text.startswith("quick_test ran past its 60 s limit")
    assert "too slow" in text and "docs/02_batched_attention.md" in text
    assert "Fast enough for the later labs" in text


def test_lab_2s_lesson_has_the_section_the_timeout_message_names():
    with open(os.path.join(ROOT, "docs", "02_batched_attention.md")) as f:
        assert "**Fast enough for the later labs.**" in f.read()


_DERIVED_BUILD = '''load("//common:lab.bzl", "lab_library", "lab_program", "lab_test")

lab_library()

lab_test(deps = ["//labs/04_causal_mask:causal_mask"])

lab_program(
    name = "sweep",
    deps = [":x"],
    more_quick_tests = {
        "sweep_order_quick_test": ["a.png", "a.csv"],
    },
    quick = ["b.png", "b.csv"],
)
'''


def test_the_time_limit_of_a_test_the_macros_name_is_their_small_size(workdir):
    (workdir / "labs" / "10_x").mkdir(parents=True)
    (workdir / "labs" / "10_x" / "BUILD").write_text(_DERIVED_BUILD)
    (workdir / "tests" / "10_x").mkdir(parents=True)
    (workdir / "tests" / "10_x" / "BUILD").write_text(
        'graded_test(\n    size = "medium",\n    deps = ["//tests/common:naive"],\n)\n')
    limit = lambda target: results.time_limit(target, str(workdir))  # noqa: E731
    assert limit("//labs/10_x:x_public_test") == 60
    assert limit("//labs/10_x:sweep_quick_test") == 60
    assert limit("//labs/10_x:sweep_order_quick_test") == 60
    assert limit("//labs/10_x:other_quick_test") is None
    assert limit("//tests/10_x:x_test") == 300
