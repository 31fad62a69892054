"""Types: TorchScript spellings, equality, subtyping and requires_grad."""

from __future__ import annotations

import pytest

from gradview.ir import (
    TENSOR,
    BoolType,
    DeviceType,
    DictType,
    FloatType,
    FunctionType,
    Graph,
    IntType,
    ListType,
    NoneType,
    NumberType,
    OptionalType,
    StringType,
    TensorType,
    TupleType,
    parse_type,
)

# -- TensorType printing --------------------------------------------------------


def test_complete_tensor_type_prints_sizes_strides_grad_and_device():
    t = TensorType("Float", (3, 4), (4, 1), True, "cpu")
    assert str(t) == "Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu)"


def test_tensor_type_with_only_requires_grad_prints_it_in_parens():
    assert str(TensorType(requires_grad=False)) == "Tensor(requires_grad=0)"


def test_unknown_sizes_print_as_stars():
    assert str(TensorType("Double", (None, 2))) == "Double(*, 2)"


def test_zero_dim_tensor_prints_empty_parens():
    assert str(TensorType("Float", ())) == "Float()"


def test_unrefined_tensor_prints_tensor():
    assert str(TENSOR) == "Tensor"
    assert str(TensorType()) == "Tensor"


def test_dtype_without_rank_prints_dtype_tensor():
    assert str(TensorType("Float", None)) == "FloatTensor"
    assert str(TensorType("Float", None, requires_grad=True)) == "FloatTensor(requires_grad=1)"


def test_partial_strides_are_not_printed():
    assert str(TensorType("Float", (2, 3), (None, 1))) == "Float(2, 3)"


def test_undefined_tensor_prints_marker():
    assert str(TensorType(undefined=True)) == "Tensor[Undefined]"


def test_device_without_sizes():
    assert str(TensorType(requires_grad=True, device="cuda:0")) == "Tensor(requires_grad=1, device=cuda:0)"


# -- other types ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "text"),
    [
        (IntType(), "int"),
        (FloatType(), "float"),
        (BoolType(), "bool"),
        (StringType(), "str"),
        (NoneType(), "NoneType"),
        (DeviceType(), "Device"),
        (FunctionType(), "Function"),
        (NumberType(), "Scalar"),
        (ListType(IntType()), "int[]"),
        (ListType(FloatType()), "float[]"),
        (ListType(TENSOR), "Tensor[]"),
        (ListType(BoolType()), "bool[]"),
        (OptionalType(IntType()), "int?"),
        (OptionalType(TENSOR), "Tensor?"),
        (OptionalType(ListType(IntType())), "int[]?"),
        (ListType(OptionalType(TENSOR)), "Tensor?[]"),
        (TupleType((IntType(), TENSOR)), "(int, Tensor)"),
        (TupleType((IntType(), TupleType((FloatType(), StringType())))), "(int, (float, str))"),
        (TupleType(()), "()"),
        (DictType(StringType(), TENSOR), "Dict(str, Tensor)"),
    ],
)
def test_type_prints_like_torchscript(type_, text):
    assert str(type_) == text


# Spellings of scalar, list and optional types: parse_type round-trips them and torch prints them as is.
SIMPLE_TYPE_TEXTS = [
    "int",
    "float",
    "bool",
    "str",
    "NoneType",
    "int[]",
    "float[]",
    "Tensor[]",
    "bool[]",
    "int?",
    "Tensor?",
]


@pytest.mark.parametrize(
    "text",
    [
        "Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu)",
        "Tensor(requires_grad=0)",
        "Double(*, 2)",
        "Float()",
        *SIMPLE_TYPE_TEXTS,
        "(int, Tensor)",
        "Device",
        "Function",
        "Dict(str, Tensor)",
    ],
)
def test_parse_type_round_trips(text):
    assert str(parse_type(text)) == text


def test_parse_type_builds_the_expected_tensor_type():
    assert parse_type("Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu)") == TensorType(
        "Float", (3, 4), (4, 1), True, "cpu"
    )


def test_types_are_hashable_and_compare_by_value():
    assert ListType(IntType()) == ListType(IntType())
    assert hash(TupleType((IntType(), TENSOR))) == hash(TupleType((IntType(), TENSOR)))
    assert OptionalType(IntType()) != OptionalType(FloatType())
    assert len({TensorType("Float", (2,)), TensorType("Float", (2,)), TENSOR}) == 2


def test_tensor_type_rank_and_completeness():
    full = TensorType("Float", (3, 4), (4, 1), False, "cpu")
    assert full.rank == 2 and full.is_complete()
    assert TensorType("Float", (None, 4)).rank == 2
    assert not TensorType("Float", (None, 4)).is_complete()
    assert TENSOR.rank is None


def test_dimensioned_only_forgets_sizes_and_strides():
    full = TensorType("Float", (3, 4), (4, 1), True, "cpu")
    assert str(full.dimensioned_only()) == "Float(*, *, requires_grad=1, device=cpu)"


def test_contains_tensor_looks_into_containers():
    assert TupleType((IntType(), ListType(TENSOR))).contains_tensor()
    assert OptionalType(TENSOR).contains_tensor()
    assert not ListType(IntType()).contains_tensor()


def test_subtyping_of_refined_tensors_and_optionals():
    refined = TensorType("Float", (2,))
    assert refined.is_subtype_of(TENSOR)
    assert not TENSOR.is_subtype_of(refined)
    assert NoneType().is_subtype_of(OptionalType(IntType()))
    assert IntType().is_subtype_of(OptionalType(IntType()))
    assert IntType().is_subtype_of(NumberType())
    assert not StringType().is_subtype_of(NumberType())
    assert not BoolType().is_subtype_of(NumberType())
    assert ListType(refined).is_subtype_of(ListType(TENSOR))
    assert not ListType(IntType()).is_subtype_of(ListType(FloatType()))


# -- requires_grad -----------------------------------------------------------------


def _input_of(type_):
    return Graph().add_input("v", type_)


def test_tensor_with_unknown_requires_grad_may_require_grad():
    assert _input_of(TENSOR).requires_grad() is True
    assert TENSOR.requires_grad_or_true is True


def test_tensor_with_requires_grad_false_does_not():
    assert _input_of(TensorType("Float", (2,), requires_grad=False)).requires_grad() is False


def test_tensor_with_requires_grad_true_does():
    assert _input_of(TensorType("Float", (2,), requires_grad=True)).requires_grad() is True


def test_non_tensor_values_do_not_require_grad():
    for type_ in (IntType(), FloatType(), BoolType(), ListType(IntType()), NoneType()):
        assert _input_of(type_).requires_grad() is False


def test_containers_of_tensors_may_require_grad_like_torchscript():
    # c10::Type::requires_grad asks the contained types.
    assert _input_of(ListType(TENSOR)).requires_grad() is True
    assert _input_of(OptionalType(TENSOR)).requires_grad() is True
    assert _input_of(TupleType((TENSOR, IntType()))).requires_grad() is True
    no_grad = TensorType("Float", (2,), requires_grad=False)
    assert _input_of(TupleType((no_grad, IntType()))).requires_grad() is False


# -- cross-check with torch ----------------------------------------------------------

TORCH_PRINTED_TYPES = [
    "Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu)",
    "Double(*, 2)",
    "Float()",
    "Float(2, 3)",
    "Long(5, strides=[1], requires_grad=0, device=cpu)",
    "Float(*, *, requires_grad=0, device=cpu)",
    "Float(requires_grad=1, device=cpu)",
    "Tensor",
    *SIMPLE_TYPE_TEXTS,
    "int[]?",
    "Tensor?[]",
    "(int, Tensor)",
    "(int, (float, str))",
    "Device",
    "Dict(str, Tensor)",
    "Scalar",
]


@pytest.mark.parametrize("text", TORCH_PRINTED_TYPES)
def test_type_text_matches_torch(text):
    import torch  # the oracle must be installed: fail, never skip
    graph = torch._C.parse_ir(f"graph(%x : {text}):\n  return (%x)\n")
    header = str(graph).splitlines()[0]
    prefix, suffix = "graph(%x : ", "):"
    assert header.startswith(prefix) and header.endswith(suffix)
    torch_text = header[len(prefix) : -len(suffix)]
    assert str(parse_type(text)) == torch_text


@pytest.mark.parametrize(
    "text",
    [
        "Tensor",
        "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)",
        "Float(3, strides=[1], requires_grad=1, device=cpu)",
        "Tensor[]",
        "Tensor?",
        "(Tensor, int)",
        "int",
        "int[]",
    ],
)
def test_requires_grad_matches_torch(text):
    import torch  # the oracle must be installed: fail, never skip
    torch_value = next(iter(torch._C.parse_ir(f"graph(%x : {text}):\n  return (%x)\n").inputs()))
    assert _input_of(parse_type(text)).requires_grad() is torch_value.requires_grad()
