"""messages: what a learner reads, and that nothing unsafe gets printed."""
import messages


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
    s = messages.link_error(out, None)
    assert "multiple definition of `mha::softmax_rows" in s and "anonymous namespace" in s
