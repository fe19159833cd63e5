"""degenerate: the catalogue of do-nothing learner files, written from a lab's
solution, header and remote states (cxx_outline reads them)."""
import re

import pytest

from checks import cxx_outline, degenerate
from labs import load_labs

LABS = load_labs()
BY_NUMBER = {lab.number: lab for lab in LABS}

SOLUTION = '''// A made-up solution.
#include "labs/99_made_up/made_up.h"

#include <string>

namespace mha {
namespace {

Tensor2 helper(const Tensor2& x) { return x; }  // in an anonymous namespace: not graded

}  // namespace

Layer::Layer(int d, std::uint64_t seed) : d_model(d) {
  if (d < 1) throw std::invalid_argument("d=" + std::to_string(d) + " {");
  W = NumpyRng(seed).normal_matrix(d, d, d);
}

Tensor2 Layer::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  auto twice = [&](float v) { return 2 * v; };
  return helper(x) * twice(1.0f);
}

const Cache& Decoder::cache() const { return cache_; }

std::size_t count(int a, int) { return a; }

}  // namespace mha
'''


def test_the_outline_finds_each_definition_in_namespace_mha_and_its_body():
    found = {d.qualified: d for d in cxx_outline.definitions(SOLUTION)}
    assert sorted(found) == ["Decoder::cache", "Layer::Layer", "Layer::forward", "count"]
    forward = found["Layer::forward"]
    assert forward.ret == "Tensor2" and forward.const and forward.cls == "Layer"
    assert forward.params == [("const Tensor2&", "x"), ("const std::optional<Tensor2>&", "mask")]
    assert SOLUTION[forward.open] == "{" and SOLUTION[forward.close] == "}"
    assert "return helper(x)" in SOLUTION[forward.open:forward.close]
    ctor = found["Layer::Layer"]
    assert ctor.is_constructor and ctor.ret is None
    assert "normal_matrix" in SOLUTION[ctor.open:ctor.close]   # the "{" in a string is not a brace
    assert found["Decoder::cache"].ret == "const Cache&"
    assert found["count"].params == [("int", "a"), ("int", "")]


def test_the_outline_reads_a_class_fields_and_their_access():
    headers = '''class KVCache;
struct Pair { Tensor2 a, b; int n = 0; };
class Cache {
 public:
  Cache(int n);
  void append(const Tensor3& k);  // a method, not a field
  int length() const { return n_; }
 private:
  friend struct remote::Access;
  int n_ = 0;
  Tensor3 keys_;
};
'''
    fields = cxx_outline.class_fields(headers, "Cache")
    assert [(f.type, f.name, f.public) for f in fields] == [("int", "n_", False),
                                                             ("Tensor3", "keys_", False)]
    assert [(f.type, f.name) for f in cxx_outline.class_fields(headers, "Pair")] == [
        ("Tensor2", "a"), ("Tensor2", "b"), ("int", "n")]
    assert cxx_outline.class_fields(headers, "KVCache") is None


def test_remote_states_list_each_types_fields():
    text = "MHA_REMOTE_STATE(AttentionResult, output, weights)\n// MHA_REMOTE_STATE(X, y)\n"
    assert cxx_outline.remote_states([text]) == {"AttentionResult": ["output", "weights"]}


@pytest.mark.parametrize("number", sorted(BY_NUMBER))
def test_every_lab_has_a_catalogue_and_every_graded_function_is_wrapped(number):
    lab = BY_NUMBER[number]
    catalogue = degenerate.load(LABS, lab)
    assert catalogue and all(v.source is not None for v in catalogue), [v.error for v in catalogue]
    text = catalogue[0].source.decode()
    outline = degenerate.Outline(lab, LABS)
    assert text.count("::mha_degenerate::Depth mha_degenerate_depth;") == len(outline.graded)
    assert not re.search(r"^// @[A-Z]+@$", text, re.M)   # every placeholder of the prelude filled
    assert len({v.name for v in catalogue}) == len(catalogue)


def test_the_variants_cover_every_tensor_argument_and_both_weights():
    names = [v.name for v in degenerate.load(LABS, BY_NUMBER[10])]
    assert names[:4] == ["zeros", "ones", "uniform", "-inf"]
    assert "arg5" in names and "arg6" not in names   # q, k, v, mask, d_output
    names = [v.name for v in degenerate.load(LABS, BY_NUMBER[3])]
    assert "zeros (zero weights)" in names
    assert not any("zero weights" in v.name for v in degenerate.load(LABS, BY_NUMBER[8]))


def test_a_lab_whose_function_returns_a_word_gets_a_variant_per_word_of_its_header():
    names = [v.name for v in degenerate.load(LABS, BY_NUMBER[7])]
    for word in ("induction", "previous-token", "self", "first-token", "local", "diffuse"):
        assert "label:" + word in names


def test_an_object_that_changes_gets_an_inert_variant_that_puts_it_back():
    inert = [v for v in degenerate.load(LABS, BY_NUMBER[8]) if v.name == "inert"][0]
    text = inert.source.decode()
    assert "*this = mha_degenerate_saved;" in text
    # Its sizes are told truly: length() is not replaced.
    length = text[text.index("int KVCache::length() const"):]
    assert "degrade" not in length[:length.index("\n}\n")]


def test_zero_weights_zero_the_weights_inside_a_models_layers():
    v = [v for v in degenerate.load(LABS, BY_NUMBER[13]) if v.name == "zeros (zero weights)"][0]
    text = v.source.decode()
    assert re.search(r"for \(auto& mha_degenerate_e0 : layers\) \{\s*"
                     r"::mha_degenerate::fill\(mha_degenerate_e0\.W_Q", text)


def test_a_solution_that_lacks_a_graded_definition_is_said_not_guessed(tmp_path):
    lab = BY_NUMBER[1]
    root = tmp_path
    for rel in (lab.solution_file, lab.header_file, lab.remote_file):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(open(lab.root + "/" + rel).read())
    (root / lab.solution_file).write_text(SOLUTION)
    with pytest.raises(degenerate.DegenerateError, match="combine_heads, split_heads"):
        degenerate.Outline(lab, [lab], str(root))


def test_lab_15s_inert_optimiser_puts_back_the_model_it_was_given_as_well_as_itself():
    inert = [v for v in degenerate.load(LABS, BY_NUMBER[15]) if v.name == "inert"][0]
    text = inert.source.decode()
    step = text[text.index("void AdamW::step("):]
    step = step[:step.index("\n}\n")]
    assert "const auto mha_degenerate_saved_model = model;" in step
    assert "model = mha_degenerate_saved_model;" in step


def test_a_private_field_of_another_class_is_filled_through_an_accessor_not_by_name():
    # GptDecoder holds RotaryDecoders, whose KVCache is private (lab 15).
    zeros = [v for v in degenerate.load(LABS, BY_NUMBER[15]) if v.name == "zeros"][0]
    text = zeros.source.decode()
    assert "template struct Rob<Tag_RotaryDecoder_cache_, &RotaryDecoder::cache_>;" in text
    assert not re.search(r"mha_degenerate_e\d+\.cache_\b", text)


class _Verdict:
    def __init__(self, status, unearned=()):
        self.status, self.first, self.unearned = status, "made_up.cc:3: error: boom", list(unearned)
        self.points = self.draw_points = 0


def test_a_variant_that_does_not_compile_fails_the_summary_and_is_named():
    catalogue = degenerate.load(LABS, BY_NUMBER[1])[:2]
    built, unbuilt = catalogue
    verdicts = {built.label: {"hidden": _Verdict("graded"), "public": _Verdict("graded")},
                unbuilt.label: {"hidden": _Verdict("compile_error"),
                                "public": _Verdict("compile_error")}}
    lines, ok = degenerate.summary(catalogue, verdicts, [BY_NUMBER[1]])
    assert not ok
    assert any(unbuilt.label in line and "compile error" in line for line in lines)
    verdicts[unbuilt.label] = verdicts[built.label]
    assert degenerate.summary(catalogue, verdicts, [BY_NUMBER[1]])[1]
