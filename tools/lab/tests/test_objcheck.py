"""objcheck: the second layer's object checks, on canned nm/readelf output."""
from grader import objcheck

READELF = """There are 3 section headers:
  [Nr] Name              Type            Address          Off    Size   ES Flg Lk Inf Al
  [ 0]                   NULL            0000000000000000 000000 000000 00      0   0  0
  [ 1] .text             PROGBITS        0000000000000000 000040 000010 00  AX  0   0  1
  [ 2] {name}   PROGBITS        0000000000000000 000050 000010 00      0   0  1
"""


def test_a_plain_lab_object_passes():
    nm = "_ZN3mha11split_headsERKN2xt8xtensor T 0 10\n_Znwm U\n"
    assert objcheck.problems(READELF.format(name=".rodata"), nm) == []


def test_lto_sections_are_refused():
    assert "link-time" in objcheck.problems(READELF.format(name=".gnu.lto_.main"), "")[0]


def test_an_ifunc_is_refused():
    assert "indirect function" in objcheck.problems("", "resolver i 0 0\n")[0]


def test_defining_main_is_refused_but_a_weak_reference_to_it_is_not():
    assert objcheck.problems("", "main T 0 4\n")
    assert objcheck.problems("", "main w\n") == []


def test_weak_references_to_the_grader_count_like_strong_ones():
    nm = "_ZN3mha6remote6InvokeERKNSt7__cxx1112basic_stringE w\n"
    assert "grader's code" in objcheck.problems("", nm)[0]


def test_odd_names_do_not_crash_it():
    odd = ".data.\ufffd\x1b[31m"
    assert objcheck.problems(READELF.format(name=odd), "\ufffd\x1b T 0 1\nx\n") == []
