"""mutants: the catalogue's header and edits."""
import pytest

from checks import mutants
from labs import load_labs

LAB1 = [l for l in load_labs() if l.number == 1][0]
HEADER = "Mistake: m\nExpect: e\nKind: {kind}\n\n"


def test_the_header_gives_mistake_expect_and_kind():
    assert mutants.parse_header(HEADER.format(kind="validation") + "--- a\n") == (
        "m", "e", "validation")


def test_a_header_without_expect_is_an_error():
    with pytest.raises(mutants.MutantError):
        mutants.parse_header("Mistake: m\n--- a\n")


def test_an_unknown_kind_is_an_error():
    with pytest.raises(mutants.MutantError):
        mutants.parse_header(HEADER.format(kind="odd"))


def _mutant(diff):
    return mutants.Mutant(LAB1, "tests/01_split_heads/mutants/x.diff",
                          HEADER.format(kind="numeric") + diff)


def test_an_edit_applies_to_the_solution():
    m = _mutant("--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-one\n+two\n".format(f=LAB1.solution_file))
    assert mutants.apply(m, b"one\nthree\n") == b"two\nthree\n"


def test_an_edit_that_no_longer_applies_is_an_error():
    m = _mutant("--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-gone\n+two\n".format(f=LAB1.solution_file))
    with pytest.raises(mutants.MutantError):
        mutants.apply(m, b"one\n")


def test_every_committed_mutant_parses_and_applies():
    bad = [m.error for m in mutants.load() if m.source is None]
    assert bad == []
