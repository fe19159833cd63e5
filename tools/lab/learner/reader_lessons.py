"""The course reader's lessons: a lesson's Markdown as HTML, its sections for
the search, and where each language's lesson lives.

Debian's python3-markdown renders the lessons, python3-pygments colours the
code. Links are ours: a link to another lesson goes to its page, an image to
the site's copy, any other relative link names a file of the repository and
becomes plain text that says so.
"""
import os
import re

from labs import ROOT


class MissingLibrary(RuntimeError):
    pass


def markdown_module():
    """python3-markdown, after checking that python3-pygments is there too."""
    try:
        import markdown  # noqa: F401
        import pygments  # noqa: F401
    except ImportError as e:
        raise MissingLibrary("./lab read needs Debian's python3-markdown and python3-pygments "
                             "(%s); run tools/setup.sh" % e)
    import markdown
    return markdown


def translation_of(lab, lang, root=ROOT):
    """The path of lab's lesson in `lang` (a page code: in docs, the folder
    `lang`, as NN_name.md or NN.md), or None."""
    if lang == "en":
        path = os.path.join(root, lab.lesson_file)
        return path if os.path.isfile(path) else None
    for name in (lab.dir + ".md", lab.nn + ".md"):
        path = os.path.join(root, "docs", lang, name)
        if os.path.isfile(path):
            return path
    return None


def _link_rewriter(markdown, labs, images, base, repo_title):
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
                    el.set("title", repo_title % os.path.normpath(os.path.join(base, path)))

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


def render(text, labs, images, base="docs", repo_title="in the repository: %s"):
    """(HTML, table of contents) of a lesson. base: its folder in the
    repository (relative links are read from there); images: a set that
    receives the names of the images it shows; repo_title: the tooltip of a
    repository path, in the page's language."""
    markdown = markdown_module()
    md = markdown.Markdown(extensions=[
        "tables", "fenced_code", "codehilite", "toc", "sane_lists", "attr_list",
        _link_rewriter(markdown, labs, images, base, repo_title)],
        extension_configs={"codehilite": {"guess_lang": False, "css_class": "hl"},
                           "toc": {"permalink": False}})
    body = md.convert(tag_fences(text))
    return body, md.toc_tokens


def sections(text):
    """[(heading, plain text)] of a lesson, for the search index."""
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


def slug(heading):
    """The anchor python-markdown's toc gives a heading."""
    from markdown.extensions.toc import slugify
    return slugify(heading, "-")
