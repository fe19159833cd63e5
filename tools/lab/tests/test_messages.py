"""messages: what a learner reads, and that nothing unsafe gets printed."""
from reports import messages


def test_printable_removes_terminal_escapes_and_bidi_controls():
    assert messages.printable("a\x1b[31mb\x07c\u202ed") == "a[31mbcd"


def test_printable_joins_lines_and_truncates():
    assert messages.printable("one\ntwo", limit=5) == "on..."


def test_summary_quotes_the_exception_a_call_threw():
    msg = ('unknown file: Failure\nC++ exception with description "lab 1: split_heads is not '
           'implemented yet, see docs/01_split_heads.md" thrown in the test body.')
    assert messages.summarise_failure(msg).startswith("lab 1: split_heads is not implemented")


def test_summary_prefers_a_looks_like_diagnosis():
    msg = ("tests/x.cc:10: Failure\nValue of: MatchesGolden(...)\n  Actual: false (looks like "
           "scores scaled by 1/sqrt(d_model); see docs/02.md)\nExpected: true")
    assert messages.summarise_failure(msg).startswith("looks like scores scaled by 1/sqrt(d_model)")


def test_summary_puts_the_streamed_message_before_the_values():
    msg = ("t.cc:3: Failure\nExpected equality of these values:\n  a.parameter_count()\n"
           "    Which is: 432\n  576\nfour (d_model, d_model) matrices, W_O included")
    s = messages.summarise_failure(msg)
    assert s.startswith("four (d_model, d_model) matrices, W_O included (")
    assert "Which is: 432" in s


def test_compile_error_prefers_the_learners_file():
    out = ("inc/common/tensor.h:3:1: error: something in a header\n"
           "labs/01_split_heads/split_heads.cc:7:5: error: 'x' was not declared\n")
    assert messages.compile_error(out, "labs/01_split_heads/split_heads.cc") == (
        "does not compile: labs/01_split_heads/split_heads.cc:7: 'x' was not declared")


def test_compile_error_reports_the_file_size_limit():
    assert "exceed" in messages.compile_error("as: File size limit exceeded", "a.cc")


def test_warnings_are_deduplicated_and_only_the_learners():
    out = ("a.cc:3:5: warning: unused parameter 'x' [-Wunused-parameter]\n" * 2 +
           "b.h:1:1: warning: elsewhere\n")
    assert messages.compile_warnings(out, "a.cc") == [
        "a.cc:3: warning: unused parameter 'x' [-Wunused-parameter]"]


def test_link_error_names_a_multiple_definition_and_how_to_fix_it():
    out = "/usr/bin/ld: obj0.o: multiple definition of `mha::softmax_rows(...)'; first defined"
    s = messages.link_error(out)
    assert "multiple definition of `mha::softmax_rows" in s and "anonymous namespace" in s


def test_compile_error_follows_the_template_trail_to_the_learners_line():
    out = ("/usr/include/xtensor/xfunction.hpp:145:83:   required from 'struct xt::X'\n"
           "labs/01_split_heads/split_heads.cc:43:55:   required from here\n"
           "/usr/include/xtensor/xoperation.hpp:107:9: error: no match for 'operator+'\n"
           "/usr/include/xtensor/xoperation.hpp:86:9: note: candidate: 'operator+'\n")
    assert messages.compile_error(out, "labs/01_split_heads/split_heads.cc") == (
        "does not compile: labs/01_split_heads/split_heads.cc:43: no match for 'operator+' "
        "(in xtensor/xoperation.hpp:107)")


def test_compile_error_and_first_error_agree_on_the_error():
    out = ("inc/common/tensor.h:3:1: error: something in a header\n"
           "a.cc:7:5: fatal error: x.h: No such file or directory\n")
    assert messages.first_error(out, "a.cc") == "a.cc:7: fatal error: x.h: No such file or directory"
    assert messages.compile_error(out, "a.cc") == (
        "does not compile: a.cc:7: x.h: No such file or directory")
    assert messages.compile_error("inc/h.h:3:1: error: odd\n", "a.cc") == (
        "does not compile: inc/h.h:3: odd")


def test_link_error_falls_back_on_the_linkers_error_line():
    out = "/usr/bin/ld: obj0.o: undefined reference to `mha::f()'\n"
    assert messages.link_error(out) == messages.linker_complaint(out) == (
        "does not link: undefined reference to `mha::f()'; is a function of the header "
        "missing from your file, or misspelt?")
    assert messages.linker_complaint("collect2: error: ld returned 1 exit status") is None
    assert messages.link_error("collect2: error: ld returned 1 exit status") == (
        "does not link: collect2: error: ld returned 1 exit status")
    assert messages.link_error("") == "does not link (the linker gave no message)"


def test_gcc_own_headers_are_shortened_on_any_architecture():
    assert messages.short_path("/usr/lib/gcc/aarch64-linux-gnu/12/include/arm_neon.h") == "arm_neon.h"
    assert messages.short_path("/usr/lib/gcc/x86_64-linux-gnu/12/include/avxintrin.h") == "avxintrin.h"
    assert messages.short_path("labs/01_split_heads/split_heads.cc") == "labs/01_split_heads/split_heads.cc"


def test_invisible_format_characters_print_as_nothing_and_every_space_as_a_space():
    assert messages.printable("bo\u200bb\u00ad\ufeff") == "bob"
    assert messages.printable("a\u00a0b\u3000c\u2028d") == "a b c d"
    assert messages.printable("\u202eevil\u202c") == "evil"
