"""The class report as static HTML: one page for the roster, one per submission.

    index = write(out_dir, roster_name, reports, labs, klass, sources)

out_dir/index.html holds the gradebook, per lab a histogram of the points,
the named mistakes and the hidden tests, and the similar pairs with their
shared regions side by side; out_dir/s/NNN.html one submission's failures
with links to the lessons. Nothing is loaded from elsewhere: the charts are
PNGs drawn by matplotlib (python3-matplotlib, which tools/setup.sh installs;
without it the report stops and says so) embedded as data: URIs; the only
script is our own, inline,
allowed by its hash in the page's Content-Security-Policy, and it only
checks that every chart decoded (for the report's own test). Every string
that came from a submission (names, messages, code) is escaped.
"""
import base64
import hashlib
import html
import io
import os
import shutil

from reports import feedback
from reports import report
from labs import ROOT

# Marks charts that did not decode; tools/lab/tests/test_class_report.py reads it.
SCRIPT = ("window.addEventListener('load', function () {"
          " var imgs = document.images, bad = 0;"
          " for (var i = 0; i < imgs.length; i++) {"
          "  if (!imgs[i].complete || imgs[i].naturalWidth === 0) {"
          "   bad++; imgs[i].alt = 'this chart could not be drawn';"
          "   console.error('chart failed to load: ' + imgs[i].getAttribute('data-chart')); } }"
          " document.documentElement.setAttribute('data-charts-ok',"
          " (imgs.length - bad) + '/' + imgs.length); });")

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       padding: 0 1em; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.full { background: #dff3e0; } td.part { background: #fff4d6; }
td.zero { background: #fbe0e0; } td.none { color: #999; }
.note { background: #eef4fb; border-left: 4px solid #4a78b8; padding: .5em .8em; }
.bar { display: inline-block; height: .8em; background: #4a78b8; vertical-align: middle; }
.labgrid { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
pre { background: #f7f7f9; padding: .4em; margin: 0; overflow-x: auto; font-size: 12px; }
code { font-size: 12px; } .msg { max-width: 70em; word-break: break-word; }
.diag { font-weight: 600; color: #8a3b00; }
nav a { margin-right: 1em; }
table.regions { table-layout: fixed; width: 100%; }
table.regions pre { white-space: pre-wrap; overflow-wrap: anywhere; }
"""


def esc(text):
    return html.escape("" if text is None else str(text), quote=True)


def page(title, body):
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           "script-src 'sha256-%s'" % digest)
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n"
            "<link rel=\"icon\" href=\"data:,\">\n<title>%s</title>\n<style>%s</style>\n</head>\n"
            "<body>\n%s\n<script>%s</script>\n</body>\n</html>\n"
            % (csp, esc(title), STYLE, body, SCRIPT))


# ---------------------------------------------------------------------------
# Charts

def histogram_counts(points, max_points, bins=20):
    """([bin edges], [counts]) of `points` over [0, max_points]: one bin per
    whole point when points are whole and at most `bins + 10` of them, else
    `bins` equal bins."""
    top = max(max_points, 1.0)
    if float(top).is_integer() and top <= bins + 10 and all(float(p).is_integer()
                                                           for p in points):
        n = int(top) + 1
        counts = [0] * n
        for p in points:
            counts[max(0, min(n - 1, int(p)))] += 1
        return [i - 0.5 for i in range(n + 1)], counts
    width = top / bins
    counts = [0] * bins
    for p in points:
        i = int(p / width) if p < top else bins - 1
        counts[max(0, min(bins - 1, i))] += 1
    return [i * width for i in range(bins + 1)], counts


MATPLOTLIB_MISSING = ("the class report draws its histograms with matplotlib, which is not "
                      "installed: install Debian's python3-matplotlib (sudo apt-get install "
                      "python3-matplotlib, or tools/setup.sh)")


def histogram_png(points, max_points, title):
    """PNG bytes of a histogram. SystemExit naming the package without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit(MATPLOTLIB_MISSING)
    edges, counts = histogram_counts(points, max_points)
    fig, ax = plt.subplots(figsize=(4.2, 2.3), dpi=100)
    ax.bar(edges[:-1], counts, width=(edges[1] - edges[0]) * 0.9, align="edge", color="#4a78b8")
    ax.set_xlim(edges[0], edges[-1])
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("points (of %s)" % report.fmt_points(max_points))
    ax.set_ylabel("submissions")
    ax.set_title(title, fontsize=10)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def chart(points, max_points, title, name):
    png = histogram_png(points, max_points, title)
    return ('<img data-chart="%s" alt="%s" width="420" height="230" '
            'src="data:image/png;base64,%s">' % (esc(name), esc(title),
                                                 base64.b64encode(png).decode()))


# ---------------------------------------------------------------------------
# Pages

def page_names(reports):
    """{submission name: relative path of its page}; numbered, so any name is safe."""
    return {r["submission"]: "s/%03d.html" % i for i, r in enumerate(reports, 1)}


def lesson_link(lab_dir, from_dir, root=ROOT):
    target = os.path.join(root, "docs", lab_dir + ".md")
    return os.path.relpath(target, from_dir).replace(os.sep, "/")


def _cell(r):
    if r is None:
        return '<td class="none num">-</td>'
    if not r.get("submitted", True):
        return '<td class="none num" title="not submitted">-</td>'
    cls = "full" if r["points"] >= r["max_points"] > 0 else ("zero" if r["points"] == 0
                                                              else "part")
    return '<td class="%s num" title="%s">%s</td>' % (cls, esc(r["status"].replace("_", " ")),
                                                     esc(report.fmt_points(r["points"])))


def gradebook(reports, labs, pages):
    head = "".join('<th title="%s">%d</th>' % (esc(l.title), l.number) for l in labs)
    rows = []
    for rep in reports:
        by = {r["lab"]: r for r in rep["labs"]}
        trouble = ["lab %d %s" % (r["lab"], r["status"].replace("_", " "))
                   for r in rep["labs"] if r["status"] not in ("graded", "not_submitted")]
        rows.append('<tr><td><a href="%s">%s</a></td>%s<td class="num">%s / %s</td><td>%s</td></tr>'
                    % (esc(pages[rep["submission"]]), esc(rep["submission"]),
                       "".join(_cell(by.get(l.number)) for l in labs),
                       esc(report.fmt_points(rep["points"])), esc(report.fmt_points(rep["max_points"])),
                       esc("; ".join(trouble))))
    return ('<table class="gradebook"><thead><tr><th>submission</th>%s<th>total</th>'
            '<th>notes</th></tr></thead><tbody>%s</tbody></table>' % (head, "\n".join(rows)))


def _who(names, pages, limit=12, from_page=False):
    """Links to the pages of `names` (from index.html, or from another page)."""
    href = (lambda n: os.path.basename(pages[n])) if from_page else (lambda n: pages[n])
    links = ['<a href="%s">%s</a>' % (esc(href(n)), esc(n)) for n in names[:limit] if n in pages]
    more = " and %d more" % (len(names) - limit) if len(names) > limit else ""
    return ", ".join(links) + esc(more)


def lab_section(lab, summary, reports, pages):
    points = [r["points"] for rep in reports for r in rep["labs"]
              if r["lab"] == lab.number and r.get("submitted")]
    max_points = max([r["max_points"] for rep in reports for r in rep["labs"]
                      if r["lab"] == lab.number] + [0])
    out = ['<article id="lab-%02d"><h3>Lab %d: %s</h3>' % (lab.number, lab.number,
                                                           esc(lab.title))]
    statuses = ", ".join("%d %s" % (n, s.replace("_", " "))
                         for s, n in sorted(summary["statuses"].items()))
    out.append("<p>%d of %d submissions hold this lab's file; %d have full marks. (%s)</p>"
               % (summary["submitted"], summary["submissions"], summary["full_marks"],
                  esc(statuses)))
    out.append('<div class="labgrid"><div>%s</div><div>' % (
        chart(points, max_points, "Lab %d: points of %d submissions" % (lab.number, len(points)),
              "lab-%02d" % lab.number) if points else "<p>No submission holds this lab.</p>"))
    out.append("<h4>Named mistakes</h4>")
    if summary["mistakes"]:
        out.append("<table><thead><tr><th>mistake (as the tests word it)</th><th>submissions</th>"
                   "<th>who</th></tr></thead><tbody>")
        for m in summary["mistakes"]:
            variants = m.get("wordings", [])
            title = (' title="%s"' % esc(" | ".join(variants))) if len(variants) > 1 else ""
            out.append('<tr><td class="msg"%s>%s%s</td><td class="num">%d</td><td>%s</td></tr>'
                       % (title, esc(m["mistake"]),
                          " <small>(%d wordings)</small>" % len(variants) if title else "",
                          m["count"], _who(m["submissions"], pages)))
        out.append("</tbody></table>")
    else:
        out.append("<p>No failure named a mistake.</p>")
    unnamed = summary["failed_without_a_named_mistake"]
    if unnamed:
        out.append("<p>Failed tests without a named mistake: %d submissions (%s).</p>"
                   % (len(unnamed), _who(unnamed, pages)))
    out.append("</div></div>")
    if summary["tests"]:
        n = max(1, summary["submitted"])
        out.append("<details><summary>Hidden tests: how many submissions pass each "
                   "(hardest first)</summary><table><thead><tr><th>test</th><th>passed</th>"
                   "<th>failed</th><th></th></tr></thead><tbody>")
        for t in sorted(summary["tests"], key=lambda t: (-t["failed"], t["name"])):
            out.append('<tr><td><code>%s</code></td><td class="num">%d</td><td class="num">%d'
                       '</td><td><span class="bar" style="width:%dpx"></span></td></tr>'
                       % (esc(t["name"]), t["passed"], t["failed"], 120 * t["passed"] // n))
        out.append("</tbody></table></details>")
    if summary["hardest"]:
        out.append("<p>Most failed: %s</p>" % "; ".join(
            "<code>%s</code> (%d of %d%s)" % (esc(t["name"]), t["failed"], summary["submitted"],
                                              ", most submissions" if t["majority"] else "")
            for t in summary["hardest"]))
    out.append("</article>")
    return "\n".join(out)


def _excerpt(source, span, limit=40):
    lines = source.decode("utf-8", "replace").split("\n") if source else []
    lo, hi = span
    chosen = lines[lo - 1:min(hi, lo - 1 + limit)]
    text = "\n".join("%4d  %s" % (lo + i, l) for i, l in enumerate(chosen))
    if hi - lo + 1 > limit:
        text += "\n      ... (%d more lines)" % (hi - lo + 1 - limit)
    return "<pre>%s</pre>" % esc(text)


def similarity_section(sim, sources, pages):
    out = ['<p class="note">%s</p>' % esc(sim.get("note", ""))]
    if not sim.get("available"):
        return "\n".join(out)
    s = sim["settings"]
    out.append("<p>Measured per lab with <code>%s</code> (Debian's similarity-tester) on the "
               "learner files, with every line of the lab's stub and header removed. Code that "
               "more than %d submissions share is counted as common, not as copied; a pair is "
               "listed when at least %d%% of each file's remaining code is found in the other "
               "and the shared code is at least %d tokens long (sim's minimum run: %d tokens)."
               "</p>" % (esc(sim["tool"]), s["max_copies"], s["threshold"], s["min_tokens"],
                         s["min_run"]))
    for e in sim.get("errors", []):
        out.append("<p>Not measured: %s</p>" % esc(e))
    pairs = sim["pairs"]
    if not pairs:
        out.append("<p>No pair above the threshold.</p>")
        return "\n".join(out)
    out.append("<table><thead><tr><th>lab</th><th>submission A</th><th>submission B</th>"
               "<th>of A's own code in B</th><th>of B's own code in A</th><th>shared tokens</th>"
               "</tr></thead><tbody>")
    for p in pairs:
        out.append('<tr><td class="num">%d</td><td><a href="%s">%s</a></td><td><a href="%s">%s'
                   '</a></td><td class="num">%d%%</td><td class="num">%d%%</td><td class="num">%d%s'
                   '</td></tr>' % (p["lab"], esc(pages.get(p["a"], "")), esc(p["a"]),
                                   esc(pages.get(p["b"], "")), esc(p["b"]), p["percent_a"],
                                   p["percent_b"], p["tokens"],
                                   " (identical files)" if p["identical"] else ""))
    out.append("</tbody></table>")
    for p in pairs:
        out.append("<details%s><summary>Lab %d: %s and %s, %d shared region(s)</summary>"
                   % (" open" if len(pairs) <= 5 else "", p["lab"], esc(p["a"]), esc(p["b"]),
                      len(p["regions"])))
        out.append('<table class="regions"><thead><tr><th>%s</th><th>%s</th></tr></thead>'
                   '<tbody>' % (esc(p["a"]), esc(p["b"])))
        sa = sources.get(p["a"], {}).get(p["lab"])
        sb = sources.get(p["b"], {}).get(p["lab"])
        for r in p["regions"]:
            out.append("<tr><td>lines %d-%d (%d tokens)%s</td><td>lines %d-%d%s</td></tr>"
                       % (r["a"][0], r["a"][1], r["tokens"], _excerpt(sa, r["a"]),
                          r["b"][0], r["b"][1], _excerpt(sb, r["b"])))
        out.append("</tbody></table></details>")
    return "\n".join(out)


def index_page(roster_name, reports, labs, klass, sources, pages, meta=""):
    summaries = {s["lab"]: s for s in klass["labs"]}
    body = ['<h1>Class report: %s</h1>' % esc(roster_name),
            "<p>%d submissions graded by <code>./lab grade --roster</code>. %s</p>"
            % (len(reports), esc(meta)),
            '<nav><a href="#gradebook">gradebook</a><a href="#labs">labs</a>'
            '<a href="#similarity">similarity</a></nav>',
            '<section id="gradebook"><h2>Gradebook</h2>',
            "<p>Points per lab; a dash: the lab's file was not submitted. Each name opens the "
            "submission's failures.</p>",
            gradebook(reports, labs, pages), "</section>",
            '<section id="labs"><h2>What the class got wrong, lab by lab</h2>']
    for lab in labs:
        if lab.number in summaries:
            body.append(lab_section(lab, summaries[lab.number], reports, pages))
    body.append("</section>")
    body.append('<section id="similarity"><h2>Similar submissions</h2>')
    body.append(similarity_section(klass["similarity"], sources, pages))
    body.append("</section>")
    return page("Class report: %s" % roster_name, "\n".join(body))


def submission_page(rep, labs, klass, pages, page_dir, root=ROOT):
    titles = {l.number: l.title for l in labs}
    body = ['<p><a href="../index.html">class report</a></p>',
            "<h1>%s</h1>" % esc(rep["submission"]),
            "<p>%s / %s points (%s mode).</p>" % (esc(report.fmt_points(rep["points"])),
                                                  esc(report.fmt_points(rep["max_points"])),
                                                  esc(rep.get("mode", "")))]
    similar = [p for p in klass["similarity"].get("pairs", [])
               if rep["submission"] in (p["a"], p["b"])]
    if similar:
        body.append('<p class="note">Similar to: %s (a reason to look, not a verdict).</p>' %
                    ", ".join("%s in lab %d" % (
                        _who([p["b"] if p["a"] == rep["submission"] else p["a"]], pages,
                             from_page=True), p["lab"]) for p in similar))
    missing = [r for r in rep["labs"] if not r.get("submitted", True)]
    if missing:
        body.append("<p>Not in the submission (0 points): %s.</p>" % ", ".join(
            "lab %d" % r["lab"] for r in missing))
    for r in rep["labs"]:
        if not r.get("submitted", True):
            continue
        link = lesson_link(r["dir"], page_dir, root)
        body.append('<h2>Lab %d: %s</h2>' % (r["lab"], esc(titles.get(r["lab"], r["title"]))))
        body.append("<p>%s / %s points, %d of %d tests passed, %s. Lesson: "
                    '<a href="%s">docs/%s.md</a></p>'
                    % (esc(report.fmt_points(r["points"])), esc(report.fmt_points(r["max_points"])), r["passed"],
                       r["total"], esc(r["status"].replace("_", " ")), esc(link), esc(r["dir"])))
        for n in r.get("notes", []) + r.get("warnings", []):
            body.append("<p>note: %s</p>" % esc(n))
        failed = [t for t in r["tests"] if not t["passed"]]
        if r["status"] != "graded":
            body.append('<p class="msg"><code>%s</code></p>' % esc(r["first_failure"]))
            continue
        if not failed:
            continue
        body.append("<table><thead><tr><th>failed test</th><th>named mistake</th>"
                    "<th>message</th></tr></thead><tbody>")
        for t in failed:
            d = feedback.diagnosis(t["message"], t.get("mistake"))
            body.append('<tr><td><code>%s</code></td><td class="diag">%s</td>'
                        '<td class="msg">%s</td></tr>' % (esc(t["name"]), esc(d),
                                                          _message(t["message"])))
        body.append("</tbody></table>")
    return page("%s: class report" % rep["submission"], "\n".join(body))


def _message(text, shown=400):
    """A failure message; a long one folded after its first `shown` characters."""
    if len(text) <= shown:
        return "<code>%s</code>" % esc(text)
    return ("<details><summary><code>%s</code> ...</summary><code>%s</code></details>"
            % (esc(text[:shown]), esc(text[shown:])))


def write(out_dir, roster_name, reports, labs, klass, sources, meta="", root=ROOT):
    """Writes index.html and s/NNN.html under out_dir; returns index.html's path.
    `sources`: {submission name: {lab number: bytes}} (for shared regions)."""
    pages = page_names(reports)
    shutil.rmtree(os.path.join(out_dir, "s"), ignore_errors=True)   # pages of an earlier run
    os.makedirs(os.path.join(out_dir, "s"), exist_ok=True)
    for rep in reports:
        path = os.path.join(out_dir, pages[rep["submission"]])
        with open(path, "w", encoding="utf-8") as f:
            f.write(submission_page(rep, labs, klass, pages, os.path.dirname(path), root))
    index = os.path.join(out_dir, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(index_page(roster_name, reports, labs, klass, sources, pages, meta))
    return index
