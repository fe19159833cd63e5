"""hostile_cases.assemble: the one learner file a hostile case submits, made from its trick."""
import os

import pytest

from checks import hostile_cases as hostile
from labs import load_labs

LABS = load_labs()
LAB1 = [l for l in LABS if l.number == 1][0]
with open(os.path.join(hostile.ROOT, LAB1.learner_file)) as _f:
    STUB1 = _f.read()


def case(corpus, trick, expect=None):
    """A one-case corpus in `corpus` (a pathlib.Path) for lab 1."""
    (corpus / "c").mkdir(exist_ok=True)
    (corpus / "c" / "split_heads.cc").write_text(trick)
    return hostile.Case("c", LAB1, str(corpus / "c" / "split_heads.cc"),
                        dict({"lab": 1}, **(expect or {})))


def test_every_case_of_the_corpus_assembles_into_one_file_without_directives():
    for c in hostile.load_cases(LABS):
        if c.kind == "roster":          # a whole roster: its folders take other files
            continue
        text = hostile.assemble(c)
        assert "//@" not in text, c.name
        assert '#include "labs/%s/%s.h"' % (c.lab.dir, c.lab.target) in text, c.name
        if c.expect.get("control"):
            assert hostile.assemble(c, trick=False) != text, c.name


def test_a_file_without_directives_is_submitted_as_it_is(workdir):
    assert hostile.assemble(case(workdir, "// whole\nint x;\n")) == "// whole\nint x;\n"


def test_a_trick_is_written_on_the_stub_where_its_lines_say(workdir):
    (workdir / "pieces").mkdir()
    (workdir / "pieces" / "p.cc").write_text("int shared_piece = 1;\n")
    trick = ("// the trick's comment\n//@ after includes\n#include <cstdlib>\n"
             "//@ paste pieces/p.cc\n//@ at the start of split_heads\n  std::abort();\n"
             "//@ instead of combine_heads\nTensor2 combine_heads(const Tensor3&) { return {}; }\n")
    hostile.HOSTILE, old = str(workdir), hostile.HOSTILE
    try:
        text = hostile.assemble(case(workdir, trick))
    finally:
        hostile.HOSTILE = old
    assert text.startswith("// the trick's comment\n#include \"labs/01_split_heads/split_heads.h\"")
    assert text.index("#include <stdexcept>") < text.index("#include <cstdlib>") < \
        text.index("int shared_piece = 1;") < text.index("namespace mha {")
    body = text[text.index("Tensor3 split_heads("):]
    assert body.index("std::abort();") < body.index("split_heads is not implemented yet")
    assert "combine_heads(const Tensor3&) { return {}; }" in text
    assert "combine_heads is not implemented yet" not in text


def test_the_control_is_the_stub_with_the_honest_definitions_and_no_trick():
    c = [c for c in hostile.load_cases(LABS) if c.name == "exit_after_some_tests"][0]
    control = hostile.assemble(c, trick=False)
    assert "std::exit(0)" not in control and "combine_heads is not implemented yet" in control
    assert "split_heads is not implemented yet" not in control
    assert "std::exit(0)" in hostile.assemble(c)


@pytest.mark.parametrize("trick, expect, says", [
    ("//@ beside split_heads\n", {}, "unknown line //@ beside split_heads"),
    ("//@ instead of heads\nint heads();\n", {}, "0 definitions of heads, not one"),
    ("// whole file\n", {"control": True}, "need a trick on the stub"),
])
def test_a_mistake_in_a_case_names_the_case_and_what_is_wrong(workdir, trick, expect, says):
    with pytest.raises(ValueError, match=says):
        hostile.assemble(case(workdir, trick, expect))
