"""A translated code block keeps its code (course/translation_check.py): a
command or program stays as it is but for its "# " comments, and a ```pseudo
block (notation and diagrams that explain) may have its words translated,
each line keeping its identifiers, numbers and symbols."""
import pytest

from course import translation_check as check

COMMANDS = ("bazel run //labs/13_induction_heads:grow_induction_heads\n"
            "bazel run --config=solutions //x:y   # the reference (not in the learner kit)\n")
PSEUDO = ("k, v = repeat_kv(K), repeat_kv(V)   (H, T, d_head) each; head h reads kv head h / (H/G)\n"
          "bottom-right (right)   x = -inf\n")


def test_a_commands_comment_may_be_translated():
    es = COMMANDS.replace("the reference (not in the learner kit)",
                          "la referencia (no está en el kit del estudiante)")
    assert check.code_block_problems(COMMANDS, es, None) == []


@pytest.mark.parametrize("changed", [
    COMMANDS.replace("bazel run --config", "bazel ejecuta --config"),
    COMMANDS.replace("   # the", "  # the"),
    COMMANDS.replace("\nbazel", "\n\nbazel"),
])
def test_a_command_itself_may_not_change(changed):
    assert check.code_block_problems(COMMANDS, changed, None)


def test_a_pseudo_code_blocks_words_may_be_translated():
    es = ("k, v = repeat_kv(K), repeat_kv(V)   (H, T, d_head) cada una; la cabeza h lee la "
          "cabeza kv h / (H/G)\nabajo a la derecha (bien)   x = -inf\n")
    assert check.code_block_problems(PSEUDO, es, "pseudo") == []


@pytest.mark.parametrize("changed", [
    PSEUDO.replace("repeat_kv(V)", "repetir_kv(V)"),
    PSEUDO.replace("(H/G)", "H/G"),
    PSEUDO.replace("-inf", "inf"),
])
def test_a_pseudo_code_blocks_identifiers_and_symbols_may_not_change(changed):
    problems = check.code_block_problems(PSEUDO, changed, "pseudo")
    assert len(problems) == 1 and "identifier or a symbol" in problems[0]
