"""The course reader's lessons: a lesson's Markdown as HTML, its sections for
the search, and where each language's lesson lives.

Debian's python3-markdown renders the lessons, python3-pygments colours the
code. Two extensions are ours: links (a link to another lesson goes to its
page, an image to the site's copy, any other relative link names a file of
the repository and becomes plain text that says so) and formulas (TeX, $...$
inline or $$ ... $$ as a block of its own, kept verbatim in an element of
class "math" that the page's KaTeX draws; never read as Markdown).
"""
import os
import re
import xml.etree.ElementTree as etree

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


# A display formula: $$ alone on a line, the TeX, $$ alone on a line (or all
# on one line). An inline formula: $...$ on one line, with no space just
# inside either dollar (so "costs $5 and $6" is not a formula); the letters
# around it are ASCII ones ("用$x$除以" holds a formula).
DISPLAY_MATH = re.compile(r"^[ \t]*\$\$[ \t]*\n(.+?)\n[ \t]*\$\$[ \t]*$|^[ \t]*\$\$(.+?)\$\$[ \t]*$",
                          re.S | re.M)
INLINE_MATH = r"(?<![\\$A-Za-z0-9_])\$(?![\s$])([^$\n]+?)(?<![\s\\])\$(?![A-Za-z0-9_$])"
_FENCED = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def math_element(tex, display):
    """The element the page's KaTeX renders: the TeX as its text."""
    el = etree.Element("div" if display else "span")
    el.set("class", "math display" if display else "math")
    from markdown.util import AtomicString
    el.text = AtomicString(tex.strip())
    return el


def formulas(text):
    """[(TeX, display, line number)] of a lesson's formulas, outside fenced
    code and code spans: what the page draws, and what ./lab test parses."""
    skip = [m.span() for m in _FENCED.finditer(text)]
    out = []
    for m in DISPLAY_MATH.finditer(text):
        if not any(a <= m.start() < b for a, b in skip):
            out.append((m.group(1) or m.group(2), True, text.count("\n", 0, m.start()) + 1))
            skip.append(m.span())
    start = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        if not any(a <= start < b for a, b in skip):
            plain = _CODE_SPAN.sub(lambda c: " " * len(c.group(0)), line)
            out += [(m.group(1), False, lineno) for m in re.finditer(INLINE_MATH, plain)]
        start += len(line) + 1
    return sorted(out, key=lambda f: f[2])


def _math(markdown):
    class Display(markdown.blockprocessors.BlockProcessor):
        def test(self, parent, block):
            return DISPLAY_MATH.fullmatch(block.strip("\n")) is not None

        def run(self, parent, blocks):
            m = DISPLAY_MATH.fullmatch(blocks.pop(0).strip("\n"))
            parent.append(math_element(m.group(1) or m.group(2), True))

    class Inline(markdown.inlinepatterns.InlineProcessor):
        def handleMatch(self, m, data):
            return math_element(m.group(1), False), m.start(0), m.end(0)

    class Ext(markdown.extensions.Extension):
        def extendMarkdown(self, md):
            # Before paragraphs; inline after code spans (190: a $ in code
            # stays code) and before escapes (180: a TeX backslash stays).
            md.parser.blockprocessors.register(Display(md.parser), "mha_math", 95)
            md.inlinePatterns.register(Inline(INLINE_MATH, md), "mha_math", 185)

    return Ext()


# A fence with no language that holds commands is shell; the others (maths,
# shapes, diagrams) stay plain text.
_OPENING_RE = re.compile(r"^(`{3,})([^`]*)$")
_COMMAND_RE = re.compile(r"^\s*(bazel|\./lab|/usr/bin/python3|python3|git|docker|sudo|apt-get)\b",
                         re.M)


def tag_fences(text):
    """The lesson with each untagged fenced block of commands tagged `sh`
    (pygments colours it as a shell). Fences are paired as Markdown pairs
    them, opening then closing, so a block tagged ```pseudo or ```python
    earlier on the page cannot make a closing fence look like an opening."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPENING_RE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and not re.match(r"^%s`*\s*$" % fence, lines[j]):
            j += 1
        if not info and _COMMAND_RE.search("\n".join(lines[i + 1:j])):
            lines[i] = fence + "sh"
        i = j + 1
    return "\n".join(lines)


def render(text, labs, images, base="docs", repo_title="in the repository: %s"):
    """(HTML, table of contents) of a lesson. base: its folder in the
    repository (relative links are read from there); images: a set that
    receives the names of the images it shows; repo_title: the tooltip of a
    repository path, in the page's language."""
    markdown = markdown_module()
    md = markdown.Markdown(extensions=[
        "tables", "fenced_code", "codehilite", "toc", "sane_lists", "attr_list",
        _math(markdown), _link_rewriter(markdown, labs, images, base, repo_title)],
        extension_configs={"codehilite": {"guess_lang": False, "css_class": "hl"},
                           "toc": {"permalink": False, "slugify": slugify}})
    body = md.convert(tag_fences(text))
    return body, md.toc_tokens


def sections(text):
    """[(heading, plain text)] of a lesson, for the search index. What comes
    before the first heading (a translated page's translation note) is left
    out: it is the same on every page and says nothing of the lesson."""
    out, head, buf = [], None, []
    for line in text.splitlines():
        m = re.match(r"^#{1,4}\s+(.*)", line)
        if m:
            if head is not None and buf:
                out.append((head, " ".join(" ".join(buf).split())))
            head, buf = m.group(1).strip(), []
        else:
            buf.append(line)
    if head is not None and buf:
        out.append((head, " ".join(" ".join(buf).split())))
    return out


# Chinese, Japanese and Korean letters (the reader's search, tools/reader/reader.js, reads the same).
_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def slugify(value, separator):
    """A heading's anchor, the same for the page (toc) and the search index:
    python-markdown's ASCII slug, or, for a heading with Chinese (or Japanese,
    Korean) letters, its Unicode slug, because the ASCII one drops them all
    ("实验 4：因果掩码" would be "4", and "思路" nothing)."""
    from markdown.extensions.toc import slugify as ascii_slug, slugify_unicode
    return (slugify_unicode if _CJK.search(value) else ascii_slug)(value, separator)


def slug(heading):
    """The anchor the page gives a heading."""
    return slugify(heading, "-")
