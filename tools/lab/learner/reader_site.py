"""Building the course reader's site (./lab read; out/site/ by default).

Every page exists in every language of the course (reader_labels.LANGUAGES),
at <page code>/<name>.html, its chrome in that language; a lesson not yet
translated is shown in English under a line that says so. index.html at the
root opens the language the learner chose last, else the browser's preferred
one (tools/reader/reader.js). The pages are jinja2 templates
(tools/reader/templates/, Debian's python3-jinja2); the script and style are
ours (tools/reader/); nothing comes from a network.

    <lang>/index.html        the contents: each lab, its last run, its quiz's progress
    <lang>/NN_name.html      a lab: lesson, quiz, pictures, last run, previous/next
    <lang>/heads.html        the head viewer (the learner's programs' view.json)
    <lang>/playground.html   lab 15's model, live (learner/playground.py, served by
                             reader_server.py)
    assets/                  style, scripts, the search index, pygments' colours
    images/, yours/          the lessons' pictures, the learner's
"""
import os
import shutil

from labs import ROOT, load_labs
from learner import i18n
from learner.reader_labels import LANGUAGES, labels, speaking, state_label
from learner.reader_lessons import MissingLibrary, markdown_module, render, sections, slug, \
    translation_of
from learner import reader_panels as panels

ASSETS = os.path.join("tools", "reader")
TEMPLATES = os.path.join(ASSETS, "templates")
SCRIPTS = ("reader.css", "dom.js", "reader.js", "heads.js", "playground.js")
# The labs whose page links to the head viewer (their programs write view.json).
HEADS_LABS = (7, 10, 13, 15)
# The lab whose page links to the playground (learner/playground.py).
PLAYGROUND_LAB = "15_mini_gpt"
# KaTeX draws the formulas: Debian's libjs-katex (tools/setup.sh), copied into
# the site (its script, style and fonts), so nothing comes from a network.
KATEX = "/usr/share/javascript/katex"
KATEX_FILES = ("katex.min.js", "katex.min.css")
HEADS_COMMANDS = ["bazel run //labs/07_head_analysis:show_heads -- --trained",
                  "bazel run //labs/10_attention_backward:ablate_heads",
                  "bazel run //labs/13_induction_heads:grow_induction_heads",
                  "bazel run //labs/15_mini_gpt:train_mini_gpt"]


def jinja_environment(root=ROOT):
    """The templates' environment: HTML escaped unless marked safe; code(text)
    is text as <code>, escaped."""
    try:
        import jinja2
    except ImportError as e:
        raise MissingLibrary("./lab read needs Debian's python3-jinja2 (%s); run tools/setup.sh"
                             % e)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(root, TEMPLATES)),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.globals["code"] = lambda text: jinja2.utils.markupsafe.Markup(
        "<code>{}</code>").format(text)
    return env


class Site:
    """The site being written: its folder, templates and what every page shares."""

    def __init__(self, path, root, labs, katex=False):
        self.path, self.root, self.labs, self.katex = path, root, labs, katex
        self.env = jinja_environment(root)
        self.languages = [{"page": page, "name": name} for _c, page, name in LANGUAGES]

    def write(self, rel, template, lang, page_name, title, **values):
        t = labels()
        html = self.env.get_template(template).render(
            lang=lang, up="../" * rel.count("/"), page_name=page_name, title=title, t=t,
            languages=self.languages, script_labels=t, katex=self.katex, **values)
        path = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)


def _copy_assets(site, root):
    from pygments.formatters import HtmlFormatter
    assets = os.path.join(site, "assets")
    for name in SCRIPTS:
        shutil.copyfile(os.path.join(root, ASSETS, name), os.path.join(assets, name))
    with open(os.path.join(assets, "pygments.css"), "w") as f:
        f.write(HtmlFormatter(style="friendly").get_style_defs(".hl"))


def copy_katex(site, katex=KATEX):
    """KaTeX's script, style and fonts into site/assets/katex/; False (and
    nothing copied) where libjs-katex is not installed."""
    if not all(os.path.isfile(os.path.join(katex, f)) for f in KATEX_FILES):
        return False
    dest = os.path.join(site, "assets", "katex")
    os.makedirs(dest, exist_ok=True)
    for f in KATEX_FILES:
        shutil.copyfile(os.path.join(katex, f), os.path.join(dest, f))
    # The fonts are links into fonts-katex: copies of their files.
    shutil.copytree(os.path.join(katex, "fonts"), os.path.join(dest, "fonts"), symlinks=False)
    return True


def _lesson_sources(lab, translations, root):
    """{page code: (path of the lesson's Markdown, whether it is the English
    stand-in of a missing translation)}."""
    english = translation_of(lab, "en", root)
    out = {}
    for _c, page, _n in LANGUAGES:
        if page in translations:   # that folder only, not docs' own (a test's fixtures)
            path = next((os.path.join(translations[page], n) for n in (lab.dir + ".md",
                                                                        lab.nn + ".md")
                         if os.path.isfile(os.path.join(translations[page], n))), None)
        else:
            path = translation_of(lab, page, root)
        if path:
            out[page] = (path, False)
        elif english:
            out[page] = (english, True)
    return out


def _index_lesson(index, lab, page, parts, lab_title):
    """The search index's entries of one lesson page: its first part (under the
    lesson's own title) points at the page and is named by the lab's title;
    every later section by the lab's title and its heading, once each."""
    for k, (heading, words) in enumerate(parts):
        index.append({"lab": lab.number, "lang": page,
                      "url": "%s/%s.html%s" % (page, lab.dir, "#" + slug(heading) if k else ""),
                      "title": lab_title if k == 0 else "%s \u00b7 %s" % (lab_title, heading),
                      "text": words})


def _lesson_pages(site, runs, translations, index, all_images):
    labs, root = site.labs, site.root
    for i, lab in enumerate(labs):
        pictures_copied = False
        for page, (path, in_english) in _lesson_sources(lab, translations, root).items():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with speaking(page):
                t = labels()

                def lab_title(l):
                    return t["lab_title"].format(n=l.number, title=i18n.title(l))
                images = set()
                rel = os.path.relpath(os.path.dirname(path), root)
                body, _toc = render(text, labs, images,
                                    "docs/" + page if rel.startswith("..") else rel,
                                    repo_title=t["repo_path"].replace("{path}", "%s"))
                all_images |= images
                if not in_english:
                    _index_lesson(index, lab, page, sections(text), lab_title(lab))
                state, lines, nxt = panels.status_of(lab, labs, runs, root)
                pics = panels.pictures(lab, images, root)
                if pics and not pictures_copied:
                    _copy_pictures(pics, site.path, root)
                    pictures_copied = True
                near = {k: {"dir": l.dir, "label": lab_title(l)}
                        for k, l in (("prev", labs[i - 1] if i > 0 else None),
                                     ("next", labs[i + 1] if i + 1 < len(labs) else None)) if l}
                side = [{"href": "heads.html", "text": t["explore_heads"]}] \
                    if lab.number in HEADS_LABS else []
                if lab.dir == PLAYGROUND_LAB:
                    side.append({"href": "playground.html", "text": t["playground_link"]})
                site.write("%s/%s.html" % (page, lab.dir), "lesson.html", page,
                           lab.dir + ".html", lab_title(lab),
                           body=body, in_english=in_english,
                           quiz=panels.quiz_payload(lab, page, root), pictures=pics,
                           status={"state": state, "label": state_label(state),
                                   "lines": lines, "next": nxt},
                           side_links=side, prev=near.get("prev"), next=near.get("next"))


def _copy_pictures(pics, site, root):
    if not pics["yours"]:
        return
    os.makedirs(os.path.join(site, "yours"), exist_ok=True)
    for p in pics["yours"]:
        shutil.copyfile(os.path.join(root, p["rel"]), os.path.join(site, "yours", p["name"]))


def _index_pages(site, runs):
    for _c, page, _n in LANGUAGES:
        with speaking(page):
            t = labels()
            rows = []
            for lab in site.labs:
                state = panels.status_of(lab, site.labs, runs, site.root)[0]
                rows.append({"number": lab.number, "dir": lab.dir, "title": i18n.title(lab),
                             "state": state, "label": state_label(state)})
            links = [{"href": "heads.html", "text": t["heads_link"]}]
            if any(lab.dir == PLAYGROUND_LAB for lab in site.labs):
                links.append({"href": "playground.html", "text": t["playground_link"]})
            site.write("%s/index.html" % page, "index.html", page, "index.html", t["course"],
                       rows=rows, links=links)


def _heads_pages(site, views):
    from jinja2.utils import markupsafe
    commands = markupsafe.Markup(", ").join(
        markupsafe.Markup("<code>{}</code>").format(c) for c in HEADS_COMMANDS)
    by_number = {lab.number: lab for lab in site.labs}
    for _c, page, _n in LANGUAGES:
        with speaking(page):
            t = labels()
            crumbs = [{"href": "%s.html" % by_number[n].dir, "text": t["lab_n"].format(n=n)}
                      for n in HEADS_LABS if n in by_number]
            site.write("%s/heads.html" % page, "heads.html", page, "heads.html",
                       t["heads_title"], views=views, crumbs=crumbs, commands=commands)


def _playground_pages(site):
    lab = next((l for l in site.labs if l.dir == PLAYGROUND_LAB), None)
    for _c, page, _n in LANGUAGES:
        with speaking(page):
            t = labels()
            crumbs = ([{"href": "%s.html" % lab.dir, "text": t["lab_n"].format(n=lab.number)}]
                      if lab else []) + [{"href": "heads.html", "text": t["heads_title"]}]
            site.write("%s/playground.html" % page, "playground.html", page, "playground.html",
                       t["pg_title"], crumbs=crumbs)


def _root_page(site):
    names = []
    for _c, page, name in LANGUAGES:
        with speaking(page):
            names.append({"page": page, "name": name, "title": labels()["course_long"]})
    with speaking("en"):
        site.write("index.html", "root.html", "en", "index.html", labels()["course"],
                   choices=names)


def build(site, root=ROOT, translations=None, extra_views=None, katex=KATEX):
    """Writes the site into `site`. translations: {page code: directory} to
    read lessons from instead of docs' own (a test's fixtures); extra_views:
    more view.json files for the head viewer; katex: where libjs-katex is.
    Returns (the number of pages, whether the formulas are drawn: False shows
    them as TeX, where KaTeX is missing)."""
    import glob
    import json
    markdown_module()   # MissingLibrary, named, before anything is written
    labs = load_labs(root)
    if os.path.isdir(site):
        shutil.rmtree(site)
    os.makedirs(os.path.join(site, "assets"))
    os.makedirs(os.path.join(site, "images"))
    _copy_assets(site, root)
    s = Site(site, root, labs, copy_katex(site, katex))
    runs = panels.last_run(root)
    index, all_images = [], set()
    _lesson_pages(s, runs, translations or {}, index, all_images)
    for name in all_images | {os.path.basename(p) for p in
                              glob.glob(os.path.join(root, "docs", "images", "*.png"))}:
        src = os.path.join(root, "docs", "images", name)
        if os.path.isfile(src):
            shutil.copyfile(src, os.path.join(site, "images", name))
    with open(os.path.join(site, "assets", "search_index.js"), "w", encoding="utf-8") as f:
        f.write("window.SEARCH_INDEX = %s;\n" % json.dumps(index, ensure_ascii=False))
    _index_pages(s, runs)
    _heads_pages(s, panels.views(root, extra_views))
    _playground_pages(s)
    _root_page(s)
    return len(labs) * len(LANGUAGES), s.katex
