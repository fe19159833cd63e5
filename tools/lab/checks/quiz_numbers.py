"""./lab test's review of the quizzes' numbers (./lab test --only quiz).

A quiz repeats its lesson's numbers: a measured loss, a cache size, a count.
When the lesson changes and the quiz does not, the quiz teaches a number the
course no longer stands behind. So every number in a question, in its right
answer, and in the explanation ("why") of every option, must be one of:

- a number of the lab's lesson, docs/NN_name.md (anywhere in it: prose,
  tables, code blocks);
- in an answer or an explanation, a number of the question (so checked
  already), or in an option's explanation one of that option's own text
  (which the explanation repeats);
- marked as derived in the question's "derived" field: the number as the quiz
  writes it, and the arithmetic that gives it, which this check evaluates (a
  value that only the question sets, T = 17, is marked as itself: "17": "17"):

      {"id": "entropy-uniform", ...,
       "derived": {"1.44": "1 / ln(2)", "2.32": "log2(5)"}}

  An expression has numbers, + - * / ^ (a power), parentheses, pi, and
  sqrt, ln, log2, exp, round(x, digits); its value, rounded as the key is
  written (1.44: to two decimals; 54,000 needs round(x, -3)), must be the key.

Numbers are compared by value (0.90 is 0.9, 1,048,576 is 1048576; a trailing
% or x is not part of the number). Small counts are not checked: integers up
to 10 (heads, labs, indices) unless a % or an x follows (6%, 4x), lab numbers
("lab 13") and exponents (the 29 of 2^29) are left out. The wrong options' own texts are not checked either: a
wrong answer is allowed a number no lesson has.
"""
import ast
import math
import os
import re

from labs import ROOT, load_labs
from learner import quiz

# A number as prose writes it: 1,048,576 or 0.337 or 5.8e-05 or 46.9, not a
# part of a word (d_head, float32, W_Q2, 128k) except a trailing x or %.
_NUMBER = re.compile(r"(?<![\w.^])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d+))?"
                     r"(?=([x%]?)(?!\w))")
# What is not a quantity: an exponent (^2, ^(29-23), ^-2) and a lab's number
# ("lab 13", "labs 7 and 10", "Labs 1-4").
_EXPONENT = re.compile(r"\^(?:\([^()]*\)|[-+]?\d+(?:\.\d+)?)")
_LAB_REF = re.compile(r"\b[Ll]abs? \d+(?:(?:, | and | to | or |-)\d+)*")
SMALL = 10


def numbers(text):
    """[(as written, value, tolerance)] of the numbers `text` states, in order;
    tolerance is half a unit of the last digit written."""
    text = _LAB_REF.sub(" ", _EXPONENT.sub(" ", text))
    out = []
    for m in _NUMBER.finditer(text):
        whole, frac, exp = m.group(1), m.group(2) or "", m.group(3)
        value = float(whole.replace(",", "") + frac + ("e" + exp if exp else ""))
        if not frac and not exp and not m.group(4) and value <= SMALL:
            continue
        digits = len(frac) - 1 if frac else 0
        out.append((m.group(0), value, 0.5 * 10.0 ** (-digits + int(exp or 0))))
    return out


def _same(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


_FUNCTIONS = {"sqrt": math.sqrt, "ln": math.log, "log2": math.log2, "exp": math.exp,
              "round": round}
_NAMES = {"pi": math.pi}
_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
              ast.Pow: lambda a, b: a ** b}


def evaluate(expression):
    """The value of a derived number's arithmetic; ValueError names what is
    not allowed in it (only numbers, + - * / ^, parentheses, pi and _FUNCTIONS)."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name) and node.id in _NAMES:
            return _NAMES[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = walk(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _FUNCTIONS and not node.keywords:
            return _FUNCTIONS[node.func.id](*[walk(a) for a in node.args])
        raise ValueError("%r is not allowed (numbers, + - * / ^, parentheses, pi, %s)"
                         % (ast.unparse(node) if hasattr(ast, "unparse") else node,
                            ", ".join(sorted(_FUNCTIONS))))
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError as e:
        raise ValueError("not arithmetic (%s)" % e.msg)
    try:
        return float(walk(tree))
    except (ArithmeticError, TypeError) as e:
        raise ValueError(str(e))


def lesson_path(lab, root=ROOT):
    return os.path.join(root, "docs", lab.dir + ".md")


def _derived(q, where):
    """({value: (as written, tolerance)}, [problems]) of a question's "derived"."""
    marks, out = {}, []
    given = q.get("derived", {})
    if not isinstance(given, dict):
        return marks, ['%s: "derived" must be an object {"number as written": "arithmetic"}'
                       % where]
    for key, expression in given.items():
        found = numbers(key)
        if len(found) != 1 or found[0][0] != key.strip().rstrip("%x"):
            out.append('%s: derived %r is not one number as the quiz writes it (integers up to '
                       '%d are never checked, so never marked)' % (where, key, SMALL))
            continue
        _, value, tolerance = found[0]
        if not isinstance(expression, str):
            out.append("%s: derived %s: the arithmetic must be a string" % (where, key))
            continue
        try:
            got = evaluate(expression)
        except ValueError as e:
            out.append("%s: derived %s = %s: %s" % (where, key, expression, e))
            continue
        if abs(got - value) > tolerance * (1 + 1e-9):
            out.append("%s: derived %s = %s, but that is %.6g" % (where, key, expression, got))
        marks[value] = (key, tolerance)
    return marks, out


def problems_of(data, lesson_text, rel, lesson_rel):
    """The numbers of one quiz (parsed) that its lesson's text does not hold
    and no "derived" marks, and every wrong "derived" mark."""
    known = [v for _, v, _ in numbers(lesson_text)]
    out = []
    for q in data.get("questions", []):
        if not isinstance(q, dict):
            continue
        where = "%s, question %r" % (rel, q.get("id"))
        marks, bad = _derived(q, where)
        out += bad
        question = q.get("question") or ""
        givens = [v for _, v, _ in numbers(question)]
        texts = [("the question", question, [])]
        for k, o in enumerate(q.get("options") or []):
            if not isinstance(o, dict):
                continue
            own = [v for _, v, _ in numbers(o.get("text") or "")]
            if o.get("correct") is True:
                texts.append(("option %s, the right answer" % chr(ord("a") + k),
                              o.get("text") or "", givens))
            texts.append(("option %s, its explanation" % chr(ord("a") + k),
                          o.get("why") or "", givens + own))
        used = set()
        for what, text, local in texts:
            for written, value, _ in numbers(text):
                if any(_same(value, v) for v in local + known):
                    continue
                if value in marks:
                    used.add(value)
                    continue
                out.append('%s, %s: %s is not in %s: add it to the lesson, correct the quiz, or '
                           'mark it in the question\'s "derived" with the arithmetic that gives it'
                           % (where, what, written, lesson_rel))
        for value, (key, _) in marks.items():
            if value not in used:
                out.append('%s: derived %s is not a number the right answer or an explanation '
                           'needs (in the lesson or the question already, or no longer '
                           'written): remove it' % (where, key))
    return out


def problems(labs=None, root=ROOT):
    """Every number of every lab's quiz that its lesson does not back (./lab test)."""
    out = []
    for lab in labs or load_labs(root):
        data = quiz.load(lab, root)
        if not isinstance(data, dict):
            continue  # the quiz check says what is wrong with the file itself
        rel = os.path.relpath(quiz.quiz_path(lab, root), root)
        path = lesson_path(lab, root)
        lesson_rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as f:
                lesson_text = f.read()
        except OSError:
            out.append("%s: its lesson %s is missing, so its numbers cannot be checked"
                       % (rel, lesson_rel))
            continue
        out += problems_of(data, lesson_text, rel, lesson_rel)
    return out
