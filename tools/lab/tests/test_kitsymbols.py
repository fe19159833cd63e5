"""kitsymbols: the kit's no-answer check, on canned `nm -C --defined-only`
output (no build)."""
import labs
from checks import kitsymbols

T2 = ("xt::xtensor_container<xt::uvector<float, std::allocator<float> >, 2ul, "
      "(xt::layout_type)1, xt::xtensor_expression_tag>")
T3 = T2.replace("2ul", "3ul")

HEADER_1 = """// split_heads(x, n_heads): (T, d_model) -> (n_heads, T, d_head).
Tensor3 split_heads(const Tensor2& x, int n_heads);
Tensor2 combine_heads(const Tensor3& heads);
"""
STUB_1 = """0000000000000000 T mha::split_heads(%s const&, int)
0000000000000080 T mha::combine_heads(%s const&)
0000000000000000 W std::__cxx11::basic_string<char> mha::shape_string<std::array<unsigned long, 2ul> >(std::array<unsigned long, 2ul> const&)
0000000000000000 r xt::placeholders::_
""" % (T2, T3)

HEADER_3 = """class MultiHeadAttention {
 public:
  MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed);
  Tensor2 forward(const Tensor2& x, const std::optional<Tensor2>& mask) const;
};
"""
STUB_3 = """0000000000000000 T mha::MultiHeadAttention::MultiHeadAttention(int, int, unsigned long)
0000000000000040 T mha::MultiHeadAttention::forward(%s const&, std::optional<%s> const&) const
""" % (T2, T2)

STUB_1_PATH = "labs/01_split_heads/_objs/split_heads/split_heads.pic.o"
STUB_3_PATH = "labs/03_output_projection/_objs/multi_head_attention/multi_head_attention.pic.o"
COMMON = """0000000000000000 T mha::NumpyRng::NumpyRng(unsigned long)
0000000000000100 T mha::NumpyRng::standard_normal()
                 U mha::split_heads(%s const&, int)
""" % T2


def check(extra):
    objects = {STUB_1_PATH: STUB_1, STUB_3_PATH: STUB_3,
               "common/_objs/rng/rng.pic.o": COMMON}
    objects.update(extra)
    stubs = {"lab 1": [STUB_1_PATH], "lab 3": [STUB_3_PATH]}
    headers = {"lab 1": ("labs/01_split_heads/split_heads.h", HEADER_1),
               "lab 3": ("labs/03_output_projection/multi_head_attention.h", HEADER_3)}
    return kitsymbols.problems(objects, stubs, headers)


def test_a_clean_kit_passes():
    assert check({}) == []


def test_the_graded_functions_are_the_stubs_strong_symbols_that_its_header_names():
    assert kitsymbols.graded_functions(STUB_1, HEADER_1) == {"mha::split_heads",
                                                             "mha::combine_heads"}
    assert kitsymbols.graded_functions(STUB_3, HEADER_3) == {
        "mha::MultiHeadAttention::MultiHeadAttention(int, int, unsigned long)",
        "mha::MultiHeadAttention::forward"}


def test_a_graded_function_defined_in_common_is_refused():
    found = check({"common/_objs/helpers/helpers.pic.o":
                   "0000000000000000 T mha::combine_heads(%s const&)\n" % T3})
    assert len(found) == 1
    assert "common/_objs/helpers/helpers.pic.o defines mha::combine_heads(" in found[0]
    assert "lab 1" in found[0] and "labs/01_split_heads/split_heads.h" in found[0]


def test_another_signature_weak_or_local_definitions_count_too():
    for line in ["0000000000000000 W mha::split_heads(%s const&, long)" % T2,
                 "0000000000000000 t mha::(anonymous namespace)::split_heads(%s const&)" % T2,
                 "0000000000000000 T mha::Tensor2 mha::MultiHeadAttention::forward<int>(int) const"]:
        assert check({"labs/07_head_analysis/_objs/show_heads/show_heads.o": line + "\n"}), line


def test_a_method_defined_in_another_labs_file_is_refused():
    found = check({"labs/05_grouped_query_attention/_objs/print_numbers/print_numbers.o":
                   "0000000000000000 T mha::MultiHeadAttention::forward(%s const&, "
                   "std::optional<%s> const&) const\n" % (T2, T2)})
    assert len(found) == 1 and "lab 3" in found[0]


def test_references_data_and_other_namespaces_are_not_definitions():
    assert check({"labs/03_output_projection/_objs/multi_head_attention_public_test/t.o":
                  "                 U mha::split_heads(%s const&, int)\n"
                  "0000000000000000 r mha::split_heads_table\n"
                  "0000000000000000 d mha::combine_heads\n"
                  "0000000000000000 T mha::testing::split_heads(%s const&, int)\n"
                  "0000000000000000 T naive::split_heads(%s const&, int)\n"
                  % (T2, T2, T2)}) == []


def test_a_kit_built_without_the_stubs_cannot_pass():
    found = kitsymbols.problems({"common/_objs/rng/rng.pic.o": COMMON},
                                {"lab 1": []},
                                {"lab 1": ("labs/01_split_heads/split_heads.h", HEADER_1)})
    assert found and "no object of the stub" in found[0]


def test_qualified_names_lose_return_types_templates_and_parameters():
    q = kitsymbols.qualified_name
    assert q("mha::split_heads(%s const&, int)" % T2) == "mha::split_heads"
    assert q("std::__cxx11::basic_string<char> mha::shape_string<std::array<unsigned long, 2ul> >"
             "(std::array<unsigned long, 2ul> const&)") == "mha::shape_string"
    assert q("mha::MultiHeadAttention::forward(int) const") == "mha::MultiHeadAttention::forward"
    assert q("mha::(anonymous namespace)::combine_heads(int)") == "mha::combine_heads"


def test_stub_objects_are_found_by_the_registry_target_and_file():
    lab = labs.Lab({"number": 1, "dir": "01_split_heads", "target": "split_heads",
                    "title": "Split and combine heads"})
    paths = [STUB_1_PATH, "labs/01_split_heads/_objs/split_heads/split_heads.o",
             "labs/01_split_heads/_objs/split_heads_public_test/split_heads_public_test.pic.o",
             "common/_objs/split_heads/split_heads.pic.o"]
    assert kitsymbols.stub_object_paths(lab, paths) == paths[:2]


def test_implicit_copy_and_move_constructors_are_no_answer_but_the_stubs_constructor_is():
    program = "labs/10_attention_backward/_objs/heads_sweep/heads_sweep.pic.o"
    assert check({program:
                  "0000000000000000 W mha::MultiHeadAttention::MultiHeadAttention("
                  "mha::MultiHeadAttention const&)\n"
                  "0000000000000000 W mha::MultiHeadAttention::MultiHeadAttention("
                  "mha::MultiHeadAttention&&)\n"
                  "0000000000000000 W mha::MultiHeadAttention::~MultiHeadAttention()\n"}) == []
    found = check({program: "0000000000000000 T mha::MultiHeadAttention::MultiHeadAttention("
                            "int, int, unsigned long)\n"})
    assert len(found) == 1 and "lab 3" in found[0]
