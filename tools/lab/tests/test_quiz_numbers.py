"""checks/quiz_numbers.py: every number of a quiz is in its lesson or derived."""
import json
import os

import pytest

from checks import quiz_numbers
from labs import Lab


def _question(why="Silencing heads 0, 1 and 2 leaves 0.539.", text="leaves it at 1.00",
              question="Silencing head 0 drops agreement from 1.00 to 0.70. And the others?",
              derived=None, wrong_text="drops it to 0.25", wrong_why="No: see the table."):
    q = {"id": "ablate", "stage": "after", "question": question,
         "options": [{"text": text, "correct": True, "why": why},
                     {"text": wrong_text, "correct": False, "why": wrong_why}]}
    if derived is not None:
        q["derived"] = derived
    return {"questions": [q]}


LESSON = "| head 0 | 0.70 |\n| all but head 3 | 0.539 |\nagreement 1.00\n"


def _problems(data, lesson=LESSON):
    return quiz_numbers.problems_of(data, lesson, "labs/10_x/quiz.json", "docs/10_x.md")


def test_a_quiz_whose_numbers_are_all_in_its_lesson_passes():
    assert _problems(_question()) == []


def test_a_lesson_number_changed_under_the_quiz_is_caught_with_where_and_how_to_fix():
    found = _problems(_question(), LESSON.replace("0.539", "0.541"))
    assert len(found) == 1
    assert "question 'ablate', option a, its explanation: 0.539 is not in docs/10_x.md" in found[0]
    assert '"derived"' in found[0]


def test_a_number_of_the_question_is_checked_against_the_lesson_too():
    found = _problems(_question(question="It drops agreement from 1.00 to 0.68. And the others?"))
    assert len(found) == 1 and "the question: 0.68" in found[0]


def test_an_explanation_may_repeat_its_question_and_its_own_option():
    data = _question(question="What is 0.539 rounded?", wrong_text="0.54 exactly",
                     wrong_why="0.54 is a rounding, not the table's number.")
    assert _problems(data) == []


def test_a_wrong_option_may_state_a_number_no_lesson_has():
    assert _problems(_question(wrong_text="drops it to 0.123")) == []


def test_a_number_in_the_right_answer_that_the_lesson_lacks_is_caught():
    found = _problems(_question(text="leaves it at 0.97"))
    assert len(found) == 1 and "option a, the right answer: 0.97" in found[0]


def test_a_derived_number_with_arithmetic_that_gives_it_passes():
    data = _question(why="A third of the heads, 0.333 of them.", derived={"0.333": "1 / 3"})
    assert _problems(data) == []


def test_a_derived_number_whose_arithmetic_gives_another_value_is_caught():
    data = _question(why="A third of the heads, 0.333 of them.", derived={"0.333": "1 / 4"})
    found = _problems(data)
    assert len(found) == 1 and "derived 0.333 = 1 / 4, but that is 0.25" in found[0]


def test_a_derived_mark_that_no_text_needs_any_more_is_reported():
    found = _problems(_question(derived={"0.75": "3 / 4"}))
    assert len(found) == 1 and "derived 0.75" in found[0] and "remove it" in found[0]


def test_a_derived_mark_that_is_not_a_number_as_written_is_reported():
    found = _problems(_question(derived={"about 5": "5"}))
    assert len(found) == 1 and "not one number as the quiz writes it" in found[0]


def test_derived_arithmetic_allows_only_numbers_operators_and_a_few_functions():
    assert quiz_numbers.evaluate("round(2 * pi * 10000^(126/128), -2)") == 54400
    assert abs(quiz_numbers.evaluate("ln(3.4e38)") - 88.722) < 1e-3
    for bad in ("__import__('os')", "x + 1", "open('f')", "2 +"):
        with pytest.raises(ValueError):
            quiz_numbers.evaluate(bad)


def test_numbers_are_read_as_prose_writes_them_and_small_counts_are_left_out():
    got = [(w, v) for w, v, _ in quiz_numbers.numbers(
        "1,048,576 params, 46.9% saved, 64x fewer, 6%, 5.8e-05 nats, 0.90; "
        "3 heads, lab 13, labs 7 and 10, 2^29, d_head, float32, 128k, x_0")]
    assert got == [("1,048,576", 1048576), ("46.9", 46.9), ("64", 64), ("6", 6),
                   ("5.8e-05", 5.8e-05), ("0.90", 0.9)]


def _root(tmp_path, lesson):
    (tmp_path / "labs" / "14_new").mkdir(parents=True)
    (tmp_path / "labs" / "14_new" / "quiz.json").write_text(json.dumps(_question()))
    if lesson is not None:
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "14_new.md").write_text(lesson)
    return [Lab({"number": 14, "dir": "14_new", "target": "t", "title": "New"}, str(tmp_path))]


def test_a_lab_whose_lesson_is_missing_gets_one_line_not_a_crash(tmp_path):
    labs = _root(tmp_path, None)
    assert quiz_numbers.problems(labs, str(tmp_path)) == [
        "labs/14_new/quiz.json: its lesson docs/14_new.md is missing, so its numbers cannot "
        "be checked"]


def test_a_lesson_with_no_numbers_yet_names_each_number_its_quiz_needs(tmp_path):
    labs = _root(tmp_path, "# Lab 14: new\n\nTo be written.\n")
    found = quiz_numbers.problems(labs, str(tmp_path))
    # Each once: the right answer's 1.00 repeats the question's, named already.
    assert [p.split(": add it")[0].split("'ablate', ")[1] for p in found] == [
        "the question: 1.00 is not in docs/14_new.md",
        "the question: 0.70 is not in docs/14_new.md",
        "option a, its explanation: 0.539 is not in docs/14_new.md"]


def test_a_lab_without_a_quiz_is_left_to_the_quiz_file_check(tmp_path):
    labs = _root(tmp_path, LESSON)
    os.remove(str(tmp_path / "labs" / "14_new" / "quiz.json"))
    assert quiz_numbers.problems(labs, str(tmp_path)) == []


def test_every_quiz_of_the_repository_is_backed_by_its_lesson():
    assert quiz_numbers.problems() == []
