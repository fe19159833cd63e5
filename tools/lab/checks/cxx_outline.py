"""Just enough of C++ to outline a lab's files: where each function of a
solution is defined, what each class or struct of a header holds, and what
each type's remote state lists. The degenerate catalogue (degenerate.py)
writes its files from this outline; the files it reads are the suite's own,
written in one style (clang-format, namespace mha), so a full parser is not
needed: a file this cannot read makes the catalogue say so, never guess.

    masked(text)                  comments and literals blanked, offsets kept
    definitions(text)             [Definition] of every function in namespace mha
    class_fields(headers, name)   [Field] of a class or struct, with its access
    remote_states(texts)          {type: [field names]} from MHA_REMOTE_STATE
"""
import re

from checks.signatures import _balanced, _split

_LITERAL_OR_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                                 re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def masked(text):
    """`text` with every comment and string or character literal replaced by
    spaces (newlines kept), so that offsets into it are offsets into `text`."""
    return _LITERAL_OR_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


class Definition:
    """One function defined in a .cc file: `qualified` ("forward",
    "KVCache::append"), its return type as written (None for a constructor),
    its parameters [(type, name or "")], whether it is const, and the offsets
    of its body's braces (`open` at "{", `close` at the matching "}")."""

    def __init__(self, qualified, ret, params, const, open_, close):
        self.qualified = qualified
        self.ret = ret
        self.params = params
        self.const = const
        self.open = open_
        self.close = close

    @property
    def cls(self):
        return self.qualified.rsplit("::", 1)[0] if "::" in self.qualified else None

    @property
    def is_constructor(self):
        parts = self.qualified.split("::")
        return len(parts) == 2 and parts[0] == parts[1]

    def __repr__(self):
        return "Definition(%s)" % self.qualified


def _head_start(m, i):
    """Where the declaration ending at offset i begins: after the last ; { or }
    before it (or a line that is a preprocessor directive)."""
    j = i
    while j > 0 and m[j - 1] not in ";{}":
        j -= 1
    head = m[j:i]
    # A #include or #define line before the first definition is not part of it.
    lines = head.split("\n")
    k = 0
    while k < len(lines) and (not lines[k].strip() or lines[k].lstrip().startswith("#")):
        k += 1
    return j + sum(len(l) + 1 for l in lines[:k])


def _parse_head(head):
    """(qualified name, return type or None, params text, const) of a function
    definition's head, or None when the head is not one."""
    depth, i = 0, 0
    while i < len(head):
        ch = head[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            name = re.search(r"((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)\s*$", head[:i])
            if not name:
                return None
            try:
                params, end = _balanced(head, i)
            except ValueError:
                return None
            rest = head[end:]
            if not re.match(r"^\s*(const\b)?\s*(noexcept\b)?\s*(:.*)?$", rest, re.S):
                return None
            ret = " ".join(head[:name.start()].split()) or None
            if ret:
                ret = re.sub(r"^(?:(?:inline|static|constexpr)\s+)+", "", ret)
            return name.group(1), ret, params, bool(re.match(r"^\s*const\b", rest))
        i += 1
    return None


def _params(text):
    out = []
    for p in _split(text):
        p = p.split("=", 1)[0].strip()
        if not p or p == "void":
            continue
        m = re.match(r"^(.*?[\w&*>\]])\s*\b([A-Za-z_]\w*)$", p)
        if m and m.group(1).strip() not in ("const", "unsigned", "signed", "long"):
            out.append((" ".join(m.group(1).split()), m.group(2)))
        else:
            out.append((" ".join(p.split()), ""))
    return out


def definitions(text, namespace="mha"):
    """Every function defined directly in `namespace` (not in an anonymous or
    nested namespace, not inside a class) of a .cc file's text."""
    m = masked(text)
    stack = []          # what each open brace opened: "ns:<name>", "fn", "other"
    out = []
    for i, ch in enumerate(m):
        if ch == "}":
            if stack:
                stack.pop()
            continue
        if ch != "{":
            continue
        start = _head_start(m, i)
        head = m[start:i]
        ns = re.match(r"^\s*(?:inline\s+)?namespace\s*([\w:]*)\s*$", head)
        if ns:
            stack.append("ns:" + ns.group(1))
            continue
        if stack == ["ns:" + namespace] and "(" in head:
            parsed = _parse_head(head)
            if parsed:
                name, ret, params, const = parsed
                close = _matching(m, i)
                out.append(Definition(name, ret, _params(params), const, i, close))
                stack.append("fn")
                continue
        stack.append("other")
    return out


def _matching(m, i):
    depth = 0
    for j in range(i, len(m)):
        if m[j] == "{":
            depth += 1
        elif m[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced braces after offset %d" % i)


class Field:
    """A data member: its type as written, its name, and whether it is public."""

    def __init__(self, type_, name, public):
        self.type = type_
        self.name = name
        self.public = public

    def __repr__(self):
        return "Field(%s %s%s)" % (self.type, self.name, "" if self.public else ", private")


def class_fields(headers, name):
    """[Field] of class or struct `name` in the headers' text (a str), in
    declaration order; None when no header defines it."""
    m = masked(headers)
    found = re.search(r"\b(class|struct)\s+%s\b[^;{]*\{" % re.escape(name), m)
    if not found:
        return None
    open_ = found.end() - 1
    body = m[open_ + 1:_matching(m, open_)]
    public = found.group(1) == "struct"
    out = []
    # Split the body into its statements at depth 0 (an inline body is skipped whole).
    depth, cur = 0, ""
    for ch in body:
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
        if depth == 0 and ch in ";}":
            cur += ch
            statement = cur.strip()
            cur = ""
            access = re.match(r"^(public|private|protected)\s*:\s*", statement)
            while access:
                public = access.group(1) == "public"
                statement = statement[access.end():]
                access = re.match(r"^(public|private|protected)\s*:\s*", statement)
            if ch == ";" and "(" not in statement and not statement.startswith(
                    ("friend", "using", "typedef", "static", "enum", "struct", "class")):
                out += _fields(statement.rstrip(";"), public)
            continue
        cur += ch
    return out


def _fields(statement, public):
    """`Tensor2 W_Q, W_K;` -> two Fields; initialisers dropped."""
    parts = [p.split("=", 1)[0].strip() for p in _split(statement)]
    if not parts or not parts[0]:
        return []
    first = re.match(r"^(.*?[\w>*&])\s*\b([A-Za-z_]\w*)$", parts[0])
    if not first:
        return []
    type_ = " ".join(first.group(1).split())
    out = [Field(type_, first.group(2), public)]
    for p in parts[1:]:
        if _IDENT.fullmatch(p):
            out.append(Field(type_, p, public))
    return out


def remote_states(texts):
    """{type: [field names]} from every MHA_REMOTE_STATE(Type, a, b, ...) in
    the given texts (the labs' tests/NN_name/remote.h and remote.cc)."""
    out = {}
    for text in texts:
        text = re.sub(r"//[^\n]*", "", text)
        for found in re.finditer(r"\bMHA_REMOTE_STATE\s*\(", text):
            inside, _ = _balanced(text, found.end() - 1)
            names = _split(inside)
            out[names[0]] = names[1:]
    return out
