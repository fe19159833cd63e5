"""The misconception a failed test names, and what each feedback policy shows."""
from reports import feedback

LOOKS = ('Value of: MatchesGolden(out, Golden("causal_T6")) Actual: false (looks like the '
         'diagonal is removed (j < i instead of j <= i); see docs/04_causal_mask.md, "Classic '
         'mistakes" (checked against tests/04_causal_mask/golden/causal_T6.npy: 6 of 36 elements '
         'differ; first at [query 0, key 0]: actual -inf, expected 0)) Expected: true')
OWN = ('Expected equality of these values: mla.kv_cache_floats_per_token() Which is: 20 10u '
       'Which is: 10 the cache holds c only: kv_rank floats per token; see '
       'docs/06_latent_attention.md, "Classic mistakes"')
CONTEXT = ('Expected equality of these values: mask(i, i) Which is: -inf 0.0f Which is: 0 T=1: '
           'query 0 must see key 0 (itself); see docs/04_causal_mask.md')
VALIDATION = ('Value of: ThrowsInvalidArgument([&] { split_heads(x, 4); }, {"d_model=10"}) '
              'Actual: false (expected std::invalid_argument, but the call returned normally) '
              'Expected: true')
# The "mistake" field the result stream gives LOOKS (common/grading/test_results.h).
STRICT = {"name": "strict", "words": "the diagonal is removed (j < i instead of j <= i)",
          "doc": "docs/04_causal_mask.md", "looks_like": True}
# A rule a test states with a table's Named (no golden matched).
RULE = {"name": "cache_not_c_only", "words": "the cache holds c only: kv_rank floats per token",
        "doc": "docs/06_latent_attention.md", "looks_like": False}
PLAIN = ("Value of: AllClose(out, expected, kLayer) Actual: false (60 of 60 elements differ) "
         "Expected: true")


def test_the_mistake_field_is_the_diagnosis():
    assert feedback.diagnosis(LOOKS, STRICT) == "the diagonal is removed (j < i instead of j <= i)"
    assert feedback.named_mistake(LOOKS, STRICT) == STRICT


def test_the_field_names_the_mistake_whatever_the_message_says():
    assert feedback.diagnosis(PLAIN, STRICT) == STRICT["words"]
    assert feedback.shown(PLAIN, "misconception", mistake=STRICT).startswith(
        "looks like the diagonal is removed")


def test_a_looks_like_sentence_without_its_field_is_not_read_back():
    # The sentence is for the terminal: only the field names a table's mistake.
    assert feedback.diagnosis(LOOKS) == ""
    assert feedback.shown(LOOKS, "misconception") == "failed"


def test_the_sentence_is_written_from_the_field_as_the_terminal_prints_it():
    assert feedback.sentence(STRICT) == ('looks like the diagonal is removed (j < i instead of '
                                         'j <= i); see docs/04_causal_mask.md, "Classic mistakes"')
    assert feedback.sentence({"name": "", "words": "x; see docs/a.md", "doc": ""}) == (
        "looks like x; see docs/a.md")


def test_a_field_of_the_wrong_form_names_nothing():
    assert feedback.as_mistake(None) is None
    assert feedback.as_mistake("strict") is None
    assert feedback.as_mistake({"name": 3, "words": "x", "doc": ""}) is None
    assert feedback.as_mistake({"name": "", "words": "", "doc": "docs/a.md"}) is None
    assert feedback.as_mistake({"name": "a", "words": "x", "doc": "", "looks_like": "yes"}) is None
    assert feedback.as_mistake({"words": "x"}) == {"name": "", "words": "x", "doc": "",
                                                   "looks_like": True}


def test_a_stated_rule_is_quoted_as_printed_and_shown_as_a_misconception():
    assert feedback.sentence(RULE) == ('the cache holds c only: kv_rank floats per token; see '
                                       'docs/06_latent_attention.md, "Classic mistakes"')
    assert feedback.shown(OWN, "misconception", mistake=RULE) == (
        'looks like the cache holds c only: kv_rank floats per token; see '
        'docs/06_latent_attention.md, "Classic mistakes"')
    assert feedback.diagnosis(OWN, RULE) == RULE["words"]


def test_summarise_line_quotes_the_fields_sentence():
    assert feedback.summarise_line(LOOKS, STRICT) == feedback.sentence(STRICT)
    assert feedback.summarise_line(PLAIN) == PLAIN


def test_the_tests_own_words_before_the_lesson_pointer_are_a_diagnosis():
    assert feedback.diagnosis(OWN) == "the cache holds c only: kv_rank floats per token"


def test_a_leading_case_description_is_not_part_of_the_mistake():
    assert feedback.diagnosis(CONTEXT) == "query 0 must see key 0 (itself)"


def test_a_label_of_one_value_is_not_a_diagnosis():
    msg = ("Value of: AllClose(g.dx, fd) Actual: false (12 of 12 elements differ) Expected: true "
           "dx; see docs/10_attention_backward.md, \"Classic mistakes\"")
    assert feedback.diagnosis(msg) == ""


def test_the_exception_checks_words_name_a_validation_mistake():
    assert feedback.diagnosis(VALIDATION).startswith("a bad argument is accepted")


def test_a_message_without_a_diagnosis_names_nothing():
    assert feedback.diagnosis(PLAIN) == ""
    assert feedback.diagnosis("") == ""


def test_the_same_mistake_worded_with_other_details_has_one_key():
    a = feedback.mistake_key("the diagonal is removed (j < i instead of j <= i)")
    b = feedback.mistake_key("the diagonal is removed (each new token cannot see itself)")
    c = feedback.mistake_key("a transposed mask: -inf below the diagonal")
    assert a == b == "the diagonal is removed"
    assert c == "a transposed mask"
    assert feedback.mistake_key("query 0 must see key 0") == feedback.mistake_key(
        "query 3 must see key 3")


def test_full_feedback_shows_the_message():
    assert feedback.shown(LOOKS, "full", mistake=STRICT) == LOOKS


def test_misconception_feedback_shows_the_mistake_and_the_lesson_but_no_numbers():
    out = feedback.shown(LOOKS, "misconception", mistake=STRICT)
    assert out == ('looks like the diagonal is removed (j < i instead of j <= i); see '
                   'docs/04_causal_mask.md, "Classic mistakes"')
    assert "expected 0" not in out


def test_misconception_feedback_says_failed_when_nothing_is_named():
    assert feedback.shown(PLAIN, "misconception") == "failed"


def test_misconception_feedback_of_the_tests_own_words_points_at_the_lesson():
    assert feedback.shown(OWN, "misconception") == (
        'looks like the cache holds c only: kv_rank floats per token; see '
        'docs/06_latent_attention.md, "Classic mistakes"')


def test_points_feedback_shows_nothing():
    assert feedback.shown(LOOKS, "points", mistake=STRICT) == ""


def test_a_file_that_did_not_compile_is_always_told_why():
    msg = "does not compile: labs/01_split_heads/split_heads.cc:7:10: error: expected ';'"
    for policy in feedback.POLICIES:
        assert feedback.shown(msg, policy, "compile_error") == msg
