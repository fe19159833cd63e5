"""The class report: counting mistakes, similarity, and the HTML page
(rendered in headless Chromium when it is installed)."""
import os
import re
import shutil
import subprocess
import sys
import types

import pytest

from reports import class_report
from reports import html_report

LAB1 = types.SimpleNamespace(number=1, dir="01_split_heads", title="Split and combine heads",
                             learner_file="labs/01_split_heads/split_heads.cc")
LAB2 = types.SimpleNamespace(number=2, dir="02_batched_attention", title="Batched <attention>",
                             learner_file="labs/02_batched_attention/attention.cc")
LABS = [LAB1, LAB2]
SEE = '; see docs/01_split_heads.md, "Classic mistakes"'


def case(name, passed, message="", mistake=None):
    out = {"name": name, "passed": passed, "points": 1.0 if passed else 0.0,
           "max_points": 1.0, "message": "" if passed else message}
    if mistake and not passed:
        out["mistake"] = mistake        # as grade.py keeps the result stream's field
    return out


def lab_report(lab, tests, status="graded", submitted=True):
    return {"lab": lab.number, "dir": lab.dir, "title": lab.title, "status": status,
            "submitted": submitted, "passed": sum(t["passed"] for t in tests),
            "total": len(tests), "points": sum(t["points"] for t in tests),
            "max_points": float(len(tests)),
            "first_failure": next(("%s: %s" % (t["name"], t["message"])
                                   for t in tests if not t["passed"]), ""),
            "tests": tests, "notes": [], "warnings": []}


def submission(name, labs):
    return {"submission": name, "mode": "isolated", "labs": labs, "notes": [],
            "points": sum(r["points"] for r in labs),
            "max_points": sum(r["max_points"] for r in labs)}


def looks(what, numbers="1 of 4 elements differ", name="no_transpose"):
    """(message, "mistake" field) of a test that recognised a table's mistake."""
    return ("Actual: false (looks like %s%s (checked against g.npy: %s)) Expected: true" % (
        what, SEE, numbers), {"name": name, "words": what, "doc": "docs/01_split_heads.md"})


def roster():
    """Three submissions: two make the same mistake (one of them worded twice
    by two tests), one passes; a hostile name; a lab not submitted."""
    no_t = "heads reshaped without the transpose (token 3 went to head 1)"
    no_t2 = "heads reshaped without the transpose (rows of one head glued together)"
    a = submission("alice", [
        lab_report(LAB1, [case("Split.A", False, *looks(no_t)),
                          case("Split.B", False, *looks(no_t2, "4 of 4 elements differ")),
                          case("Split.C", True)]),
        lab_report(LAB2, [case("Att.A", True)])])
    b = submission("<script>alert(1)</script>", [
        lab_report(LAB1, [case("Split.A", False, *looks(no_t)), case("Split.B", True),
                          case("Split.C", False, "Actual: false Expected: true")]),
        lab_report(LAB2, [case("Att.A", False, "not submitted")], "not_submitted", False)])
    c = submission("carol", [
        lab_report(LAB1, [case("Split.A", True), case("Split.B", True), case("Split.C", True)]),
        lab_report(LAB2, [case("Att.A", False, "does not compile: x")], "compile_error")])
    return [a, b, c]


def test_a_mistake_counts_once_per_submission_however_many_tests_name_it():
    lab1 = class_report.summarise(roster(), LABS)[0]
    assert [(m["mistake"], m["count"]) for m in lab1["mistakes"]] == [
        ("heads reshaped without the transpose", 2)]
    assert lab1["mistakes"][0]["submissions"] == ["<script>alert(1)</script>", "alice"]
    assert len(lab1["mistakes"][0]["wordings"]) == 2


def test_a_mistake_row_lists_the_table_names_counted_under_it():
    lab1 = class_report.summarise(roster(), LABS)[0]
    assert lab1["mistakes"][0]["names"] == ["no_transpose"]


def test_the_class_report_reads_the_field_not_the_sentence():
    # A message that says "looks like" without a field names nothing; a field
    # names its mistake whatever the message holds.
    plain, _ = looks("heads reshaped without the transpose")
    field = {"name": "interleaved", "words": "columns dealt to heads in turn", "doc": ""}
    r = lab_report(LAB1, [case("Split.A", False, plain),
                          case("Split.B", False, "Actual: false Expected: true", field)])
    assert class_report.lab_diagnoses(r) == {
        "columns dealt to heads in turn": ["columns dealt to heads in turn"]}


def test_tests_passed_and_the_hardest_tests_are_counted_over_those_who_submitted():
    lab1, lab2 = class_report.summarise(roster(), LABS)
    assert {t["name"]: (t["passed"], t["failed"]) for t in lab1["tests"]} == {
        "Split.A": (1, 2), "Split.B": (2, 1), "Split.C": (2, 1)}
    assert lab1["hardest"][0] == {"name": "Split.A", "passed": 1, "failed": 2, "majority": True}
    assert lab1["full_marks"] == 1
    assert lab2["submitted"] == 2 and lab2["statuses"] == {
        "graded": 1, "not_submitted": 1, "compile_error": 1}
    # A compile error names no mistake: it is counted in the statuses only.
    assert lab2["mistakes"] == []


def test_a_failure_that_names_no_mistake_is_listed_apart():
    lab1 = class_report.summarise(roster(), LABS)[0]
    assert lab1["failed_without_a_named_mistake"] == []
    only_plain = submission("dan", [lab_report(LAB1, [case("Split.A", False, "Actual: false")])])
    lab1 = class_report.summarise([only_plain], [LAB1])[0]
    assert lab1["failed_without_a_named_mistake"] == ["dan"]


def test_keys_that_start_with_a_shorter_key_merge_into_it():
    roots = class_report.merge_keys(["interleaved columns",
                                     "interleaved columns instead of a block", "the mask"])
    assert roots["interleaved columns instead of a block"] == "interleaved columns"
    assert roots["the mask"] == "the mask"


# --- similarity -------------------------------------------------------------

CANNED_SIM = """File f0000.cc: 460 tokens, 57 lines
File f0001.cc: 460 tokens, 59 lines
File f0002.cc: 366 tokens, 44 lines
Total input: 3 files (3 new, 0 old), 1286 tokens

f0000.cc: line 40-55                   |f0001.cc: line 25-40                [176]
f0000.cc: line 7-24                    |f0001.cc: line 7-25                 [126]
f0000.cc: line 37-43                   |f0002.cc: line 36-42[51]
f0001.cc: line 3                       |f0002.cc: line 9                    [30]
"""


def test_the_testers_summary_output_is_parsed():
    runs = class_report.parse_sim(CANNED_SIM)
    assert runs[0] == ("f0000.cc", (40, 55), "f0001.cc", (25, 40), 176)
    assert runs[2] == ("f0000.cc", (37, 43), "f0002.cc", (36, 42), 51)
    assert runs[3] == ("f0001.cc", (3, 3), "f0002.cc", (9, 9), 30)
    assert len(runs) == 4
    assert class_report.parse_tokens(CANNED_SIM) == {"f0000.cc": 460, "f0001.cc": 460,
                                                     "f0002.cc": 366}


def test_starter_lines_are_blanked_and_line_numbers_kept():
    starter = {"namespace mha {", "}  // namespace mha"}
    text = "namespace mha {\nint f() {\n  return 1;\n}\n}  // namespace mha\n"
    out = class_report.strip_starter(text, starter)
    assert out.split("\n") == ["", "int f() {", "  return 1;", "}", "", ""]
    assert class_report.content_lines("// c\n#include <x>\n\nint a;\n/* x\ny */ int b;\n") == {4, 6}


def _content(n):
    return set(range(1, n + 1))


def test_code_shared_by_many_submissions_is_common_not_copied():
    # f0 and f1 share lines 1-10 with each other only; lines 11-20 of every
    # file are shared by all six files (convergent code).
    files = ["f%d" % i for i in range(6)]
    runs = [("f0", (1, 10), "f1", (1, 10), 120)]
    for i, a in enumerate(files):
        for b in files[i + 1:]:
            runs.append((a, (11, 20), b, (11, 20), 100))
    content = {f: _content(20) for f in files}
    sizes = {f: 1 for f in files}
    shared = class_report.sharers(runs, sizes)
    scores = class_report.pair_scores(runs, shared, content, sizes, max_copies=4)
    own = class_report.own_lines(shared, content, sizes, max_copies=4)
    assert scores[("f0", "f1")]["lines_a"] == _content(10)
    assert own["f0"] == _content(10)
    assert scores[("f2", "f3")]["lines_a"] == set()      # only common code in common
    assert len(scores[("f0", "f1")]["regions"]) == 1


def test_identical_files_are_scored_against_each_other():
    content = {"f0": _content(12)}
    scores = class_report.pair_scores([], {"f0": {}}, content, {"f0": 2}, max_copies=4,
                                      tokens_of={"f0": 150})
    assert scores[("f0", "f0")]["lines_a"] == _content(12)
    assert round(scores[("f0", "f0")]["tokens"]) == 150
    # Held by five submissions, the same file is common code.
    assert class_report.pair_scores([], {"f0": {}}, content, {"f0": 5}, max_copies=4) == {}


def test_without_the_tester_the_section_says_so_and_the_rest_works():
    sim = class_report.similarity([("a", {1: b"int x;"}), ("b", {1: b"int x;"})], [LAB1],
                                  tool="")
    assert sim["available"] is False and sim["pairs"] == []
    assert "not installed" in sim["note"]
    klass = class_report.build(roster(), [], LABS, tool="")
    assert klass["labs"][0]["mistakes"]


LOOPS_A = """namespace mha {
static int check(int n, int m) {
  if (n <= 0) throw 1;
  if (m % n != 0) throw 2;
  return m / n;
}
Tensor3 split_heads(const Tensor2& x, int n_heads) {
  int total = 0;
  for (int t = 0; t < 10; ++t) {
    for (int h = 0; h < n_heads; ++h) {
      for (int c = 0; c < 7; ++c) {
        total += t * h + c;
        if (total > 1000) total -= 999;
      }
    }
  }
  return make(total, check(n_heads, 70));
}
}  // namespace mha
"""


@pytest.mark.skipif(not class_report.find_tool(), reason="similarity-tester (sim_c++) is not "
                    "installed: tools/setup.sh installs it")
def test_a_renamed_copy_is_flagged_and_an_independent_file_is_not(workdir):
    (workdir / "labs" / "01_split_heads").mkdir(parents=True)
    (workdir / LAB1.learner_file).write_text("namespace mha {\n}  // namespace mha\n")
    renamed = (LOOPS_A.replace("total", "acc").replace("check", "validate")
               .replace("n_heads", "heads"))
    other = ("namespace mha {\nTensor3 split_heads(const Tensor2& x, int n) {\n"
             "  auto v = xt::view(x, xt::all(), xt::range(0, n));\n  return v;\n}\n}\n")
    subs = [("a", {1: LOOPS_A.encode()}), ("b", {1: renamed.encode()}), ("c", {1: other.encode()})]
    sim = class_report.similarity(subs, [LAB1], {"min_tokens": 50}, root=str(workdir))
    assert [(p["a"], p["b"]) for p in sim["pairs"]] == [("a", "b")]
    assert sim["pairs"][0]["percent_a"] >= 90 and sim["pairs"][0]["regions"]


# --- HTML -------------------------------------------------------------------

def write_report(out_dir):
    reports = roster()
    sources = {"alice": {1: b"int f() { return 1; }\n"},
               "<script>alert(1)</script>": {1: b"int f() { return '<b>'; }\n"}}
    klass = class_report.build(reports, list(sources.items()), LABS, tool="")
    klass["similarity"] = {"available": True, "tool": "sim_c++", "note": "a reason to look",
                           "settings": dict(class_report.DEFAULTS),
                           "pairs": [{"lab": 1, "dir": LAB1.dir, "a": "<script>alert(1)</script>",
                                      "b": "alice", "percent_a": 90, "percent_b": 80,
                                      "identical": False, "tokens": 120,
                                      "regions": [{"a": [1, 1], "b": [1, 1], "tokens": 30}]}]}
    return html_report.write(str(out_dir), "class <2024>", reports, LABS, klass, sources)


def test_everything_from_a_submission_is_escaped(workdir):
    index = write_report(workdir)
    text = open(index).read()
    pages = [open(os.path.join(workdir, "s", f)).read()
             for f in sorted(os.listdir(os.path.join(workdir, "s")))]
    for page in [text] + pages:
        assert "<script>alert" not in page
        assert page.count("<script>") == 1         # our own checker only
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "class &lt;2024&gt;" in text and "Batched &lt;attention&gt;" in text
    assert "return &#x27;&lt;b&gt;&#x27;;" in text      # the shared region, quoted


def test_submission_pages_link_the_lessons_relative_to_the_report(workdir):
    write_report(workdir)
    page = open(os.path.join(workdir, "s", "001.html")).read()
    link = re.search(r'href="([^"]*01_split_heads\.md)"', page).group(1)
    assert not link.startswith(("/", "http"))
    assert os.path.normpath(os.path.join(workdir, "s", link)).endswith(
        os.path.join("docs", "01_split_heads.md"))
    assert "heads reshaped without the transpose" in page


def test_the_page_loads_nothing_from_elsewhere(workdir):
    text = open(write_report(workdir)).read()
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "default-src 'none'" in text


def test_the_histogram_counts_points_into_bins():
    edges, counts = html_report.histogram_counts([0, 1, 1, 3, 3, 3], 3)
    assert edges == [-0.5, 0.5, 1.5, 2.5, 3.5] and counts == [1, 2, 0, 3]
    edges, counts = html_report.histogram_counts([0.5, 99.5, 100], 100, bins=4)
    assert edges == [0, 25, 50, 75, 100] and counts == [1, 0, 0, 2]


def test_the_histogram_is_a_png_drawn_by_matplotlib():
    png = html_report.histogram_png([0, 1, 3], 3, "Lab <1>")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_without_matplotlib_the_report_stops_and_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    with pytest.raises(SystemExit) as e:
        html_report.histogram_png([0, 1, 3], 3, "Lab 1")
    assert "python3-matplotlib" in str(e.value)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(workdir, *args):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--user-data-dir=%s" % (workdir / "profile"),
                           "--enable-logging=stderr", "--v=0"] + list(args),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not CHROMIUM, reason="Chromium is not installed: tools/setup.sh --dev "
                    "installs Debian's chromium, which this test needs")
def test_the_report_renders_in_headless_chromium(workdir):
    index = write_report(workdir / "report")
    url = "file://" + index
    html = open(index).read()
    dom = _chromium(workdir, "--virtual-time-budget=5000", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    # Every table the page holds is in the rendered DOM.
    assert dom.stdout.count("<table") == html.count("<table") >= 4
    assert '<table class="gradebook">' in dom.stdout
    # Our script ran and found every chart decoded (no broken image).
    charts = html.count("<img ")
    m = re.search(r'data-charts-ok="(\d+)/(\d+)"', dom.stdout)
    assert m, "the page's script did not run"
    assert m.group(1) == m.group(2) == str(charts)
    # No console message at all: no script error, no blocked load, no failed chart.
    console = [l for l in dom.stderr.splitlines() if ":CONSOLE" in l]
    assert console == []
    shot = os.environ.get("MHA_REPORT_SCREENSHOT") or str(workdir / "report.png")
    r = _chromium(workdir, "--window-size=1280,1800", "--screenshot=" + shot, url)
    assert r.returncode == 0 and os.path.getsize(shot) > 10000
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    try:
        from PIL import Image
    except ImportError:
        return
    img = Image.open(shot).convert("L")
    lo, hi = img.getextrema()
    assert hi - lo > 100, "the screenshot is blank"


def test_a_failing_class_report_never_raises(workdir):
    class Broken:
        def similarity(self):
            raise ValueError("broken rubric")
    logged = []
    klass, lines = class_report.for_roster(roster(), [], LABS, Broken(), "isolated mode.", "r",
                                           str(workdir), None, logged.append)
    assert "broken rubric" in klass["error"] and logged and "not written" in lines[0]


def test_the_threshold_on_the_command_line_wins_and_zero_turns_it_off():
    rub = types.SimpleNamespace(similarity=lambda: {"threshold": 70, "max_copies": 3})
    assert class_report.similarity_settings(rub) == {"threshold": 70, "max_copies": 3}
    assert class_report.similarity_settings(rub, 40)["threshold"] == 40
    off = class_report.similarity_settings(rub, 0)
    assert off["enabled"] is False
    sim = class_report.similarity([("a", {1: b"x"}), ("b", {1: b"x"})], [LAB1], off)
    assert sim["pairs"] == [] and "turned off" in sim["note"]
