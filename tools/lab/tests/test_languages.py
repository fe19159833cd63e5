"""The registry of languages (po/languages.json, tools/lab/languages.py), the
learner's language chosen from it, the terminal's widths in Chinese, and
casing that no locale changes (a Turkish LANG upper-cases "i" to "İ")."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import languages
from labs import ROOT
from learner import console, i18n


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.setup(None)


def test_the_registry_lists_the_four_languages_one_line_each():
    with open(os.path.join(ROOT, languages.REGISTRY), encoding="utf-8") as f:
        text = f.read()
    langs = languages.load()
    assert [l.po for l in langs] == ["es", "pt_BR", "zh_CN", "tr"]
    assert [l.pages for l in langs] == ["es", "pt-BR", "zh-CN", "tr"]
    # One line per language: adding one is adding a line.
    for lang in langs:
        assert sum('"po": "%s"' % lang.po in line for line in text.splitlines()) == 1


@pytest.mark.parametrize("value, expected", [
    ("es_ES.UTF-8", "es"), ("pt_BR.UTF-8", "pt_BR"), ("pt", "pt_BR"),
    ("zh_CN.UTF-8", "zh_CN"), ("zh", "zh_CN"), ("zh-CN", "zh_CN"), ("ZH_CN.UTF-8", "zh_CN"),
    ("tr_TR.UTF-8", "tr"), ("tr", "tr"), ("TR", "tr"),
    ("en_US.UTF-8", None), ("C", None), ("fr_FR.UTF-8", None), ("", None), (None, None),
])
def test_a_lang_value_names_its_language(value, expected):
    assert i18n.language_of(value) == expected


@pytest.mark.parametrize("env, expected", [
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ({"LANG": "tr_TR.UTF-8"}, "tr"),
    ({"LANG": "en_US.UTF-8", "LANGUAGE": "tr:en"}, "tr"),
    ({"LANG": "tr_TR.UTF-8", "LC_ALL": "zh_CN.UTF-8"}, "zh_CN"),
])
def test_the_environment_selects_chinese_and_turkish(env, expected):
    assert i18n.choose(None, env) == expected


def test_lang_options_come_from_the_registry():
    assert i18n.lang_options() == ["en", "es", "pt", "zh", "tr"]
    assert i18n.unknown_language("fr") and i18n.unknown_language("xx_YY")
    assert not any(i18n.unknown_language(v) for v in ("en", "en_GB", "C", "zh", "tr", "pt-BR"))


def test_an_unknown_lang_option_is_an_error_that_lists_the_languages():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "lab", "main.py"),
                        "--lang", "fr", "help"], capture_output=True, text=True)
    assert p.returncode == 2
    assert "--lang fr: the course speaks en, es, pt, zh, tr" in p.stderr


@pytest.mark.parametrize("entry, complaint", [
    ({"po": "de"}, "exactly the fields"),
    ({"po": "de", "pages": "de", "name": "Deutsch", "english": "German", "env": ["DE"],
      "locale": "de_DE.UTF-8"}, "lower-case prefixes"),
    ({"po": "es", "pages": "es2", "name": "x", "english": "x", "env": ["es"],
      "locale": "x"}, "used twice"),
])
def test_a_bad_registry_line_is_named(entry, complaint):
    good = json.loads(open(os.path.join(ROOT, languages.REGISTRY), encoding="utf-8").read())
    text = json.dumps({"languages": good["languages"] + [entry]})
    with pytest.raises(languages.RegistryError, match=complaint):
        languages.parse(text)


def test_chinese_and_turkish_pages_and_hints_are_named_in_their_folders(tmp_path):
    (tmp_path / "docs" / "zh-CN").mkdir(parents=True)
    (tmp_path / "docs" / "zh-CN" / "02_batched_attention.md").write_text("# 实验 2\n")
    (tmp_path / "labs" / "02_batched_attention").mkdir(parents=True)
    hints = tmp_path / "labs" / "02_batched_attention" / "hints.tr.txt"
    hints.write_text("# Çeviri: %100 güncel\n\nİlk ipucu.\n\nİkinci.\n")
    i18n.setup("zh_CN", root=str(tmp_path))
    assert i18n.page("docs/02_batched_attention.md", root=str(tmp_path)) == \
        "docs/zh-CN/02_batched_attention.md"
    i18n.setup("tr", root=str(tmp_path))
    path = i18n.hints_path("02_batched_attention", root=str(tmp_path))
    assert path == str(hints)
    assert i18n.read_hints(path) == ["İlk ipucu.", "İkinci."]


def test_a_chinese_lesson_heading_gives_the_lab_its_chinese_title(tmp_path):
    from labs import load_labs
    lab = load_labs()[1]
    (tmp_path / "docs" / "zh-CN").mkdir(parents=True)
    (tmp_path / "docs" / "zh-CN" / os.path.basename(lab.lesson_file)).write_text(
        "*译文*\n\n# 实验 2：批量注意力\n", encoding="utf-8")
    shutil.copy(os.path.join(ROOT, lab.lesson_file), str(tmp_path / "docs"))
    lab.root = str(tmp_path)
    i18n.setup("zh_CN", root=str(tmp_path))
    assert i18n.title(lab) == "批量注意力"
    assert i18n.without_lab_number("Laboratuvar 2: toplu dikkat") == "toplu dikkat"


# ------------------------------------------------------------ the terminal

def test_a_chinese_character_is_two_columns_wide():
    assert console.display_width("head") == 4
    assert console.display_width("注意力头") == 8
    assert console.display_width("e\u0301") == 1          # a combining accent takes none
    assert console.pad("实验", 6) == "实验  "


def test_status_lines_stay_aligned_with_chinese_titles(monkeypatch):
    from labs import load_labs
    from learner import status
    labs = load_labs()[:3]
    titles = {labs[0].number: "拆分与合并注意力头", labs[1].number: "批量注意力",
              labs[2].number: "Output projection"}
    monkeypatch.setattr(i18n, "title", lambda lab: titles[lab.number])
    lines = status.status_lines([(lab, "not started", None) for lab in labs], labs)
    # The state starts in the same terminal column on every line.
    columns = {console.display_width(l[:l.index("not started")]) for l in lines}
    assert len(columns) == 1


def test_a_chinese_state_takes_a_full_width_colon_before_its_count(monkeypatch):
    from labs import load_labs
    from learner import results, status
    lab = load_labs()[0]
    r = results.LabResult(lab)
    r.passed, r.total = 5, 8
    monkeypatch.setattr(status, "_", lambda s: {"failing": "未通过"}.get(s, s))
    monkeypatch.setattr(status, "count_text", lambda r: "5/8 个公开测试通过")
    head = status.status_lines([(lab, "failing", r)], [lab])[0]
    assert head.endswith("未通过：5/8 个公开测试通过")


def test_after_joins_as_the_script_of_the_first_part_does():
    assert console.after("Not quite.", "why") == "Not quite. why"
    assert console.after("不太对。", "没有") == "不太对。没有"
    assert console.after("failing", "3/9", ": ", "：") == "failing: 3/9"
    assert console.after("未通过", "3/9", ": ", "：") == "未通过：3/9"


def test_the_provisional_scoreboard_stays_aligned_with_chinese_titles(monkeypatch):
    from labs import load_labs
    from learner import provisional
    labs = load_labs()[:2]
    titles = {labs[0].number: "拆分与合并注意力头", labs[1].number: "Batched attention"}
    monkeypatch.setattr(i18n, "title", lambda lab: titles[lab.number])
    lines = provisional.scoreboard_lines([(lab, 0, 4, "") for lab in labs])
    rows = [l for l in lines if "0/4" in l]
    assert len(rows) == 2
    assert len({console.display_width(l[:l.index("0/4")]) for l in rows}) == 1


def test_chinese_text_wraps_between_characters_within_the_width():
    text = ("把分数除以 sqrt(d_head)，而不是 sqrt(d_model)。这是一个常见的错误，测试会说出它的名字，"
            "并指向讲义的“典型错误”一节。")
    lines = console.wrap(text, 30, "  ")
    assert len(lines) > 2
    assert all(console.display_width(l) <= 30 for l in lines)
    assert "".join(l.strip() for l in lines).replace(" ", "") == text.replace(" ", "")
    # Never a line that starts with closing punctuation, never a cut code span.
    assert not any(l.strip()[0] in "，。：；）" for l in lines)
    assert any("sqrt(d_head)" in l for l in lines)


def test_latin_text_wraps_as_before():
    assert console.wrap("one two three four", 9) == ["one two", "  three", "  four"]


# ------------------------------------------------ casing no locale changes

# Casing that follows the locale: JavaScript's toLocale*Case, C's tolower
# and toupper (a program that calls setlocale gets the Turkish table), bash's
# ${x,,} and ${x^^}, tr's character classes, Python's locale module.
_LOCALE_CASING = re.compile(r"toLocale(?:Lower|Upper)Case|\bstd::to(?:lower|upper)\b|"
                            r"(?<![\w.])to(?:lower|upper)\s*\(|\$\{\w+(?:,,|\^\^)\}|"
                            r"\[:(?:upper|lower):\]|locale\.setlocale")
_SCANNED = (".py", ".js", ".cc", ".h", ".sh", ".bzl")


def _tracked(*dirs):
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "--"] + list(dirs), check=True,
                         capture_output=True, text=True).stdout.split()
    return [p for p in out if p.endswith(_SCANNED) or p == "lab"]


def test_no_tool_or_test_changes_case_by_the_locale():
    found = []
    for rel in _tracked("lab", "tools", "common", "labs", "tests", "solutions"):
        if rel == "tools/lab/tests/test_languages.py":
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if _LOCALE_CASING.search(line):
                    found.append("%s:%d: %s" % (rel, n, line.strip()))
    assert found == []


def test_python_casing_is_the_same_under_a_turkish_locale(tmp_path):
    """With a real tr_TR.UTF-8 locale (built here with localedef when Debian's
    locale sources are installed), what the tools lower-case or compare stays
    ASCII: the language codes, the lab arguments, a quiz answer."""
    if not shutil.which("localedef") or \
            not os.path.isfile("/usr/share/i18n/locales/tr_TR"):
        pytest.skip("localedef or the tr_TR locale source is missing")
    locales = tmp_path / "locales"
    locales.mkdir()
    made = subprocess.run(["localedef", "-i", "tr_TR", "-f", "UTF-8",
                           str(locales / "tr_TR.UTF-8")], capture_output=True, text=True)
    if made.returncode not in (0, 1) or not (locales / "tr_TR.UTF-8").exists():
        pytest.skip("localedef could not build tr_TR.UTF-8: " + made.stderr[-200:])
    env = dict(os.environ, LOCPATH=str(locales), LANG="tr_TR.UTF-8", LC_ALL="tr_TR.UTF-8")
    # The locale is real: bash upper-cases i to İ under it.
    bash = subprocess.run(["bash", "-c", 'x=i; echo "${x^^}"'], env=env, capture_output=True,
                          text=True)
    assert bash.stdout.strip() == "İ"
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import locale; locale.setlocale(locale.LC_ALL, '')\n"
            "import languages\n"
            "from learner import i18n\n"
            "from labs import find_lab, load_labs\n"
            "print(i18n.language_of('TR_TR.UTF-8'), i18n.language_of('ZH_CN'),\n"
            "      find_lab(load_labs(), 'I') is None, 'QUIT'.lower(), 'i'.upper())\n"
            % os.path.join(ROOT, "tools", "lab"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["tr", "zh_CN", "True", "quit", "I"]
