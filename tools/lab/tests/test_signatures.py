"""checks/signatures.py: remote.cc's signatures against the lab's header."""
import os

from checks import signatures
from labs import Lab, load_labs

HEADER = """
namespace mha {
// A comment with split_heads(x) in it.
Tensor3 split_heads(const Tensor2& x, int n_heads);
class Layer {
 public:
  Layer(int d_model, std::uint64_t seed = 0);
  Tensor2 forward(const Tensor2& x,
                  const std::optional<Tensor2>& mask = std::nullopt) const;
  void reset();
};
}
"""
REMOTE = """
MHA_REMOTE_FUNCTION(Tensor3, split_heads, (const Tensor2& x, int n_heads), (x, n_heads))
MHA_REMOTE_CONSTRUCTOR(Layer, (int d_model, std::uint64_t seed), (d_model, seed))
MHA_REMOTE_CONST_METHOD(Layer, Tensor2, forward,
                        (const Tensor2& x, const std::optional<Tensor2>& mask), (x, mask))
MHA_REMOTE_METHOD(Layer, void, reset, (), ())
"""


def _lab(tmp_path, header, remote):
    lab = Lab({"number": 99, "dir": "99_example", "target": "example", "title": "t"},
              str(tmp_path))
    for rel, text in ((lab.header_file, header), (lab.remote_file, remote)):
        os.makedirs(os.path.dirname(os.path.join(tmp_path, rel)), exist_ok=True)
        with open(os.path.join(tmp_path, rel), "w") as f:
            f.write(text)
    return lab


def test_matching_signatures_have_no_problem(tmp_path):
    assert signatures.problems(_lab(tmp_path, HEADER, REMOTE), str(tmp_path)) == []


def test_a_parameter_type_changed_in_the_header_is_named(tmp_path):
    lab = _lab(tmp_path, HEADER.replace("int n_heads", "std::size_t n_heads"), REMOTE)
    (p,) = signatures.problems(lab, str(tmp_path))
    assert "split_heads(const Tensor2&, int)" in p and "std::size_t" in p


def test_a_method_that_lost_its_const_is_named(tmp_path):
    lab = _lab(tmp_path, HEADER.replace("std::nullopt) const;", "std::nullopt);"), REMOTE)
    (p,) = signatures.problems(lab, str(tmp_path))
    assert "Layer::forward" in p


def test_a_function_the_header_does_not_declare_is_named(tmp_path):
    lab = _lab(tmp_path, HEADER, REMOTE + "MHA_REMOTE_FUNCTION(Tensor2, gone, (int n), (n))\n")
    (p,) = signatures.problems(lab, str(tmp_path))
    assert "gone" in p and "does not declare" in p


def test_an_explicit_constructor_is_a_constructor(tmp_path):
    header = HEADER.replace("  Layer(int d_model", "  explicit Layer(int d_model")
    assert signatures.problems(_lab(tmp_path, header, REMOTE), str(tmp_path)) == []


DECODER_HEADER = """
namespace mha {
class Decoder {
 public:
  Decoder(const Layer& layer, int capacity);
  const Cache& cache() const;
};
}
"""
DECODER_REMOTE = """
MHA_REMOTE_POINTER_CONSTRUCTOR(Decoder, (const Layer& layer, int capacity), (layer, capacity),
                               layer_, layer)
MHA_REMOTE_REFERENCE_METHOD(Decoder, const Cache&, cache, (), (), cache_)
"""


def test_a_pointer_constructor_and_a_reference_method_are_read_as_the_header_declares_them(
        tmp_path):
    assert signatures.problems(_lab(tmp_path, DECODER_HEADER, DECODER_REMOTE),
                               str(tmp_path)) == []
    lab = _lab(tmp_path, DECODER_HEADER.replace("const Cache& cache() const;",
                                                "Cache cache() const;"), DECODER_REMOTE)
    (p,) = signatures.problems(lab, str(tmp_path))
    assert "Decoder::cache" in p and "const Cache&" in p
    lab = _lab(tmp_path, DECODER_HEADER.replace("int capacity);", "long capacity);"),
               DECODER_REMOTE)
    (p,) = signatures.problems(lab, str(tmp_path))
    assert "Decoder::Decoder" in p


def test_every_lab_of_the_repository_agrees_with_its_remote_interface():
    for lab in load_labs():
        assert signatures.problems(lab) == [], lab.dir
