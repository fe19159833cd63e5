"""labs/09_flash_attention/try_long_sequence.cc states the grader's limits for
lab 9 as constants: they must be the ones the grader applies (limits.py's
defaults, overridden by tests/rubric.json)."""
import json
import os
import re

from reports import rubric
from labs import ROOT

SOURCE = os.path.join(ROOT, "labs", "09_flash_attention", "try_long_sequence.cc")


def constant(name):
    with open(SOURCE) as f:
        m = re.search(r"\b%s = (\d+)" % name, f.read())
    assert m, "try_long_sequence.cc has no constant %s" % name
    return int(m.group(1))


def test_the_program_applies_lab_9s_memory_and_time_limits():
    with open(rubric.PATH) as f:
        r = rubric.Rubric(json.load(f), [])
    lim = r.limits("09_flash_attention")
    assert constant("kMemoryMiB") == lim["memory_mb"]
    assert constant("kCallSeconds") == lim["test_seconds"]


def test_the_program_uses_the_grading_tests_size_and_blocks():
    with open(os.path.join(ROOT, "tests", "09_flash_attention", "flash_attention_test.cc")) as f:
        test = f.read()
    assert constant("kT") == int(re.search(r"kLongT = (\d+)", test).group(1))
    assert constant("kDHead") == int(re.search(r"kLongDHead = (\d+)", test).group(1))
    blocks = re.findall(r"attention_tiled(?:_causal)?\(c\.q, c\.k, c\.v, (?:std::nullopt, )?"
                        r"(\d+), (\d+)\)", test)
    assert blocks and set(blocks) == {(str(constant("kBlockQ")), str(constant("kBlockK")))}
