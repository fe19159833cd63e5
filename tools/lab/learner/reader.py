"""./lab read: the course as a static site in out/site/, served on 127.0.0.1.

The lessons (docs/NN_name.md, and their translations where they exist: in
docs, the folder of each language of po/languages.json, as NN_name.md or NN.md) are rendered by Debian's python3-markdown
with python3-pygments for the code; the page's script and style are ours
(tools/reader/), nothing comes from a network. Each lab's page has the lesson,
previous/next, the language switch, a search over every lesson, the lab's
state at the learner's last ./lab status / watch / grade (.cache/last_run.json)
with the command to run next, the learner's own pictures (out/ of the lab's
programs) beside the lesson's, and the lab's quiz (labs/NN_name/quiz.json).
heads.html draws the heads the learner's programs wrote as view.json (lab 7's
show_heads, lab 10's ablate_heads, lab 13's grow_induction_heads).
"""
import datetime
import functools
import glob
import html
import http.server
import json
import os
import re
import shutil
import signal
import socket
import sys
import threading
import xml.etree.ElementTree as etree

import languages
from labs import ROOT, load_labs
from learner import files, quiz
from learner.console import FAILED, OK, USAGE, err

# (page folder, what the switch shows): English, then po/languages.json's.
LANGS = [("en", "English")] + [(lang.pages, lang.name) for lang in languages.load()]
ASSETS = os.path.join("tools", "reader")
# Where each lab program writes (mha::OutputFolder): out/<program>, except
# show_heads, whose folder is out/heads.
_FOLDER_OF = {"show_heads": "heads"}
# The head viewer's data, in the order the viewer offers them.
VIEW_FILES = ["out/heads/trained_view.json", "out/heads/view.json",
              "out/heads/induction_view.json", "out/ablate_heads/view.json",
              "out/grow_induction_heads/view.json"]


class MissingLibrary(RuntimeError):
    pass


def _markdown():
    try:
        import markdown  # noqa: F401
        import pygments  # noqa: F401
    except ImportError as e:
        raise MissingLibrary("./lab read needs Debian's python3-markdown and python3-pygments "
                             "(%s); run tools/setup.sh" % e)
    import markdown
    return markdown


def translation_of(lab, lang, root=ROOT):
    """The path of lab's lesson in `lang` (in docs, the folder `lang`: NN_name.md or NN.md),
    or None."""
    if lang == "en":
        path = os.path.join(root, lab.lesson_file)
        return path if os.path.isfile(path) else None
    for name in (lab.dir + ".md", lab.nn + ".md"):
        path = os.path.join(root, "docs", lang, name)
        if os.path.isfile(path):
            return path
    return None


def _link_rewriter(markdown, labs, images, base):
    """A treeprocessor: links to lessons go to their pages; images to the site's
    copy; any other relative link names a file of the repository and becomes
    plain text that says so (the site has only the lessons)."""
    lesson = {lab.dir + ".md": lab for lab in labs}

    class Rewrite(markdown.treeprocessors.Treeprocessor):
        def run(self, root):
            for el in root.iter():
                if el.tag == "img":
                    src = el.get("src", "")
                    if not re.match(r"^[a-z]+:", src):
                        name = os.path.basename(src)
                        images.add(name)
                        el.set("src", "../images/" + name)
                        el.set("loading", "lazy")
                elif el.tag == "a":
                    href = el.get("href", "")
                    if re.match(r"^(https?:|mailto:|#)", href):
                        continue
                    path, _, anchor = href.partition("#")
                    name = os.path.basename(path)
                    if name in lesson:
                        el.set("href", name[:-3] + ".html" + ("#" + anchor if anchor else ""))
                        continue
                    el.tag = "span"
                    el.attrib.pop("href", None)
                    el.set("class", "repo-path")
                    el.set("title", "in the repository: " + os.path.normpath(
                        os.path.join(base, path)))

    class Ext(markdown.extensions.Extension):
        def extendMarkdown(self, md):
            md.treeprocessors.register(Rewrite(md), "mha_links", 1)

    return Ext()


# A fence with no language that holds commands is shell; the others (maths,
# shapes, diagrams) stay plain text.
_FENCE_RE = re.compile(r"^```\n(.*?)^```", re.S | re.M)
_COMMAND_RE = re.compile(r"^\s*(bazel|\./lab|/usr/bin/python3|python3|git|docker|sudo|apt-get)\b",
                         re.M)


def tag_fences(text):
    return _FENCE_RE.sub(lambda m: ("```sh\n" if _COMMAND_RE.search(m.group(1)) else "```\n") +
                         m.group(1) + "```", text)


def render(text, labs, images, base="docs"):
    """(HTML, table of contents) of a lesson; base: its folder in the
    repository (relative links are read from there)."""
    markdown = _markdown()
    md = markdown.Markdown(extensions=[
        "tables", "fenced_code", "codehilite", "toc", "sane_lists", "attr_list",
        _link_rewriter(markdown, labs, images, base)],
        extension_configs={"codehilite": {"guess_lang": False, "css_class": "hl"},
                           "toc": {"permalink": False}})
    body = md.convert(tag_fences(text))
    return body, md.toc_tokens


def sections(text):
    """[(heading, anchor-less plain text)] of a lesson, for the search index."""
    out, head, buf = [], "", []
    for line in text.splitlines():
        m = re.match(r"^#{1,4}\s+(.*)", line)
        if m:
            if buf:
                out.append((head, " ".join(" ".join(buf).split())))
            head, buf = m.group(1).strip(), []
        else:
            buf.append(line)
    if buf:
        out.append((head, " ".join(" ".join(buf).split())))
    return out


def _slug(markdown, heading):
    from markdown.extensions.toc import slugify
    return slugify(heading, "-")


def last_run(root=ROOT):
    data = files.load_json(os.path.join(root, ".cache", "last_run.json"))
    labs = data.get("labs")
    return labs if isinstance(labs, dict) else {}


def status_of(lab, labs, runs):
    """(state, detail lines, the command to run next) from the last run."""
    r = runs.get(str(lab.number))
    if not isinstance(r, dict) or r.get("state") not in ("not started", "failing", "passing"):
        return ("unknown", ["no run of ./lab status, watch or grade recorded yet"],
                "./lab status")
    when = ""
    if isinstance(r.get("time"), (int, float)):
        when = datetime.datetime.fromtimestamp(r["time"]).strftime("%Y-%m-%d %H:%M")
    lines = ["at your last run (%s)" % when] if when else []
    if r["state"] == "not started":
        return ("not started", lines + ["%s is still the stub" % lab.learner_file],
                "./lab watch %d   (then edit %s)" % (lab.number, lab.learner_file))
    if r["state"] == "failing":
        if r.get("total"):
            lines.append("%d/%d public tests pass" % (r.get("passed", 0), r["total"]))
        if r.get("detail"):
            lines.append("first failure: %s" % r["detail"])
        lines += [n for n in r.get("notes", []) + r.get("warnings", []) if isinstance(n, str)]
        lines.append("stuck? ./lab hint %d, and the lesson's Classic mistakes" % lab.number)
        return ("failing", lines, "./lab watch %d" % lab.number)
    later = [l for l in labs if l.number > lab.number and
             (runs.get(str(l.number)) or {}).get("state") != "passing"]
    lines += [w for w in r.get("warnings", []) if isinstance(w, str)]
    if later:
        return ("passing", lines, "./lab watch %d   (next: lab %d, %s)"
                % (later[0].number, later[0].number, later[0].title))
    return ("passing", lines, "./lab grade")


def program_folders(lab, root=ROOT):
    """The out/ folders of the lab's programs (lab_program in its BUILD)."""
    text = files.read_text(os.path.join(root, "labs", lab.dir, "BUILD")) or ""
    names = re.findall(r'lab_program\(\s*name\s*=\s*"(\w+)"', text)
    return [_FOLDER_OF.get(n, n) for n in names]


def learner_pictures(lab, root=ROOT):
    """[(path relative to root, modification time)] of the PNGs the lab's programs wrote."""
    out = []
    for folder in program_folders(lab, root):
        for p in sorted(glob.glob(os.path.join(root, "out", folder, "*.png"))):
            out.append((os.path.relpath(p, root), os.path.getmtime(p)))
    return out


def _esc(s):
    return html.escape(str(s), quote=True)


def _page(title, body, lang="en", depth=1, extra_head=""):
    up = "../" * depth
    return ("<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>%s</title><link rel=\"icon\" href=\"data:,\">"
            "<link rel=\"stylesheet\" href=\"%sassets/reader.css\">"
            "<link rel=\"stylesheet\" href=\"%sassets/pygments.css\">%s</head>\n"
            "<body data-root=\"%s\">%s\n<script src=\"%sassets/search_index.js\"></script>"
            "<script src=\"%sassets/reader.js\"></script></body></html>\n"
            % (lang, _esc(title), up, up, extra_head, up, body, up, up))


def _header(labs, lab, lang, langs_of, up):
    links = []
    for code, name in LANGS:
        if code in langs_of:
            cls = ' class="current"' if code == lang else ""
            links.append('<a data-lang="%s" href="%s%s/%s.html"%s>%s</a>'
                         % (code, up, code, lab.dir, cls, name) if lab else
                         '<a data-lang="%s" href="%sindex.html">%s</a>' % (code, up, name))
        else:
            links.append('<span class="missing" title="no translation of this lesson yet">%s'
                         '</span>' % name)
    return ('<header><a class="home" href="%sindex.html">Multi-head attention</a>'
            '<nav class="langs" aria-label="language">%s</nav>'
            '<form class="search" role="search" onsubmit="return false">'
            '<input id="search" type="search" placeholder="Search every lesson" '
            'autocomplete="off" aria-label="search"><div id="hits"></div></form></header>'
            % (up, " ".join(links)))


def _status_html(lab, labs, runs):
    state, lines, nxt = status_of(lab, labs, runs)
    return ('<section id="status" class="status %s"><h2>Your last run: %s</h2>%s'
            '<p>Next: <code>%s</code></p></section>'
            % (state.replace(" ", "-"), _esc(state),
               "".join("<p>%s</p>" % _esc(l) for l in lines), _esc(nxt)))


def _pictures_html(lab, ref_images, root, site):
    mine = learner_pictures(lab, root)
    if not mine and not ref_images:
        return ""
    os.makedirs(os.path.join(site, "yours"), exist_ok=True)
    cells = []
    for rel, mtime in mine:
        name = rel.replace("/", "__")
        shutil.copyfile(os.path.join(root, rel), os.path.join(site, "yours", name))
        cells.append('<figure><img src="../yours/%s" alt="%s"><figcaption>'
                     '<code>%s</code>, made %s</figcaption></figure>'
                     % (_esc(name), _esc(rel), _esc(rel), datetime.datetime.fromtimestamp(
                         mtime).strftime("%Y-%m-%d %H:%M")))
    refs = "".join('<figure><img src="../images/%s" alt="%s"><figcaption>'
                   'the course: <code>docs/images/%s</code></figcaption></figure>'
                   % (_esc(n), _esc(n), _esc(n)) for n in sorted(ref_images))
    folders = ", ".join("out/%s/" % f for f in program_folders(lab, root))
    if not cells:
        yours = ("<p>None yet: the lab's programs write theirs in %s.</p>" % _esc(folders)
                 if folders else "<p>This lab has no program that draws.</p>")
    else:
        yours = "".join(cells)
    return ('<section id="pictures" class="pictures"><h2>Your pictures and the course\'s</h2>'
            '<div class="side"><div><h3>Yours</h3>%s</div><div><h3>The lesson\'s</h3>%s</div>'
            '</div></section>' % (yours, refs or "<p>The lesson has none.</p>"))


def _quiz_html(lab, lang, root):
    data = quiz.load(lab, root)
    if data is None or quiz.problems_of(data, "quiz"):
        return ""
    # The page's language: its questions, options, explanations and the quiz's
    # own words from the quiz catalogue (po/quiz/), English where it has none.
    data = quiz.translated(data, lang, root)
    words = quiz.labels(lang, root)
    payload = json.dumps({"key": lab.dir, "questions": data["questions"], "labels": words},
                         ensure_ascii=False)
    return ('<section id="quiz" class="quiz"><h2>%s</h2><p class="progress"></p>'
            '<div class="questions"></div>'
            '<script type="application/json" id="quiz-data">%s</script></section>'
            % (_esc(words["title"]), payload.replace("</", "<\\/")))


def _views(root, extra_views):
    """[(id, label, data)] of the head viewer's files that exist."""
    out = []
    for rel in VIEW_FILES + list(extra_views or []):
        path = rel if os.path.isabs(rel) else os.path.join(root, rel)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("kind") != "heads_view":
            continue
        vid = re.sub(r"[^a-z0-9]+", "-", os.path.relpath(path, root).lower()).strip("-")
        if os.path.isabs(rel):
            vid = re.sub(r"[^a-z0-9]+", "-", os.path.basename(rel).lower()).strip("-")
        label = "%s: %s" % (data.get("program", "?"), os.path.relpath(path, root)
                            if not os.path.isabs(rel) else os.path.basename(rel))
        out.append((vid, label, data, os.path.getmtime(path)))
    _add_ablation([v[2] for v in out])
    return out


def _add_ablation(views):
    """ablate_heads silences the heads of the model show_heads --trained draws,
    on the same sentence: its loss increases join that view's heads."""
    losses = [v for v in views if v.get("program") == "ablate_heads"]
    for v in views:
        if v.get("program") != "show_heads" or not losses:
            continue
        a = losses[0]
        try:
            ours, theirs = v["layers"][0]["heads"], a["layers"][0]["heads"]
            if v["tokens"] != a["tokens"] or len(ours) != len(theirs):
                continue
            for h, t in zip(ours, theirs):
                if isinstance(t.get("loss_increase"), (int, float)):
                    h["loss_increase"] = t["loss_increase"]
        except (KeyError, IndexError, TypeError):
            continue


def _heads_page(labs, views, site):
    items = []
    for vid, label, data, mtime in views:
        items.append({"id": vid, "label": label, "made": datetime.datetime.fromtimestamp(
            mtime).strftime("%Y-%m-%d %H:%M"), "data": data})
    payload = json.dumps(items).replace("</", "<\\/")
    body = ('<header><a class="home" href="../index.html">Multi-head attention</a>'
            '<nav class="crumbs"><a href="../en/07_head_analysis.html">lab 7</a> '
            '<a href="../en/10_attention_backward.html">lab 10</a> '
            '<a href="../en/13_induction_heads.html">lab 13</a></nav></header>'
            '<main class="viewer"><h1>Your heads</h1>'
            '<p class="lead">What your own programs wrote: pick a run, a layer and a head; hover a '
            'token (a query) to see where it attends.</p>'
            '<div id="viewer"></div>'
            '<p id="no-views" hidden>No data yet. Run, with your labs passing: <code>bazel run '
            '//labs/07_head_analysis:show_heads -- --trained</code>, <code>bazel run -c opt '
            '//labs/10_attention_backward:ablate_heads</code> or <code>bazel run -c opt '
            '//labs/13_induction_heads:grow_induction_heads</code>, then <code>./lab read</code> '
            'again.</p>'
            '<script type="application/json" id="views-data">%s</script></main>'
            '<script src="../assets/heads.js"></script>' % payload)
    os.makedirs(os.path.join(site, "heads"), exist_ok=True)
    with open(os.path.join(site, "heads", "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<title>Your heads</title><link rel=\"icon\" href=\"data:,\">"
                "<link rel=\"stylesheet\" href=\"../assets/reader.css\"></head><body>%s"
                "</body></html>\n" % body)


def build(site, root=ROOT, translations=None, extra_views=None):
    """Writes the site into `site`. translations: {lang: directory} to read
    lessons from instead of docs' own (a test's fixtures); extra_views: more
    view.json files for the head viewer. Returns the number of pages."""
    _markdown()   # MissingLibrary, named, before anything is written
    from pygments.formatters import HtmlFormatter
    labs = load_labs(root)
    translations = translations or {}
    if os.path.isdir(site):
        shutil.rmtree(site)
    os.makedirs(os.path.join(site, "assets"))
    os.makedirs(os.path.join(site, "images"))
    for name in ("reader.css", "reader.js", "heads.js"):
        shutil.copyfile(os.path.join(root, ASSETS, name), os.path.join(site, "assets", name))
    with open(os.path.join(site, "assets", "pygments.css"), "w") as f:
        f.write(HtmlFormatter(style="friendly").get_style_defs(".hl"))

    def source(lab, lang):
        if lang in translations:   # that folder only, not docs' own
            for name in (lab.dir + ".md", lab.nn + ".md"):
                p = os.path.join(translations[lang], name)
                if os.path.isfile(p):
                    return p
            return None
        return translation_of(lab, lang, root)

    runs = last_run(root)
    index, pages, all_images = [], 0, set()
    for i, lab in enumerate(labs):
        langs_of = {code: source(lab, code) for code, _ in LANGS if source(lab, code)}
        for lang, path in langs_of.items():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            images = set()
            rel = os.path.relpath(os.path.dirname(path), root)
            body, toc = render(text, labs, images, "docs/" + lang if rel.startswith("..")
                               else rel)
            all_images |= images
            from markdown.extensions.toc import slugify
            for heading, words in sections(text):
                index.append({"lab": lab.number, "lang": lang,
                              "url": "%s/%s.html#%s" % (lang, lab.dir, slugify(heading, "-"))
                              if heading else "%s/%s.html" % (lang, lab.dir),
                              "title": "lab %d: %s" % (lab.number, heading or lab.title),
                              "text": words})
            nav = ['<nav class="prevnext">']
            if i > 0:
                nav.append('<a rel="prev" href="%s.html">&larr; lab %d: %s</a>'
                           % (labs[i - 1].dir, labs[i - 1].number, _esc(labs[i - 1].title)))
            nav.append('<a href="../index.html">all labs</a>')
            if i + 1 < len(labs):
                nav.append('<a rel="next" href="%s.html">lab %d: %s &rarr;</a>'
                           % (labs[i + 1].dir, labs[i + 1].number, _esc(labs[i + 1].title)))
            nav.append("</nav>")
            nav = "".join(nav)
            side = _status_html(lab, labs, runs)
            if lab.number in (7, 10, 13):
                side += ('<p class="heads-link"><a href="../heads/index.html">Explore your own '
                         'heads &rarr;</a></p>')
            main = ('%s<div class="layout"><main class="lesson">%s%s%s</main>'
                    '<aside>%s</aside></div>%s'
                    % (nav, "" if lang == "en" else
                       '<p class="translated">%s</p>' % _esc(
                           "Traducción de la lección en inglés." if lang == "es" else
                           "Tradução da lição em inglês." if lang == "pt-BR" else ""),
                       body, _quiz_html(lab, lang, root) +
                       _pictures_html(lab, images, root, site), side, nav))
            os.makedirs(os.path.join(site, lang), exist_ok=True)
            with open(os.path.join(site, lang, lab.dir + ".html"), "w", encoding="utf-8") as f:
                f.write(_page("Lab %d: %s" % (lab.number, lab.title),
                              _header(labs, lab, lang, langs_of, "../") + main, lang))
            pages += 1
    for name in all_images | {os.path.basename(p) for p in
                              glob.glob(os.path.join(root, "docs", "images", "*.png"))}:
        src = os.path.join(root, "docs", "images", name)
        if os.path.isfile(src):
            shutil.copyfile(src, os.path.join(site, "images", name))
    with open(os.path.join(site, "assets", "search_index.js"), "w", encoding="utf-8") as f:
        f.write("window.SEARCH_INDEX = %s;\n" % json.dumps(index, ensure_ascii=False))
    rows = []
    for lab in labs:
        state, _, _ = status_of(lab, labs, runs)
        rows.append('<tr><td>%d</td><td><a href="en/%s.html">%s</a></td><td class="st %s">%s'
                    '</td><td class="qp" data-key="%s"></td></tr>'
                    % (lab.number, lab.dir, _esc(lab.title), state.replace(" ", "-"),
                       _esc(state), lab.dir))
    body = ('<header><a class="home" href="index.html">Multi-head attention</a>'
            '<form class="search" role="search" onsubmit="return false">'
            '<input id="search" type="search" placeholder="Search every lesson" '
            'autocomplete="off" aria-label="search"><div id="hits"></div></form></header>'
            '<main class="index"><h1>Multi-head attention, one lab at a time</h1>'
            '<table><thead><tr><th>lab</th><th>lesson</th><th>your last run</th>'
            '<th>quiz</th></tr></thead><tbody>%s</tbody></table>'
            '<p><a href="heads/index.html">Explore the heads your programs wrote &rarr;</a></p>'
            '</main>' % "".join(rows))
    with open(os.path.join(site, "index.html"), "w", encoding="utf-8") as f:
        f.write(_page("Multi-head attention", body, depth=0))
    _heads_page(labs, _views(root, extra_views), site)
    return pages


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(site, port=0):
    """An HTTP server of `site` on 127.0.0.1:port (0: a free one), started in a
    thread; returns the server (server.server_address[1] is the port)."""
    handler = functools.partial(_Handler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def cmd_read(args):
    site = os.path.join(ROOT, "out", "site")
    if args.port is not None and not 0 < args.port < 65536:
        err("lab read: --port %d is not a port (1 to 65535)" % args.port)
        return USAGE
    try:
        pages = build(site)
    except MissingLibrary as e:
        err("lab read: %s" % e)
        return FAILED
    print("built %d pages into %s" % (pages, os.path.relpath(site, os.getcwd())), flush=True)
    if args.build_only:
        return OK
    try:
        server = serve(site, args.port or 0)
    except OSError as e:
        err("lab read: cannot serve on 127.0.0.1:%s: %s (choose another with --port N)"
            % (args.port, e.strerror or e))
        return FAILED
    print("reading at http://127.0.0.1:%d/  (Ctrl-C stops)" % server.server_address[1],
          flush=True)
    # Ctrl-C stops it even where the shell started it with SIGINT ignored (in
    # the background), and so does SIGTERM.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print()
    finally:
        server.shutdown()
    return OK
