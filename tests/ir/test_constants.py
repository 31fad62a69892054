"""prim::Constant: inserting Python values and reading them back."""

from __future__ import annotations

import pytest

from gradview.ir import (
    NOT_CONSTANT,
    BoolType,
    DeviceType,
    FloatType,
    FunctionType,
    Graph,
    IntType,
    ListType,
    NoneType,
    StringType,
    TensorConstant,
    TensorType,
    TupleType,
    constant_value,
    insert_constant,
    lint,
    parse_ir,
)


def _constant(value, type_=None):
    g = Graph()
    out = g.insert_constant(value, type_)
    g.register_output(out)
    lint(g)
    return g, out


@pytest.mark.parametrize(
    ("value", "type_", "line"),
    [
        (3, IntType(), "%0 : int = prim::Constant[value=3]()"),
        (-2, IntType(), "%0 : int = prim::Constant[value=-2]()"),
        (2.5, FloatType(), "%0 : float = prim::Constant[value=2.5]()"),
        (2.0, FloatType(), "%0 : float = prim::Constant[value=2.]()"),
        (0.1, FloatType(), "%0 : float = prim::Constant[value=0.10000000000000001]()"),
        (True, BoolType(), "%0 : bool = prim::Constant[value=1]()"),
        (False, BoolType(), "%0 : bool = prim::Constant[value=0]()"),
        ("hi", StringType(), '%0 : str = prim::Constant[value="hi"]()'),
        (None, NoneType(), "%0 : NoneType = prim::Constant()"),
        ([1, 2], ListType(IntType()), "%0 : int[] = prim::Constant[value=[1, 2]]()"),
        ([1.0, 2.5], ListType(FloatType()), "%0 : float[] = prim::Constant[value=[1., 2.5]]()"),
        ([True, False], ListType(BoolType()), "%0 : bool[] = prim::Constant[value=[True, False]]()"),
        ((1, "a"), TupleType((IntType(), StringType())), '%0 : (int, str) = prim::Constant[value=(1, "a")]()'),
    ],
)
def test_insert_constant_types_and_prints(value, type_, line):
    g, out = _constant(value)
    assert out.type() == type_
    assert out.node.kind() == "prim::Constant" and out.node.inputs() == []
    assert str(g).splitlines()[1] == "  " + line


@pytest.mark.parametrize(
    "value", [3, -2, 2.5, 0.1, True, False, "hi", 'a"b', None, [1, 2], [1.0, 2.5], [True, False], (1, "a")]
)
def test_constant_value_round_trips(value):
    _g, out = _constant(value)
    read = constant_value(out)
    assert read == value and type(read) is type(value)


def test_bool_is_stored_as_int_attribute():
    _g, out = _constant(True)
    assert out.node.attribute_kind("value") == "i" and out.node.i("value") == 1


def test_int_list_is_stored_as_is_attribute():
    _g, out = _constant([4, 5])
    assert out.node.attribute_kind("value") == "is" and out.node.is_("value") == [4, 5]


def test_none_constant_has_no_attribute():
    _g, out = _constant(None)
    assert not out.node.has_attributes()
    assert constant_value(out) is None


def test_empty_int_list():
    _g, out = _constant([])
    assert out.type() == ListType(IntType())
    assert constant_value(out) == []


def test_device_constant_with_explicit_type():
    g, out = _constant("cpu", DeviceType())
    assert str(g).splitlines()[1] == '  %0 : Device = prim::Constant[value="cpu"]()'
    assert constant_value(out) == "cpu"


def test_tensor_constant():
    tensor = TensorConstant((1.0, 2.0), (2,), "Float")
    g, out = _constant(tensor)
    assert out.type() == TensorType("Float", (2,), None, False, "cpu")
    assert out.node.t("value") is tensor
    assert constant_value(out) is tensor
    assert "prim::Constant[value= 1  2 [ CPUFloatType{2} ]]()" in str(g)


def test_insert_constant_function_and_method_agree():
    g = Graph()
    a = insert_constant(g, 7)
    b = g.insert_constant(7)
    assert a.type() == b.type() == IntType()
    assert constant_value(a) == constant_value(b) == 7


def test_insert_constant_goes_to_the_insert_point():
    g = Graph()
    x = g.add_input("x")
    relu = g.insert("aten::relu", [x]).node
    with g.insert_point(relu):
        c = g.insert_constant(1)
    assert list(g.nodes()) == [c.node, relu]


def test_unsupported_constant_raises():
    g = Graph()
    with pytest.raises(TypeError, match="cannot make a constant"):
        g.insert_constant(object())


def test_non_constant_value_reads_as_not_constant():
    g = Graph()
    x = g.add_input("x")
    y = g.insert("aten::relu", [x])
    assert constant_value(x) is NOT_CONSTANT
    assert constant_value(y) is NOT_CONSTANT
    assert not NOT_CONSTANT


def test_function_constant_reads_as_not_constant():
    g = parse_ir(
        "graph(%x : Tensor):\n"
        '  %f : Function = prim::Constant[name="fallback"]()\n'
        "  return (%x)\n"
    )
    f = g.value_by_name("f")
    assert f.type() == FunctionType()
    assert constant_value(f) is NOT_CONSTANT


def test_constants_print_like_torch_insert_constant():
    import torch  # the oracle must be installed: fail, never skip
    values = [3, -2, 2.5, 1e-5, 0.1, True, False, "hi", 'a"b', None, [1, 2], [1.0, 2.5], [True, False], (1, "a"),
              float("inf")]
    tg = torch._C.Graph()
    g = Graph()
    for value in values:
        tg.insertConstant(value)
        g.insert_constant(value)
    assert str(g) == str(tg)
