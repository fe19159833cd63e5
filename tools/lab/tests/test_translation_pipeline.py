"""The translation pipeline with five languages: the checks on Chinese and
Turkish text, what ./lab translate says is left to do, msgmerge's guesses
(never a translation), a chart with Chinese labels, and a new lab that
reaches every language without a hand edit (the author's path of issue 41,
on a temporary copy: ./lab new, ./lab translate, the check)."""
import os
import shutil
import subprocess
import sys

import pytest

import languages
from course import catalogues, po4a_config, translation_check, translation_work
from course import i18n as translate
from labs import ROOT

needs_tools = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("po4a", "msgfmt", "msgmerge", "msgcat", "xgettext", "git")),
    reason="po4a and gettext (tools/setup.sh --dev) are not installed")
polib = pytest.importorskip("polib")


# ------------------------------------------------ checks on non-Latin text

@pytest.mark.parametrize("msgid, msgstr", [
    # Chinese: no spaces, full-width punctuation against numbers and code.
    ("With `d_model = 12` and 3 heads, head 1 owns columns 4 to 7.",
     "当 `d_model = 12`、有 3 个头时，第1个头拥有第4到7列。"),
    ("Divide by `sqrt(d_head)`, not by 8.", "除以`sqrt(d_head)`，而不是除以8。"),
    ("See [lab 2](02_batched_attention.md) (1.5 GB).",
     "见[实验 2](02_batched_attention.md)（1.5 GB）。"),
    # Turkish: suffixes after code and numbers, the percent sign first.
    ("`split_heads` returns 3 heads; 50% of them.",
     "`split_heads`'in döndürdüğü 3 baş; bunların %50'si."),
])
def test_a_faithful_chinese_or_turkish_block_passes(msgid, msgstr):
    assert translation_check.block_problems(msgid, msgstr) == []


@pytest.mark.parametrize("msgid, msgstr, complaint", [
    ("head 1 owns columns 4 to 7.", "第1个头拥有第4到8列。", "numbers"),
    ("head 1 owns columns 4 to 7.", "第１个头拥有第４到７列。", "numbers"),      # full-width digits
    ("It is 0.693 nats.", "0,693 nat'tır.", "numbers"),                       # a decimal comma
    ("Call `split_heads`.", "调用 `split_head`。", "code spans"),
    ("Call `split_heads`.", "调用 split_heads。", "code spans"),
    ("See [lab 2](02_batched_attention.md).", "见[实验 2]（02_batched_attention.md）。",
     "link targets"),
])
def test_a_chinese_or_turkish_block_that_changed_what_it_must_keep_is_named(msgid, msgstr,
                                                                          complaint):
    found = translation_check.block_problems(msgid, msgstr)
    assert any(complaint in f for f in found)


def test_identifiers_in_chinese_text_are_found_without_spaces_around_them():
    msgid = "With d_model = 12 and H = 3, what does split_heads return?"
    assert translation_check.identifier_problems(
        msgid, "当d_model = 12、H = 3时，split_heads返回什么？") == []
    assert translation_check.identifier_problems(
        msgid, "当d_model = 12、H = 3时，split_head返回什么？")
    assert translation_check.identifier_problems(
        "Keep {right} of {total}.", "{total} içinde {right}.") == []


# ---------------------------------------------- what is left to translate

def test_the_work_table_has_a_column_per_language_and_a_row_per_file(tmp_path):
    report = {"es": {"kinds": {}, "files": {
                 "docs/01.md": translation_work.Counts(10, 9, 1),
                 "docs/02.md": translation_work.Counts(5, 5, 0)}},
              "zh_CN": {"kinds": {}, "files": {
                 "docs/01.md": translation_work.Counts(10, 0, 0),
                 "docs/02.md": translation_work.Counts(5, 3, 0)}}}
    lines = translation_work.table_lines(report=report)
    head, one, two = lines
    assert head.split()[-2:] == ["es", "zh_CN"]
    assert one.split("  ")[0] == "docs/01.md" and "1 fuzzy" in one and "all 10" in one
    assert "2 new" in two and two.split()[1] == "-"
    # The columns line up.
    assert head.index("zh_CN") == one.index("all 10") == two.index("2 new")


def test_the_work_table_says_when_nothing_is_left():
    report = {"es": {"kinds": {}, "files": {"a.md": translation_work.Counts(3, 3, 0)}}}
    assert translation_work.table_lines(report=report) == [
        "every language is current: nothing left to translate"]


# ------------------------------------------------ msgmerge's guesses

_HEAD = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


@needs_tools
def test_a_guess_for_new_text_is_cleared_and_an_edit_stays_fuzzy(tmp_path):
    po = tmp_path / "es.po"
    po.write_text(_HEAD + 'msgid "Lab 2: batched attention"\nmsgstr "Laboratorio 2: atención"\n\n'
                  'msgid "Divide by the square root of d_head."\n'
                  'msgstr "Divide por la raíz cuadrada de d_head."\n', encoding="utf-8")
    before = catalogues.active_messages(str(po))
    pot = tmp_path / "messages.pot"
    pot.write_text(_HEAD + 'msgid "Lab 2: batched attention"\nmsgstr ""\n\n'
                   'msgid "Lab 14: batched attention"\nmsgstr ""\n\n'
                   'msgid "Divide by the square root of d_head, always."\nmsgstr ""\n',
                   encoding="utf-8")
    subprocess.run(["msgmerge", "--quiet", "--update", "--backup=none", "--previous", str(po),
                    str(pot)], check=True)
    fuzzy = {e.msgid for e in polib.pofile(str(po)) if e.fuzzy}
    assert "Lab 14: batched attention" in fuzzy                    # msgmerge guessed
    assert catalogues.drop_guesses(str(po), before) == 1
    entries = {e.msgid: e for e in polib.pofile(str(po))}
    guess = entries["Lab 14: batched attention"]
    assert guess.msgstr == "" and not guess.fuzzy                  # cleared: untranslated
    edit = entries["Divide by the square root of d_head, always."]
    assert edit.fuzzy and edit.msgstr.startswith("Divide por")     # an edit: kept for review
    assert entries["Lab 2: batched attention"].msgstr == "Laboratorio 2: atención"
    # A second merge leaves the edit alone.
    assert catalogues.drop_guesses(str(po), catalogues.active_messages(str(po))) == 0


# ------------------------------------------------------------- the charts

def test_a_chart_with_chinese_labels_is_drawn_with_a_cjk_font(tmp_path):
    mpl = pytest.importorskip("matplotlib")
    sys.path.insert(0, os.path.join(ROOT, "tools", "plot"))
    import draw_chart
    mpl.use("Agg")
    spec = tmp_path / "zh.json"
    spec.write_text('{"kind": "bars", "title": "关掉一个头后损失的增加", "x_label": "nats（损失）",'
                    ' "groups": [{"title": "复制任务", "bars": [{"label": "头 0", "value": 0.3,'
                    ' "note": "归纳头"}]}]}', encoding="utf-8")
    import matplotlib.pyplot as plt
    if draw_chart.cjk_font() is None:
        pytest.skip("no CJK font installed (fonts-noto-cjk)")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # "Glyph ... missing from current font" fails
        assert draw_chart.draw(str(spec), plt) == str(tmp_path / "zh.png")
    assert draw_chart.needs_cjk({"title": "x", "a": [{"b": "头"}]})
    assert not draw_chart.needs_cjk({"title": "Head 0 — d_head, é"})


# ------------------------------------------------ a new lab, every language

# The files the translations read, in a git repository of their own.
from test_i18n import _copy  # noqa: E402


@needs_tools
def test_a_new_lab_reaches_every_language_without_a_hand_edit(tmp_path):
    from course import newlab
    from labs import load_labs
    root = str(tmp_path / "repo")
    _copy(root)
    n = len(load_labs(root)) + 1
    name = "%02d_sliding_window" % n
    newlab.create(name, "Sliding-window attention", root=root)
    # Before ./lab translate the check says what is missing, naming the lab.
    found = translation_check.problems(root)
    assert any("po/po4a.cfg" in p and "docs/%s.md" % name in p for p in found)

    translate.update(root, log=lambda *a: None)
    assert translation_check.problems(root) == []
    labs = load_labs(root)
    for lang in languages.load(root):
        page = os.path.join(root, "docs", lang.pages, name + ".md")
        hints = os.path.join(root, "labs", name, "hints.%s.txt" % lang.pages)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        # In English until translated, and the first line says so.
        assert "# Lab %d: Sliding-window attention" % n in text
        assert text.startswith("*") and "(0 " not in text.splitlines()[0][:3]
        assert os.path.isfile(hints)
        # The README's table: the new row, and the other rows as translated as before.
        with open(os.path.join(root, "docs", lang.pages, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        assert "| %d | `labs/%s` |" % (n, name) in readme
        assert readme.count("\n| ") >= len(labs) + 2
        # No catalogue holds a guess for the new lab's text: untranslated, not fuzzy.
        for path in (os.path.join(root, "po", lang.po + ".po"),
                     os.path.join(root, catalogues.CLI_DIR, lang.po + ".po")):
            for e in polib.pofile(path):
                if any(name in f for f, _ in e.occurrences):
                    assert not e.fuzzy, (path, e.msgid)
    spanish = os.path.join(root, "docs", "es", "README.md")
    with open(spanish, encoding="utf-8") as f:
        assert "| laboratorio | directorio | escribes | lección |" in f.read()
    # po4a's configuration lists the lab; nobody wrote it by hand.
    with open(os.path.join(root, po4a_config.CFG), encoding="utf-8") as f:
        cfg = f.read()
    assert "[type: text] docs/%s.md" % name in cfg and "labs/%s/hints.txt" % name in cfg


@needs_tools
def test_a_fifth_language_is_one_registry_line_and_translate(tmp_path):
    from learner import i18n
    root = str(tmp_path / "repo")
    _copy(root)
    path = os.path.join(root, languages.REGISTRY)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    line = ('  {"po": "de", "pages": "de", "name": "Deutsch", "english": "German", '
            '"env": ["de"], "locale": "de_DE.UTF-8"},\n')
    with open(path, "w", encoding="utf-8") as f:       # one line, nothing else
        f.write(text.replace(' "languages": [\n', ' "languages": [\n' + line, 1))
    languages._load.cache_clear()
    try:
        translate.update(root, log=lambda *a: None)
        assert translation_check.problems(root) == []
        for rel in ("po/de.po", "po/cli/de.po", "po/quiz/de.po", "docs/de/README.md",
                    "docs/de/01_split_heads.md", "labs/01_split_heads/hints.de.txt",
                    "tools/lab/course/kit_readme/README.de.md"):
            assert os.path.isfile(os.path.join(root, rel)), rel
        with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
            assert "**Deutsch:**" in f.read()
        assert i18n.language_of("de_DE.UTF-8", root) == "de"
        assert translation_work.work(root)["de"]["kinds"]["pages"].current <= 5
    finally:
        languages._load.cache_clear()


@needs_tools
def test_the_untouched_new_lab_template_names_no_path_the_kit_lacks(tmp_path):
    from course import kit_references, newlab
    from labs import load_labs
    n = len(load_labs()) + 1
    files = newlab._files(n, "%02d_throwaway" % n, "throwaway", "A throwaway lab")
    shipped = {rel: (t if isinstance(t, bytes) else t.encode()) for rel, t in files.items()
               if rel.startswith("labs/")}
    problems = kit_references.reference_problems(shipped)
    assert [p for p in problems if "tests/" in p] == []
