"""The rubric's argument checks and weight draws: which tests they name, how
they score, and what a bad entry says."""
import json
import types

from reports import rubric

LABS = [types.SimpleNamespace(number=3, dir="03_output_projection", title="Layer")]
TESTS = {"03_output_projection": ["LayerWeights.SeededDraws", "Layer.Forward",
                                  "LayerArguments.RejectsZeroHeads", "Layer.RejectsBadMask"]}
LAB = "03_output_projection"


def load(workdir, data):
    p = workdir / "rubric.json"
    p.write_text(json.dumps(data))
    return rubric.load(LABS, TESTS, str(p))


def test_without_a_list_the_default_patterns_name_the_argument_checks(workdir):
    r = load(workdir, {})
    assert [t for t in TESTS[LAB] if r.is_argument_check(LAB, t)] == [
        "LayerArguments.RejectsZeroHeads", "Layer.RejectsBadMask"]


def test_argument_checks_score_nothing_when_only_they_pass(workdir):
    r = load(workdir, {})
    scored = r.score(LAB, {"LayerWeights.SeededDraws": False, "Layer.Forward": False,
                           "LayerArguments.RejectsZeroHeads": True, "Layer.RejectsBadMask": True})
    assert sum(scored.values()) == 0


def test_argument_checks_score_beside_a_passing_computation(workdir):
    r = load(workdir, {})
    scored = r.score(LAB, {"LayerWeights.SeededDraws": False, "Layer.Forward": True,
                           "LayerArguments.RejectsZeroHeads": True, "Layer.RejectsBadMask": False})
    assert scored == {"LayerWeights.SeededDraws": 0, "Layer.Forward": 1,
                      "LayerArguments.RejectsZeroHeads": 1, "Layer.RejectsBadMask": 0}


def test_a_weight_draw_scores_alone_but_unlocks_no_argument_check(workdir):
    r = load(workdir, {"labs": {LAB: {"weight_draws": ["LayerWeights.*"]}}})
    scored = r.score(LAB, {"LayerWeights.SeededDraws": True, "Layer.Forward": False,
                           "LayerArguments.RejectsZeroHeads": True, "Layer.RejectsBadMask": True})
    assert scored["LayerWeights.SeededDraws"] == 1
    assert scored["LayerArguments.RejectsZeroHeads"] == scored["Layer.RejectsBadMask"] == 0


def test_the_rubric_can_name_its_own_argument_checks(workdir):
    r = load(workdir, {"argument_checks": ["*Arguments.*"]})
    assert r.errors == []
    assert not r.is_argument_check(LAB, "Layer.RejectsBadMask")


def test_a_weight_draw_pattern_that_matches_no_hidden_test_is_an_error(workdir):
    r = load(workdir, {"labs": {LAB: {"weight_draws": ["LayerWeight.Seeded*"]}}})
    assert r.errors == ["labs.03_output_projection.weight_draws: 'LayerWeight.Seeded*' matches "
                        "no hidden test of lab 3"]


def test_a_pattern_of_public_tests_is_not_checked_against_the_hidden_ones(workdir):
    r = load(workdir, {"labs": {LAB: {"weight_draws": ["LayerPublic.Seeded*"]}}})
    assert r.errors == [] and r.is_weight_draw(LAB, "LayerPublic.SeededWeights")


def test_argument_checks_that_are_not_a_list_of_patterns_are_an_error(workdir):
    r = load(workdir, {"argument_checks": "*Arguments.*"})
    assert len(r.errors) == 1 and "argument_checks must be a list" in r.errors[0]
    assert r.is_argument_check(LAB, "LayerArguments.RejectsZeroHeads")  # the default again
