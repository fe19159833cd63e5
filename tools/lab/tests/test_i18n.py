"""The translations: the learner's language, the terminal's catalogue, the
generated pages and their check (course/i18n.py, learner/i18n.py).

The last test is the issue's "done when" on a temporary copy: an English
paragraph edited after it was translated falls back to English in both
languages, exactly that block, and the check still passes."""
import os
import shutil
import subprocess

import pytest

import languages
from course import catalogues, po4a_config, translated_pages, translation_check
from course import i18n as pages
from i18n_fakes import spanish_catalogue
from labs import ROOT
from learner import i18n

needs_tools = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("po4a", "msgfmt", "git")),
    reason="po4a and gettext (tools/setup.sh --dev) are not installed")
polib = pytest.importorskip("polib")


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.setup(None)


@pytest.mark.parametrize("env, expected", [
    ({"LANG": "es_ES.UTF-8"}, "es"),
    ({"LANG": "es_AR.UTF-8"}, "es"),
    ({"LANG": "pt_BR.UTF-8"}, "pt_BR"),
    ({"LANG": "pt_PT.UTF-8"}, "pt_BR"),
    ({"LANG": "fr_FR.UTF-8"}, None),
    ({"LANG": "C.UTF-8"}, None),
    ({}, None),
    ({"LANG": "es_ES.UTF-8", "LC_ALL": "C"}, None),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "pt_BR.UTF-8"}, "pt_BR"),
    ({"LANG": "en_US.UTF-8", "LANGUAGE": "es:en"}, "es"),
])
def test_the_language_follows_the_usual_variables_in_their_order(env, expected):
    assert i18n.choose(None, env) == expected


def test_the_lang_option_wins_over_the_environment_and_may_stand_anywhere():
    argv, lang = i18n.strip_lang_option(["hint", "2", "--lang", "es"])
    assert argv == ["hint", "2"] and lang == "es"
    argv, lang = i18n.strip_lang_option(["--lang=pt", "status"])
    assert argv == ["status"] and i18n.choose(lang, {"LANG": "es_ES.UTF-8"}) == "pt_BR"
    assert i18n.choose("en", {"LANG": "es_ES.UTF-8"}) is None


def _catalogue(tmp_path, entries):
    spanish_catalogue(tmp_path, entries)


def test_a_named_mistake_prints_in_spanish_and_names_the_spanish_lesson(tmp_path):
    _catalogue(tmp_path, [
        ("mistake", "scores not scaled by 1/sqrt(d_head)",
         "puntuaciones sin escalar por 1/sqrt(d_head)"),
        ("test", 'looks like %(mistake)s; see %(doc)s, "Classic mistakes"',
         'parece %(mistake)s; ver %(doc)s, «Errores clásicos»'),
    ])
    i18n.setup("es", root=str(tmp_path))
    english = ('AttentionTest.ScalesScores: looks like scores not scaled by 1/sqrt(d_head); '
               'see docs/02_batched_attention.md, "Classic mistakes": 24 of 24 elements differ')
    assert i18n.test_text(english, root=str(tmp_path)) == (
        "AttentionTest.ScalesScores: parece puntuaciones sin escalar por 1/sqrt(d_head); "
        "ver docs/es/02_batched_attention.md, «Errores clásicos»: 24 of 24 elements differ")
    i18n.setup(None)
    assert i18n.test_text(english, root=str(tmp_path)) == english


def test_a_missing_catalogue_or_message_prints_the_english(tmp_path):
    i18n.setup("es", root=str(tmp_path))          # no catalogue at all
    assert i18n._("first failure: %s") == "first failure: %s"
    assert i18n.page("docs/03_output_projection.md", root=str(tmp_path)) == \
        "docs/03_output_projection.md"


def test_a_translated_hints_file_skips_its_header_line(tmp_path):
    p = tmp_path / "hints.es.txt"
    p.write_text("# Traducción: 100 % al día\n\nPrimera pista,\nen dos líneas.\n\nSegunda.\n")
    assert i18n.read_hints(str(p)) == ["Primera pista, en dos líneas.", "Segunda."]


@pytest.mark.parametrize("msgstr, complaint", [
    ("Divide `x` en 4 cabezas; ver [la lección](02_batched_attention.md).", None),
    ("Divide `y` en 4 cabezas; ver [la lección](02_batched_attention.md).", "code spans"),
    ("Divide `x` en cuatro cabezas; ver [la lección](02_batched_attention.md).", "numbers"),
    ("Divide `x` en 4 cabezas; ver [la lección](es/02_batched_attention.md).", "link targets"),
])
def test_a_translated_block_keeps_code_spans_numbers_and_link_targets(msgstr, complaint):
    msgid = "Split `x` into 4 heads; see [the lesson](02_batched_attention.md)."
    found = translation_check.block_problems(msgid, msgstr)
    if complaint is None:
        assert found == []
    else:
        assert len(found) == 1 and complaint in found[0]


def test_a_fenced_code_block_inside_a_block_must_be_copied_verbatim():
    msgid = "Run:\n\n```\nbazel test //labs/01_split_heads/...\n```\n"
    assert translation_check.block_problems(msgid, msgid.replace("Run", "Ejecuta")) == []
    assert "fenced code" in translation_check.block_problems(
        msgid, msgid.replace("bazel test", "bazel prueba"))[0]


def test_links_point_from_the_translated_page_to_translated_pages_where_they_exist():
    tmap = {"docs/02_batched_attention.md": "docs/es/02_batched_attention.md"}
    text = ("See [lab 2](02_batched_attention.md#classic-mistakes), "
            "[the header](../labs/01_split_heads/split_heads.h), [web](https://x.org/a.md) "
            "and [here](#the-idea).\n\n```\n[not a link](../x)\n```\n")
    out = translated_pages.rewrite_links(text, "docs/01_split_heads.md",
                                         "docs/es/01_split_heads.md", tmap)
    assert "(02_batched_attention.md#classic-mistakes)" in out
    assert "(../../labs/01_split_heads/split_heads.h)" in out
    assert "(https://x.org/a.md)" in out and "(#the-idea)" in out
    assert "[not a link](../x)" in out


def test_the_terminal_template_holds_the_public_tests_mistakes():
    words = {w for w, _, _ in catalogues.mistake_words()}
    assert "scores not scaled by 1/sqrt(d_head)" in words
    with open(os.path.join(ROOT, "po", "cli", "messages.pot"), encoding="utf-8") as f:
        pot = f.read()
    assert 'msgctxt "mistake"\nmsgid "scores not scaled by 1/sqrt(d_head)"' in pot


# ------------------------------------------------ the "done when"

_COPIED = ["po", "docs", "labs", "common", "README.md", "tools/lab"]


def _copy(dest):
    """The files the translations read, as they are in this checkout, in a git
    repository of their own."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "--"] +
                            _COPIED, check=True,
                            capture_output=True, text=True).stdout.split("\n")
    for rel in filter(None, listed):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copyfile(src, os.path.join(dest, rel))
    for extract in po4a_config.EXTRACTS:           # an extract may be newer than HEAD's
        shutil.copyfile(os.path.join(ROOT, extract.target), os.path.join(dest, extract.target))
    _commit(dest, "the copy")


def _commit(root, message):
    git = ["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t"]
    if not os.path.isdir(os.path.join(root, ".git")):
        subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", message], check=True)


_LESSON = "docs/01_split_heads.md"


def _paragraph(root):
    with open(os.path.join(root, _LESSON), encoding="utf-8") as f:
        text = f.read()
    start = text.index("Multi-head attention runs several small attentions")
    return text, text[start:text.index("\n\n", start) + 1]


_TRANSLATED = {
    "es": {"Lab 1: split and combine heads": "Laboratorio 1: dividir y combinar las cabezas",
           "paragraph": "La atención multicabeza ejecuta varias atenciones pequeñas en paralelo "
                        "en lugar de una ancha.\n"},
    "pt_BR": {"Lab 1: split and combine heads": "Laboratório 1: dividir e combinar as cabeças",
              "paragraph": "A atenção multi-cabeça executa várias atenções pequenas lado a "
                           "lado em vez de uma larga.\n"},
}


def _translate(root, paragraph):
    for lang, words in _TRANSLATED.items():
        path = os.path.join(root, "po", lang + ".po")
        po = polib.pofile(path, wrapwidth=0)
        for e in po:
            if e.msgid == "Lab 1: split and combine heads":
                e.msgstr = words[e.msgid]
            elif e.msgid == paragraph:
                e.msgstr = words["paragraph"]
        po.save(path)


def _page(root, lang):
    with open(os.path.join(root, "docs", languages.by_po(lang).pages, "01_split_heads.md"),
              encoding="utf-8") as f:
        return f.read()


@needs_tools
def test_an_edited_english_paragraph_falls_back_to_english_in_both_languages(tmp_path):
    root = str(tmp_path / "repo")
    _copy(root)
    quiet = lambda *a: None   # noqa: E731
    pages.update(root, log=quiet)                     # catalogues in step with the English
    text, paragraph = _paragraph(root)
    _translate(root, paragraph)
    pages.regenerate(root, log=quiet)
    assert pages.problems(root) == []
    for lang, words in _TRANSLATED.items():
        page = _page(root, lang)
        assert words["paragraph"] in page and paragraph not in page
        assert "# " + words["Lab 1: split and combine heads"] in page
    before = {lang: _page(root, lang) for lang in _TRANSLATED}

    def fuzzy(lang):
        po = polib.pofile(os.path.join(root, "po", lang + ".po"))
        return [e.msgid for e in po if "fuzzy" in e.flags and not e.obsolete]

    # Blocks the repository's own English already changed, waiting for a
    # translator (a lab just added), stay as they are.
    fuzzy_before = {lang: fuzzy(lang) for lang in _TRANSLATED}

    # An author rewrites the paragraph and runs ./lab translate.
    edited = paragraph.replace("several small attentions", "several narrow attentions")
    with open(os.path.join(root, _LESSON), "w", encoding="utf-8") as f:
        f.write(text.replace(paragraph, edited))
    _commit(root, "the English paragraph, edited")
    assert any("01_split_heads.md is not what" in p for p in pages.problems(root))
    pages.update(root, log=quiet)
    assert pages.problems(root) == []

    for lang, words in _TRANSLATED.items():
        page = _page(root, lang)
        assert edited in page and words["paragraph"] not in page      # that block: English
        assert "# " + words["Lab 1: split and combine heads"] in page  # the others: unchanged
        # Exactly that block and the header line changed.
        old_lines, new_lines = before[lang].splitlines(), page.splitlines()
        assert len(old_lines) - len(words["paragraph"].splitlines()) + \
            len(edited.splitlines()) == len(new_lines)
        changed = [i for i, (a, b) in enumerate(zip(old_lines[:2], new_lines[:2])) if a != b]
        assert changed == [0]                                        # the header line
        assert old_lines[-20:] == new_lines[-20:]
        assert sorted(fuzzy(lang)) == sorted(fuzzy_before[lang] + [edited])
    assert "(0 de" not in _page(root, "es").splitlines()[0]


# ------------------------------------------------------------------ the kit

@needs_tools
def test_the_kit_ships_the_compiled_catalogues_and_each_readme_it_has():
    from course import kit
    from labs import load_labs
    files = kit.kit_files(load_labs())
    for lang in languages.codes():
        mo = files["tools/lab/locale/%s/LC_MESSAGES/lab.mo" % lang]
        assert mo[:4] in (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde")     # gettext's magic
    for name in ("README.es.md", "README.pt-BR.md"):
        shipped = name in files
        assert shipped == os.path.isfile(os.path.join(ROOT, kit.README_DIR, name))
        # The English README points at a translation only when the kit has it.
        assert ("(%s)" % name in files["README.md"].decode()) == shipped


def test_the_kit_readme_lists_every_lab_with_its_lesson_in_the_readme_language():
    from course import kit
    from labs import load_labs
    labs = load_labs()
    english = b"# Lab 2: batched attention\n"
    files = {"docs/es/02_batched_attention.md": "*Traducción ...*\n\n# Lab 2: atención por "
             "lotes\n".encode(), "docs/02_batched_attention.md": english,
             "docs/es/01_split_heads.md": b"# Lab 1: split and combine heads\n",
             "docs/01_split_heads.md": b"# Lab 1: split and combine heads\n"}
    text = kit.kit_readme("# Kit\n\n| lab | file | lesson |\n| --- | --- | --- |\n\nmore\n",
                          labs, "es", files)
    assert "| 2 | `labs/02_batched_attention/attention.cc` | [Atención por lotes]" \
        "(docs/es/02_batched_attention.md) |" in text
    # A lesson whose heading is not translated yet keeps the registry's title.
    assert "[%s](docs/es/01_split_heads.md)" % labs[0].title in text
    assert text.count("\n| ") == len(labs) + 2 and text.endswith("\nmore\n")


def test_a_golden_comparison_prints_its_sentence_in_spanish_with_the_same_numbers(tmp_path):
    msgid = ("%(count)s of %(total)s elements differ; first at %(first)s: actual %(actual)s, "
             "expected %(expected)s; max |error| %(error)s at %(worst)s: actual "
             "%(worst_actual)s, expected %(worst_expected)s (atol %(atol)s, rtol %(rtol)s)")
    _catalogue(tmp_path, [
        ("test", msgid, "%(count)s de %(total)s elementos difieren; el primero en %(first)s: "
         "obtenido %(actual)s, esperado %(expected)s; máximo |error| %(error)s en %(worst)s: "
         "obtenido %(worst_actual)s, esperado %(worst_expected)s (atol %(atol)s, rtol "
         "%(rtol)s)"),
        ("test", "(checked against %(golden)s: ", "(comparado con %(golden)s: ")])
    i18n.setup("es", root=str(tmp_path))
    english = ("(checked against labs/02/golden/w.npy: 75 of 75 elements differ; first at "
               "[head 0, query 0, key 0]: actual 0.08189806, expected 0.1399203; max |error| "
               "0.2094828 at [head 1, query 4, key 1]: actual 0.7101973, expected 0.5007145 "
               "(atol 1e-05, rtol 0.0001))")
    assert i18n.test_text(english, root=str(tmp_path)) == (
        "(comparado con labs/02/golden/w.npy: 75 de 75 elementos difieren; el primero en "
        "[head 0, query 0, key 0]: obtenido 0.08189806, esperado 0.1399203; máximo |error| "
        "0.2094828 en [head 1, query 4, key 1]: obtenido 0.7101973, esperado 0.5007145 "
        "(atol 1e-05, rtol 0.0001))")


# ------------------------------------------------------------ the quizzes

def _quiz_strings():
    """Every question, option and explanation of labs/*/quiz.json."""
    from labs import load_labs
    from learner import quiz
    out = []
    for lab in load_labs():
        data = quiz.load(lab)
        if data is None:          # a new lab's quiz is still to write (./lab test says so)
            continue
        for q in data["questions"]:
            out.append(q["question"])
            for o in q["options"]:
                out += [o["text"], o["why"]]
    return out


def test_the_quiz_template_holds_every_question_option_and_explanation_once():
    from learner import quiz
    text = catalogues.quiz_template_text()
    assert text == catalogues.quiz_template_text()          # deterministic
    po = polib.pofile(text)
    ids = [e.msgid for e in po]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(_quiz_strings()) | set(quiz.ui_messages())
    first = po.find("T = 5 tokens, d_model = 12 and H = 3 heads. What shape does "
                    "split_heads return?")
    # The reference names the file and the question's id.
    assert "#: labs/01_split_heads/quiz.json:d-head\nmsgid \"T = 5 tokens" in text
    assert "d-head: the question (before)" in first.comment


def test_the_committed_quiz_template_and_catalogues_are_current():
    with open(os.path.join(ROOT, catalogues.QUIZ_DIR, "messages.pot"), encoding="utf-8") as f:
        assert f.read() == catalogues.quiz_template_text()
    for lang in languages.codes():
        po = polib.pofile(os.path.join(ROOT, catalogues.QUIZ_DIR, lang + ".po"))
        current = [e for e in po if not e.obsolete]
        assert len(current) == len(polib.pofile(catalogues.quiz_template_text()))
        assert translation_check.catalogue_problems(os.path.join(catalogues.QUIZ_DIR, lang + ".po"),
                                        identifiers=True) == []


@pytest.mark.parametrize("msgstr, complaint", [
    ("Con d_model = 12 y H = 3, ¿qué columnas le tocan a la cabeza 1?", None),
    ("Con d_model = 12 y H = 3, ¿qué columnas le tocan a la cabeza uno?", "numbers"),
    ("Con d_modelo = 12 y H = 3, ¿qué columnas le tocan a la cabeza 1?", "identifiers"),
])
def test_a_quiz_translation_keeps_numbers_and_identifiers(msgstr, complaint):
    msgid = "With d_model = 12 and H = 3, which columns of x does head 1 own?"
    found = translation_check.block_problems(msgid, msgstr) + translation_check.identifier_problems(msgid, msgstr)
    assert (found == []) if complaint is None else (len(found) == 1 and complaint in found[0])
    assert translation_check.identifier_problems("{right} of {total}", "{right} de {todos}")


@needs_tools
def test_a_changed_english_question_falls_back_to_english_and_the_rest_stays_spanish(tmp_path):
    """./lab translate's merge (msgmerge) on a copy: an edited question becomes
    fuzzy, so the compiled catalogue (learner/i18n.compiled) shows it in
    English; every other message stays Spanish."""
    from learner import quiz
    d = tmp_path / "po" / "quiz"
    d.mkdir(parents=True)
    for lang in languages.codes():
        shutil.copy(os.path.join(ROOT, catalogues.QUIZ_DIR, lang + ".po"), str(d))
    other = "Why subtract each row's maximum before exponentiating?"
    english = [s for s in _quiz_strings() if s.startswith("A model has d_model = 512")][0]
    edited = english.replace("8 heads", "16 heads")
    catalogues.write_and_merge(str(d), catalogues.quiz_template_text().replace(
        'msgid "%s"' % english, 'msgid "%s"' % edited), merge=True)
    po = polib.pofile(str(d / "es.po"))
    assert [e.msgid for e in po if "fuzzy" in e.flags and not e.obsolete] == [edited]
    tr = quiz.translator("es", root=str(tmp_path))
    assert tr(edited) == edited
    assert tr("Right.") == "Correcto."
    assert tr(other) == "¿Por qué restar el máximo de cada fila antes de tomar la exponencial?"
    assert quiz.translator("pt-BR", root=str(tmp_path))("Right.") == "Certo."
    mo = tmp_path / ".cache" / "locale" / "es" / "LC_MESSAGES" / "quiz.mo"
    assert mo.is_file()


@needs_tools
def test_the_kit_ships_the_compiled_quiz_catalogues():
    from course import kit
    files = kit.compiled_catalogues()
    for lang in languages.codes():
        mo = files["tools/lab/locale/%s/LC_MESSAGES/quiz.mo" % lang]
        assert mo[:4] in (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde")


@needs_tools
def test_the_terminal_quiz_asks_in_the_language_of_lab(tmp_path):
    from labs import load_labs
    from learner import quiz
    lab = load_labs()[0]
    data = quiz.translated(quiz.load(lab), "es")
    out = []
    answers = iter(["b", "a"] + ["q"])
    quiz.run_quiz(lab, data, read=lambda prompt: next(answers), write=out.append,
                  words=quiz.labels("es"))
    text = "\n".join(out)
    assert "Cuestionario del laboratorio 1" in text
    assert "T = 5 tokens, d_model = 12 y H = 3 cabezas." in text
    assert "No exactamente. Cada cabeza recibe solo sus propias d_head = 4 columnas" in text
    assert "Correcto. d_head = d_model / H = 12 / 3 = 4" in text
    assert "detenido: 1 de 6 respondidas, 0 bien al primer intento" in text


def test_a_title_starts_with_a_capital_as_its_language_writes_it():
    assert i18n.capitalised("dividir y combinar cabezas", "es") == "Dividir y combinar cabezas"
    assert i18n.capitalised("¿qué hacen las cabezas?", "es") == "¿Qué hacen las cabezas?"
    assert i18n.capitalised("ileri besleme", "tr") == "İleri besleme"
    assert i18n.capitalised("ılık", "tr") == "Ilık"
    assert i18n.capitalised("ileri", "pt_BR") == "Ileri"
    assert i18n.capitalised("因果掩码", "zh_CN") == "因果掩码"
    assert i18n.capitalised("KV cache", "es") == "KV cache"
