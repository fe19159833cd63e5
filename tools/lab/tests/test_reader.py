"""Unit tests of the course reader (tools/lab/learner/reader*.py), the quizzes
(tools/lab/learner/quiz.py) and the last-run record the reader shows
(public_tests.remember). The browser test is tools/lab/checks/browser.py.

Run: /usr/bin/python3 -m pytest tools/lab/tests/test_reader.py
"""
import copy
import json
import os
import re
import time

import pytest

from labs import Lab, ROOT, load_labs
from learner import files, public_tests, quiz, reader, reader_labels, reader_lessons, \
    reader_panels, reader_site
from learner.results import LabResult

FIXTURES = os.path.join(ROOT, "tools", "reader", "testdata")


def _question(qid="q1", stage="before", right=0, n=3):
    return {"id": qid, "stage": stage, "question": "Which?",
            "options": [{"text": "option %d" % k, "correct": k == right, "why": "because %d" % k}
                        for k in range(n)]}


def _quiz():
    return {"questions": [_question("a", "before"), _question("b", "check"),
                          _question("c", "check"), _question("d", "after"),
                          _question("e", "after", right=2)]}


# --------------------------------------------------------------------------- quiz data

def test_every_committed_quiz_is_well_formed():
    assert quiz.problems(load_labs()) == []


def test_a_well_formed_quiz_has_no_problems():
    assert quiz.problems_of(_quiz(), "q.json") == []


@pytest.mark.parametrize("break_it, says", [
    (lambda q: q["questions"][0]["options"][1].update(correct=True), "2 correct options"),
    (lambda q: q["questions"][0]["options"][0].update(correct=False), "0 correct options"),
    (lambda q: q["questions"][1]["options"][2].pop("why"), "no explanation"),
    (lambda q: q["questions"][1]["options"][2].update(why="  "), "no explanation"),
    (lambda q: q["questions"].pop(), "4 questions, expected 5 to 8"),
    (lambda q: q["questions"].extend([_question("x%d" % i) for i in range(4)]),
     "9 questions, expected 5 to 8"),
    (lambda q: q["questions"][2].update(id="a"), "id 'a' is used twice"),
    (lambda q: q["questions"][2].update(stage="during"), "stage 'during'"),
    (lambda q: q["questions"][3].update(stage="check", id="d") or
     q["questions"][4].update(stage="check"), "no question of stage 'after'"),
    (lambda q: q["questions"][0].update(options=[q["questions"][0]["options"][0]]),
     "expected 2 to 5 options"),
    (lambda q: q["questions"][0]["options"][1].update(correct="no"), "must be true or false"),
])
def test_a_malformed_quiz_is_named_with_what_is_wrong(break_it, says):
    q = _quiz()
    break_it(q)
    problems = quiz.problems_of(q, "labs/x/quiz.json")
    assert any(says in p for p in problems), problems
    assert all(p.startswith("labs/x/quiz.json") for p in problems)


def test_a_missing_or_unparsable_quiz_is_a_problem(workdir):
    lab = Lab({"number": 1, "dir": "01_x", "target": "x", "title": "X"}, root=str(workdir))
    (workdir / "labs" / "01_x").mkdir(parents=True)
    assert quiz.problems([lab], root=str(workdir)) == ["labs/01_x/quiz.json: missing"]
    (workdir / "labs" / "01_x" / "quiz.json").write_text("{not json")
    assert "not JSON" in quiz.problems([lab], root=str(workdir))[0]


def test_the_terminal_quiz_explains_a_wrong_answer_and_asks_again():
    lab = load_labs()[0]
    answers = iter(["b", "x", "a"] + ["a"] * 3 + ["c"])
    out = []
    first, answered = quiz.run_quiz(lab, _quiz(), read=lambda prompt: next(answers),
                                    write=out.append)
    text = "\n".join(out)
    assert "Not quite. because 1" in text and "Right. because 0" in text
    assert "answer with a letter from a to c" in text
    assert (first, answered) == (4, 5)
    assert "done: 4 of 5 right at the first try" in text


def test_the_terminal_quiz_stops_on_q_or_end_of_input():
    lab = load_labs()[0]
    out = []
    assert quiz.run_quiz(lab, _quiz(), read=lambda p: "q", write=out.append) == (0, 0)

    def eof(prompt):
        raise EOFError
    assert quiz.run_quiz(lab, _quiz(), read=eof, write=out.append) == (0, 0)
    assert "stopped: 0 of 5 answered" in out[-1]


def test_without_a_catalogue_a_translated_quiz_is_the_english_one():
    q = _quiz()
    assert quiz.translated(q, "es") == q
    assert quiz.translated(copy.deepcopy(q), None) == q


# --------------------------------------------------------------------------- last run

def test_remember_keeps_each_labs_last_state_and_merges_runs(workdir):
    labs = load_labs()
    path = str(workdir / "last_run.json")
    r = LabResult(labs[1])
    r.passed, r.total, r.first = 3, 9, "T.X: looks like no scale"
    public_tests.remember([(labs[0], "not started", None), (labs[1], "failing", r)], path)
    ok = LabResult(labs[1])
    ok.passed = ok.total = 9
    public_tests.remember([(labs[1], "passing", ok)], path)
    data = files.load_json(path)["labs"]
    assert data["1"]["state"] == "not started"
    assert data["2"]["state"] == "passing" and data["2"]["passed"] == 9
    assert time.time() - data["2"]["time"] < 60


def test_status_of_says_what_to_run_next():
    labs = load_labs()
    runs = {"1": {"state": "passing", "time": 0},
            "2": {"state": "failing", "time": 0, "passed": 3, "total": 9,
                  "detail": "T.X: looks like scores scaled by 1/sqrt(d_model)"},
            "3": {"state": "not started", "time": 0}}
    state, lines, nxt = reader_panels.status_of(labs[1], labs, runs)
    assert state == "failing" and nxt == "./lab watch 2"
    assert "3/9 public tests pass" in lines
    assert any("looks like scores scaled by 1/sqrt(d_model)" in l for l in lines)
    state, _, nxt = reader_panels.status_of(labs[0], labs, runs)
    assert state == "passing" and nxt.startswith("./lab watch 2")
    state, _, nxt = reader_panels.status_of(labs[2], labs, runs)
    assert state == "not started" and labs[2].learner_file in nxt
    assert reader_panels.status_of(labs[3], labs, runs)[0] == "unknown"
    assert reader_panels.status_of(labs[3], labs, {"4": "garbage"})[0] == "unknown"


# --------------------------------------------------------------------------- the site

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("site") / "site")
    reader_site.build(d, translations={"es": os.path.join(FIXTURES, "i18n", "es"),
                                  "pt-BR": os.path.join(FIXTURES, "i18n", "pt-BR")},
                 extra_views=[os.path.join(FIXTURES, "view_small.json")])
    return d


def _read(site, rel):
    with open(os.path.join(site, rel), encoding="utf-8") as f:
        return f.read()


def test_every_lesson_has_a_page_with_previous_and_next(site):
    labs = load_labs()
    for i, lab in enumerate(labs):
        page = _read(site, "en/%s.html" % lab.dir)
        assert ('rel="prev" href="%s.html"' % labs[i - 1].dir in page) == (i > 0)
        assert ('rel="next"' in page) == (i + 1 < len(labs))
        assert 'id="quiz-data"' in page


def test_a_lesson_renders_tables_highlighted_code_and_images(site):
    page = _read(site, "en/07_head_analysis.html")
    assert "<table>" in page and '<div class="hl">' in page
    assert '<img alt="The four heads of the default run" src="../images/show_heads_default.png"' \
        in page or 'src="../images/show_heads_default.png"' in page
    assert os.path.isfile(os.path.join(site, "images", "show_heads_default.png"))


def test_links_between_lessons_work_and_repository_paths_are_plain_text(site):
    page = _read(site, "en/02_batched_attention.html")
    assert 'href="numpy/mha.py"' not in page
    assert 'class="repo-path" title="in the repository: docs/numpy/mha.py"' in page
    assert re.search(r'href="\d\d_\w+\.html', _read(site, "en/03_output_projection.html"))


def test_the_language_switch_leads_to_the_same_lesson_in_each_language(site):
    es = _read(site, "es/02_batched_attention.html")
    assert '<html lang="es">' in es
    assert 'data-lang="pt-BR" hreflang="pt-BR" lang="pt-BR" ' \
        'href="../pt-BR/02_batched_attention.html"' in es
    assert 'class="untranslated"' not in es


def test_a_lesson_not_yet_translated_is_shown_in_english_and_says_so(site):
    # The fixtures translate lab 2 only: lab 3's Spanish page is the English lesson.
    es = _read(site, "es/03_output_projection.html")
    assert '<html lang="es">' in es and 'class="untranslated"' in es
    assert '<div lang="en">' in es
    english = _read(site, "en/03_output_projection.html")
    assert 'class="untranslated"' not in english


def _quiz_of(page):
    m = re.search(r'<script type="application/json" id="quiz-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_a_translated_page_asks_its_quiz_in_its_language(site):
    lab = load_labs()[1]
    english = quiz.load(lab)["questions"][0]
    en = _quiz_of(_read(site, "en/02_batched_attention.html"))
    assert en["questions"][0]["question"] == english["question"]
    assert en["labels"]["right"] == "Right."
    es_page = _read(site, "es/02_batched_attention.html")
    es = _quiz_of(es_page)
    assert es["questions"][0]["question"].startswith("Un modelo tiene d_model = 512 y 8 cabezas.")
    assert es["questions"][0]["options"][2]["why"].startswith("Los productos escalares")
    assert es["questions"][0]["options"][2]["correct"] is True      # the data is unchanged
    assert es["labels"]["right"] == "Correcto." and es["labels"]["before"] == "Antes de empezar"
    assert '<h2>Cuestionario</h2>' in es_page
    pt = _quiz_of(_read(site, "pt-BR/02_batched_attention.html"))
    assert pt["questions"][0]["question"].startswith("Um modelo tem d_model = 512 e 8 cabeças.")
    assert pt["labels"]["wrong"] == "Não exatamente."
    assert [q["id"] for q in es["questions"]] == [q["id"] for q in en["questions"]]


def test_a_verdict_ending_in_a_full_width_stop_is_followed_by_its_explanation_directly():
    options = _question()["options"]
    chinese = {"right": "答对了。", "wrong": "不太对。"}
    assert quiz.said(chinese, options[0]) == "答对了。because 0"
    assert quiz.said(chinese, options[1]) == "不太对。because 1"
    assert quiz.said(quiz.labels(None), options[1]) == "Not quite. because 1"


def test_the_page_quiz_joins_each_verdict_and_explanation_as_its_language_writes_them(site):
    zh = _quiz_of(_read(site, "zh-CN/02_batched_attention.html"))
    wrong, right = zh["questions"][0]["options"][0], zh["questions"][0]["options"][2]
    assert zh["labels"]["wrong"] == "不太对。" and not wrong["correct"]
    assert wrong["said"] == "不太对。" + wrong["why"] and not wrong["why"].startswith(" ")
    assert right["said"] == "答对了。" + right["why"]
    en = _quiz_of(_read(site, "en/02_batched_attention.html"))
    assert en["questions"][0]["options"][0]["said"] == \
        "Not quite. " + en["questions"][0]["options"][0]["why"]


def test_a_string_the_catalogue_lacks_is_shown_in_english():
    q = _quiz()
    q["questions"][0]["question"] = "A model has d_model = 512 and 8 heads. By what number " \
        "does each head divide its scores?"
    es = quiz.translated(q, "es")
    assert es["questions"][0]["question"].startswith("Un modelo tiene")
    assert es["questions"][1] == q["questions"][1]        # "Which?" has no translation


def test_a_translation_is_found_as_docs_lang_NN_or_NN_name(workdir):
    lab = load_labs()[1]
    assert reader_lessons.translation_of(lab, "en") == os.path.join(ROOT, lab.lesson_file)
    (workdir / "docs" / "es").mkdir(parents=True)
    (workdir / "docs" / "es" / "02.md").write_text("# hola\n")
    assert reader_lessons.translation_of(lab, "es", root=str(workdir)).endswith("docs/es/02.md")
    assert reader_lessons.translation_of(lab, "pt-BR", root=str(workdir)) is None


def test_the_search_index_covers_every_lesson_and_its_sections(site):
    text = _read(site, "assets/search_index.js")
    index = json.loads(text[text.index("["):text.rindex("]") + 1])
    assert {e["lab"] for e in index} == {lab.number for lab in load_labs()}
    rope = [e for e in index if "RoPE" in e["text"] or "RoPE" in e["title"]]
    assert any(e["lab"] == 11 for e in rope)
    langs = "|".join(reader_labels.PAGE_CODES)
    assert all(re.match(r"^(%s)/\d\d_\w+\.html(#[\w-]+)?$" % langs, e["url"]) for e in index)


def test_a_search_hit_names_its_lab_once_and_never_shows_the_translation_note(site):
    text = _read(site, "assets/search_index.js")
    index = json.loads(text[text.index("["):text.rindex("]") + 1])
    for e in index:
        assert len(re.findall(r"\b%d\b" % e["lab"], e["title"].split("\u00b7")[0])) == 1, e["title"]
    spanish = [e for e in index if e["lang"] == "es"]
    assert spanish and not any("Traducción:" in e["text"] for e in spanish)


def test_a_chinese_heading_keeps_its_letters_in_its_anchor_and_the_index_points_at_it():
    text = "# 实验 4：因果掩码\n\n## 思路\n\ntext\n\n## Shapes\n\nmore\n"
    html, _ = reader_lessons.render(text, load_labs(), set())
    ids = re.findall(r'<h\d id="([^"]+)"', html)
    assert ids == ["实验-4因果掩码", "思路", "shapes"]
    assert [reader_lessons.slug(h) for h, _ in reader_lessons.sections(text)] == ids


def test_nothing_on_the_site_names_another_host(site):
    for dirpath, _, names in os.walk(site):
        for n in names:
            if n.endswith((".html", ".js", ".css")):
                text = _read(site, os.path.relpath(os.path.join(dirpath, n), site))
                assert not re.search(r'(src|href)="(https?:)?//', text), n
                assert "@import" not in text and "url(http" not in text, n


def test_the_head_viewer_carries_the_views_that_exist(site):
    page = _read(site, "en/heads.html")
    data = json.loads(re.search(r'id="views-data">(.*?)</script>', page, re.S).group(1))
    assert "view-small-json" in [v["id"] for v in data]
    assert all(v["data"]["kind"] == "heads_view" for v in data)


def test_the_learners_pictures_sit_beside_the_lessons(workdir):
    lab = [l for l in load_labs() if l.number == 7][0]
    assert reader_panels.program_folders(lab) == ["heads"]
    assert reader_panels.program_folders([l for l in load_labs() if l.number == 10][0]) == \
        ["heads_sweep", "ablate_heads"]


def test_without_the_markdown_library_read_says_what_to_install(monkeypatch, capsys):
    import builtins
    real = builtins.__import__

    def no_markdown(name, *args, **kwargs):
        if name == "markdown":
            raise ImportError("No module named 'markdown'")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_markdown)
    monkeypatch.setattr(reader, "ROOT", "/nonexistent-root")
    args = type("A", (), {"port": None, "build_only": True})()
    assert reader.cmd_read(args) == 1
    err = capsys.readouterr().err
    assert "python3-markdown" in err and "tools/setup.sh" in err


def test_a_port_out_of_range_is_a_usage_error(capsys):
    args = type("A", (), {"port": 70000, "build_only": False})()
    assert reader.cmd_read(args) == 2
    assert "--port 70000 is not a port" in capsys.readouterr().err


def test_command_fences_are_highlighted_as_shell_and_maths_stays_plain():
    text = "```\nbazel test //labs/01_split_heads/...\n```\n\n```\nQ = x W_Q   (T, d)\n```\n"
    tagged = reader_lessons.tag_fences(text)
    assert tagged.startswith("```sh\nbazel test") and "```\nQ = x W_Q" in tagged
    html, _ = reader_lessons.render(text, load_labs(), set())
    assert 'bazel<span class="w"> </span>' in html      # lexed as shell, not as text
    assert "Q = x W_Q   (T, d)" in html


def test_a_tagged_fence_earlier_on_the_page_leaves_later_fences_paired():
    text = ("```pseudo\nx = 1\n```\n\n```\nbazel run //x\n```\n\n## After\n\n"
            "python3 reads **bold** and <bos>\n\n```\n<bos> I walk\n```\n")
    html, _ = reader_lessons.render(text, load_labs(), set())
    assert '<h2 id="after">After</h2>' in html and "<strong>bold</strong>" in html
    assert "&lt;bos&gt; I walk" in html and "```" not in html


def test_no_lesson_page_shows_a_markdown_fence_as_text(site):
    for dirpath, _, names in os.walk(site):
        for n in names:
            if n.endswith(".html"):
                text = _read(site, os.path.relpath(os.path.join(dirpath, n), site))
                assert "```" not in text, n


# --------------------------------------------------------------------------- languages

def test_every_label_of_a_spanish_page_is_spanish(site):
    es = _read(site, "es/02_batched_attention.html")
    assert 'placeholder="Buscar en todas las lecciones"' in es
    assert ">todos los laboratorios</a>" in es
    assert "<h2>Tu última ejecución: sin registro</h2>" in es
    for english in ("Search every lesson", "all labs", "Your last run", "Next:", "no run of"):
        assert english not in es, english
    labels = json.loads(re.search(r'id="labels">(.*?)</script>', es, re.S).group(1))
    assert labels["no_hits"] == "ninguna lección dice “{query}”"
    assert labels["role_previous-token"] == "token anterior"


def test_each_language_has_its_contents_page_linking_to_its_own_lessons(site):
    for lang, title in (("en", "Multi-head attention, one lab at a time"),
                        ("es", "Atención multicabeza, un laboratorio cada vez"),
                        ("pt-BR", "Atenção multi-cabeça, um lab por vez")):
        page = _read(site, "%s/index.html" % lang)
        assert "<h1>%s</h1>" % title in page
        assert 'href="02_batched_attention.html"' in page
        assert 'class="langs"' in page and 'href="../es/index.html"' in page
    root = _read(site, "index.html")
    assert 'class="index chooser"' in root
    assert all('href="%s/index.html"' % lang in root for lang in ("en", "es", "pt-BR"))


def test_the_last_runs_failure_is_shown_in_the_pages_language():
    from learner.reader_labels import speaking
    labs = load_labs()
    runs = {"2": {"state": "failing", "time": 0, "passed": 0, "total": 9,
                  "detail": "AttentionBatchedPublic.X: lab 2: attention_batched is not "
                            "implemented yet, see docs/02_batched_attention.md"}}
    with speaking("es"):
        state, lines, nxt = reader_panels.status_of(labs[1], labs, runs)
    assert state == "failing" and nxt == "./lab watch 2"
    assert "0/9 tests públicos pasan" in lines
    failure = [l for l in lines if l.startswith("primer fallo: ")]
    assert failure and "todavía no está implementada" in failure[0]
    assert "docs/es/02_batched_attention.md" in failure[0]
    with speaking("en"):
        assert "0/9 public tests pass" in reader_panels.status_of(labs[1], labs, runs)[1]


# --------------------------------------------------------------------------- formulas

LESSON_WITH_FORMULAS = """# Lab 99: formulas

Why $\\frac{1}{\\sqrt{d_{\\text{head}}}}$ and not `$HOME` or $5 and $6; $a_i * b_j$.

$$
w_{ij} = \\frac{\\exp(s_{ij} - m_i)}{\\sum_{j'} \\exp(s_{ij'} - m_i)}
$$

```
$not_a_formula$
```
"""


def test_formulas_are_found_outside_code_and_kept_verbatim():
    found = reader_lessons.formulas(LESSON_WITH_FORMULAS)
    assert [(tex[:5], display, line) for tex, display, line in found] == \
        [("\\frac", False, 3), ("a_i *", False, 3), ("w_{ij", True, 5)]
    html, _ = reader_lessons.render(LESSON_WITH_FORMULAS, load_labs(), set())
    assert '<span class="math">\\frac{1}{\\sqrt{d_{\\text{head}}}}</span>' in html
    assert '<span class="math">a_i * b_j</span>' in html          # no emphasis
    assert '<div class="math display">w_{ij} = \\frac{\\exp(s_{ij} - m_i)}' in html
    assert "<code>$HOME</code>" in html and "$5 and $6" in html
    assert "$not_a_formula$" in html


def test_a_formula_that_does_not_parse_fails_the_course_check_with_its_line(workdir):
    from checks import formulas
    lesson = workdir / "99_x.md"
    lesson.write_text(LESSON_WITH_FORMULAS.replace("\\sqrt{d_{\\text{head}}}}", "\\sqrt{d"))
    try:
        problems = formulas.problems([str(lesson)], root=str(workdir))
    except formulas.Unavailable as e:
        pytest.skip(str(e))
    assert len(problems) == 1 and problems[0].startswith("99_x.md:3: the formula")
    assert "KaTeX parse error" in problems[0]
    lesson.write_text(LESSON_WITH_FORMULAS)
    assert formulas.problems([str(lesson)], root=str(workdir)) == []


def test_every_committed_formula_parses():
    from checks import formulas
    try:
        assert formulas.problems() == []
    except formulas.Unavailable as e:
        pytest.skip(str(e))


def test_a_translation_that_changes_a_formula_is_named():
    from course import translation_check as i18n
    english = "Divide by $\\sqrt{d_{\\text{head}}}$, not $\\sqrt{d}$."
    assert i18n.block_problems(english, "Divide entre $\\sqrt{d_{\\text{head}}}$, no $\\sqrt{d}$.") \
        == []
    assert i18n.block_problems(english, "用$\\sqrt{d_{\\text{head}}}$除以，不是$\\sqrt{d}$。") == []
    problems = i18n.block_problems(english, "Divide entre $\\sqrt{d_{head}}$, no $\\sqrt{d}$.")
    assert len(problems) == 1 and "its formulas differ from the English" in problems[0]


def test_the_site_carries_katex_or_says_the_formulas_stay_tex(tmp_path):
    pages, drawn = reader_site.build(str(tmp_path / "a"))
    if drawn:
        assert os.path.isfile(tmp_path / "a" / "assets" / "katex" / "katex.min.js")
        assert any(n.endswith(".woff2") for n in os.listdir(tmp_path / "a" / "assets" / "katex"
                                                            / "fonts"))
        assert '<script src="../assets/katex/katex.min.js">' in _read(
            str(tmp_path / "a"), "es/02_batched_attention.html")
    pages, drawn = reader_site.build(str(tmp_path / "b"), katex=str(tmp_path / "none"))
    assert not drawn and pages == len(load_labs()) * len(reader_labels.LANGUAGES)
    assert "katex" not in _read(str(tmp_path / "b"), "en/02_batched_attention.html")
