"""surface: a lab's call surface (labs/labs.json "calls") against canned nm output."""
import labs
import surface

LABS = labs.load_labs()
BY = {lab.number: lab for lab in LABS}

NM_LAB9 = """                 U memcpy
                 U mha::attention_batched(xt::xtensor_container<xt::uvector<float, std::allocator<float> >, 3ul, (xt::layout_type)1, xt::xtensor_expression_tag> const&, std::optional<xt::xtensor_container<xt::uvector<float, std::allocator<float> >, 2ul, (xt::layout_type)1, xt::xtensor_expression_tag> > const&)
                 w mha::GqaDecoder::step(xt::xtensor_container<xt::uvector<float, std::allocator<float> >, 2ul, (xt::layout_type)1, xt::xtensor_expression_tag> const&)
                 U mha::GroupedQueryAttention::GroupedQueryAttention(int, int, int, unsigned long)
"""


def test_every_registered_lab_declares_its_calls():
    assert all(isinstance(lab.calls, list) for lab in LABS)


def test_the_api_table_holds():
    assert BY[9].calls == []
    for n in (5, 6):
        assert "MultiHeadAttention::forward" not in BY[n].calls
        assert "MultiHeadAttention::attend" not in BY[n].calls
    for name in ("forward", "attend", "forward_absorbed"):
        assert not any(c.endswith("::" + name) for c in BY[8].calls)


def test_qualified_names_drop_the_namespace_and_the_signature():
    assert surface.qualified("mha::MultiHeadAttention::forward(xt::a<int, 2> const&) const") == \
        "MultiHeadAttention::forward"
    assert surface.qualified("attention_batched(const Tensor3& q)") == "attention_batched"


def test_the_remote_interfaces_name_constructors_as_class_colon_class():
    assert "GqaDecoder::GqaDecoder" in surface.units(BY[8])
    assert "MultiHeadAttention::MultiHeadAttention" in surface.units(BY[3])


def test_pointer_constructors_and_reference_methods_are_units_of_their_interface():
    for lab, cls in ((BY[8], "GqaDecoder"), (BY[8], "MlaDecoder"), (BY[11], "RotaryDecoder")):
        assert {cls + "::" + cls, cls + "::cache"} <= set(surface.units(lab))


def test_every_earlier_lab_reference_outside_the_surface_is_named_once():
    found = surface.violations(BY[9], LABS, NM_LAB9 + NM_LAB9)
    assert len(found) == 3
    assert found[0].startswith("lab 9 may not call attention_batched (lab 2's)")
    assert any("GqaDecoder::step" in f for f in found)
    assert any("GroupedQueryAttention::GroupedQueryAttention" in f for f in found)


def test_a_reference_inside_the_surface_and_a_library_call_pass():
    nm = ("                 U mha::attention_batched(int)\n"
          "                 U mha::NumpyRng::NumpyRng(unsigned long)\n"
          "                 U cblas_sgemm\n")
    assert surface.violations(BY[3], LABS, nm) == []


def test_a_reference_to_a_later_lab_is_not_a_call_surface_question():
    assert surface.violations(BY[2], LABS, "                 U mha::split_heads(int)\n") != []
    assert surface.violations(BY[1], LABS, "                 U mha::attention_batched(int)\n") == []


def test_the_consistency_check_wants_the_field_and_the_lessons_line():
    lab = labs.Lab({"number": 4, "dir": "04_causal_mask", "target": "causal_mask", "title": "t"})
    assert "no \"calls\"" in surface.registry_problems(lab, LABS)[0]
    lab.calls = ["attention_batched"]
    assert surface.lesson_problems(lab)  # the lesson says "nothing"
    lab.calls = ["no_such_function"]
    assert "no earlier lab" in surface.registry_problems(lab, LABS)[0]
