"""The misconception a failure message names, and what each feedback policy shows."""
import feedback

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
PLAIN = ("Value of: AllClose(out, expected, kLayer) Actual: false (60 of 60 elements differ) "
         "Expected: true")


def test_looks_like_is_cut_before_the_lesson_and_the_numbers():
    assert feedback.diagnosis(LOOKS) == "the diagonal is removed (j < i instead of j <= i)"


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
    assert feedback.shown(LOOKS, "full") == LOOKS


def test_misconception_feedback_shows_the_mistake_and_the_lesson_but_no_numbers():
    out = feedback.shown(LOOKS, "misconception")
    assert out == ('looks like the diagonal is removed (j < i instead of j <= i); see '
                   'docs/04_causal_mask.md, "Classic mistakes"')
    assert "expected 0" not in out


def test_misconception_feedback_says_failed_when_nothing_is_named():
    assert feedback.shown(PLAIN, "misconception") == "failed"


def test_points_feedback_shows_nothing():
    assert feedback.shown(LOOKS, "points") == ""


def test_a_file_that_did_not_compile_is_always_told_why():
    msg = "does not compile: labs/01_split_heads/split_heads.cc:7:10: error: expected ';'"
    for policy in feedback.POLICIES:
        assert feedback.shown(msg, policy, "compile_error") == msg
