"""The tests' sentences in the learner's language, as ./lab prints them
(learner/i18n.py's test_text, the rules of common/testing/translation.h), and
the terminal's catalogue that holds them (course/catalogues.py)."""
import argparse
import inspect
import os
import re

import pytest

import languages
from course import catalogues
from i18n_fakes import spanish_catalogue
from labs import ROOT
from learner import i18n, results

polib = pytest.importorskip("polib")

NOT_IMPLEMENTED = "lab %(lab)s: %(function)s is not implemented yet, see %(doc)s"
LOOKS_LIKE = 'looks like %(mistake)s; see %(doc)s, "Classic mistakes"'
ELEMENTS = ("%(count)s of %(total)s elements differ; first at %(first_index)s: actual "
            "%(actual)s, expected %(expected)s; max |error| %(error)s at %(worst_index)s: "
            "actual %(worst_actual)s, expected %(worst_expected)s (atol %(atol)s, rtol %(rtol)s)")


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.setup(None)


def _spanish(tmp_path, entries):
    """The Spanish catalogue of `entries`, and lab 1's Spanish lesson; ./lab speaks Spanish."""
    root = spanish_catalogue(tmp_path, entries, lessons=("01_split_heads.md",))
    i18n.setup("es", root=root)
    return root


def test_a_stubs_exception_reads_in_spanish_and_names_the_spanish_lesson(tmp_path):
    root = _spanish(tmp_path, [("test", NOT_IMPLEMENTED, "laboratorio %(lab)s: %(function)s "
                                "todavía no está implementada, consulta %(doc)s")])
    english = ("Split.Works: lab 1: split_heads is not implemented yet, see "
               "docs/01_split_heads.md")
    assert i18n.test_text(english, root) == (
        "Split.Works: laboratorio 1: split_heads todavía no está implementada, consulta "
        "docs/es/01_split_heads.md")


def test_a_mistake_without_its_translation_leaves_its_sentence_english(tmp_path):
    root = _spanish(tmp_path, [("test", LOOKS_LIKE, 'parece %(mistake)s; consulta %(doc)s, '
                                '"Errores clásicos"')])
    english = 'looks like W_O forgotten; see docs/01_split_heads.md, "Classic mistakes"'
    assert i18n.test_text(english, root) == english


def test_the_numbers_keep_their_english_form_and_the_axes_take_the_language(tmp_path):
    root = _spanish(tmp_path, [
        ("test", ELEMENTS, "%(count)s de %(total)s difieren; el primero en %(first_index)s: "
         "obtenido %(actual)s, esperado %(expected)s; |error| máximo %(error)s en "
         "%(worst_index)s: obtenido %(worst_actual)s, esperado %(worst_expected)s (atol "
         "%(atol)s, rtol %(rtol)s)"),
        ("axis", "head", "cabeza"), ("axis", "column", "columna")])
    english = ("20 of 30 elements differ; first at [head 0, token 1, column 0]: actual 2.438762, "
               "expected 0.7897463; max |error| 3.259082 at [head 1, token 1, column 3]: actual "
               "1.002654, expected -2.256427 (atol 1e-05, rtol 0)")
    assert i18n.test_text(english, root) == (
        "20 de 30 difieren; el primero en [cabeza 0, token 1, columna 0]: obtenido 2.438762, "
        "esperado 0.7897463; |error| máximo 3.259082 en [cabeza 1, token 1, columna 3]: "
        "obtenido 1.002654, esperado -2.256427 (atol 1e-05, rtol 0)")


def test_a_long_failure_is_translated_whole_before_it_is_cut(tmp_path):
    root = _spanish(tmp_path, [("test", ELEMENTS, "%(count)s de %(total)s elementos difieren; "
                                "el primero en %(first_index)s: obtenido %(actual)s, esperado "
                                "%(expected)s; |error| máximo %(error)s en %(worst_index)s: "
                                "obtenido %(worst_actual)s, esperado %(worst_expected)s (atol "
                                "%(atol)s, rtol %(rtol)s)")])
    index = "[" + ", ".join("axis%d %d" % (i, i) for i in range(30)) + "]"
    english = ("75 of 75 elements differ; first at %s: actual 1, expected 2; max |error| 1 at "
               "%s: actual 1, expected 2 (atol 0, rtol 0)" % (index, index))
    assert root
    shown = results.shown(english)
    assert shown.startswith("75 de 75 elementos difieren; el primero en [axis0 0")
    assert shown.endswith("...") and len(shown) <= 400


def test_every_sentence_of_the_tests_can_be_read_back_into_its_values():
    for template, name, _ in catalogues.test_sentences():
        assert i18n._sentence(template, "x") is not None, name


def test_the_extractor_keeps_every_character_of_a_message():
    found = {m.msgid for m in catalogues.python_messages()}
    assert "next: lab %(n)d — %(title)s — bazel test %(target)s" in found
    assert "watching %(file)s (lab %(n)d — %(title)s); Ctrl-C stops" in found


def test_every_message_of_the_code_has_its_entry_in_every_catalogue():
    assert catalogues.missing_entries() == []


def test_a_catalogue_without_a_message_of_the_code_is_reported(tmp_path):
    for lang in languages.codes():
        po = polib.pofile(os.path.join(ROOT, "po", "cli", lang + ".po"))
        po.remove([e for e in po if e.msgid == "first failure: %s"][0])
        po.save(str(tmp_path / (lang + ".po")))
    missing = catalogues.missing_entries(folder=str(tmp_path))
    assert len(missing) == len(languages.codes())
    assert all("'first failure: %s'" in m and "status.py" in m for m in missing)


def test_argparse_still_says_the_words_the_catalogue_translates():
    source = inspect.getsource(argparse)
    for words in i18n.ARGPARSE_WORDS:
        assert repr(words) in source or '"%s"' % words in source, words


def test_a_command_line_made_after_setup_speaks_the_language_in_its_help(tmp_path):
    _spanish(tmp_path, [(None, "usage: ", "uso: "), (None, "options", "opciones"),
                        (None, "show this help message and exit", "muestra esta ayuda")])
    text = argparse.ArgumentParser(prog="./lab hint").format_help()
    assert text.startswith("uso: ./lab hint") and "opciones:" in text
    assert "muestra esta ayuda" in text
    i18n.setup(None)
    assert argparse.ArgumentParser(prog="x").format_help().startswith("usage: x")


def test_every_stubs_exception_is_the_tests_sentence_that_gets_translated():
    from labs import load_labs
    regex, names = i18n._sentence(NOT_IMPLEMENTED, "x")
    assert names == ["lab", "function", "doc"]
    found = 0
    for lab in load_labs():
        with open(os.path.join(ROOT, lab.learner_file), encoding="utf-8") as f:
            text = f.read()
        # A message may be written as several literals, one after the other.
        for literals in re.findall(r'((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
            message = catalogues._joined(literals)
            if "not implemented yet" not in message:
                continue
            m = regex.fullmatch(message)
            assert m and m.group(1) == str(lab.number) and m.group(3) == lab.lesson_file, message
            found += 1
    assert found >= len(load_labs())
