"""The course's languages besides English: the registry po/languages.json.

One line per language, read by everything that names a language: ./lab
translate (po4a's configuration, the catalogues, the pages), the learner's
./lab (LANG and --lang, the hints and pages it names), the kit (its compiled
catalogues and READMEs) and the course reader (its language switch); it is
plain JSON so that code in any language can read it. Adding a language is
one line there plus its catalogues (the course authors' guide,
"Translations").

Each line: po, the gettext code of its catalogues (po/<po>.po); pages, the
folder of its pages (docs/<pages>/, hints.<pages>.txt, README.<pages>.md: a
BCP 47 tag, also the HTML lang of its pages); name, what the language switch
shows; english, its English name; env, the prefixes of a LANG value or of
--lang that select it; locale, an example LANG.
"""
import collections
import functools
import json
import os

from labs import ROOT

REGISTRY = os.path.join("po", "languages.json")

Language = collections.namedtuple("Language", "po pages name english env locale")
_FIELDS = Language._fields


class RegistryError(ValueError):
    pass


def _ascii_lower(value):
    """Lower case for ASCII letters only: the same under every locale (a
    Turkish LANG upper-cases "i" to "İ" and lower-cases "I" to "ı" in the
    tools that follow the locale; identifiers and codes are ASCII)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in value)


def parse(text, where=REGISTRY):
    """[Language] of a registry's text; RegistryError names what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise RegistryError("%s is not JSON: %s" % (where, e))
    entries = data.get("languages") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise RegistryError('%s: expected {"languages": [...]}' % where)
    out, seen = [], set()
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or sorted(e) != sorted(_FIELDS):
            raise RegistryError("%s: language %d must have exactly the fields %s, not %s"
                                % (where, i + 1, ", ".join(_FIELDS),
                                   ", ".join(sorted(e)) if isinstance(e, dict) else repr(e)))
        lang = Language(**e)
        if not (isinstance(lang.env, list) and lang.env and
                all(isinstance(p, str) and p == _ascii_lower(p) and p for p in lang.env)):
            raise RegistryError("%s: %s's env must be a list of lower-case prefixes, not %r"
                                % (where, lang.po, lang.env))
        for key in (lang.po, lang.pages):
            if key in seen or not key or "/" in key or key == "en":
                raise RegistryError("%s: %r is used twice, empty, English or a path"
                                    % (where, key))
        seen |= {lang.po, lang.pages}
        out.append(lang)
    return out


@functools.lru_cache(maxsize=None)
def _load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return tuple(parse(f.read(), path))
    except OSError as e:
        raise RegistryError("%s cannot be read (%s): it lists the course's languages"
                            % (path, e.strerror))


def load(root=ROOT):
    """The languages of the registry under root (else of this checkout's, for
    a folder that holds only some of the course's files), in its order."""
    path = os.path.join(root, REGISTRY)
    return list(_load(path if os.path.isfile(path) else os.path.join(ROOT, REGISTRY)))


def codes(root=ROOT):
    """[po code] in the registry's order: es, pt_BR, ..."""
    return [lang.po for lang in load(root)]


def page_dirs(root=ROOT):
    """{po code: pages folder}: es -> es, pt_BR -> pt-BR, ..."""
    return collections.OrderedDict((lang.po, lang.pages) for lang in load(root))


def by_po(code, root=ROOT):
    for lang in load(root):
        if lang.po == code:
            return lang
    return None


def by_pages(tag, root=ROOT):
    for lang in load(root):
        if lang.pages == tag:
            return lang
    return None


def of_value(value, root=ROOT):
    """The Language a LANG value or a --lang value names (es_ES.UTF-8, pt,
    zh-CN, tr_TR.UTF-8, TR), or None for English or one the course does not
    have. The longest matching prefix wins."""
    v = _ascii_lower((value or "").strip()).replace("-", "_")
    best = None
    for lang in load(root):
        for prefix in lang.env:
            if v.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), lang)
    return best[1] if best else None
