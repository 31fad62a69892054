"""Type promotion on dtype names against torch.promote_types and torch.result_type."""

from __future__ import annotations

import itertools

import pytest
import torch

from gradview.ops.dtype_rules import (
    DIM,
    WRAPPED,
    ZERO_DIM,
    Operand,
    promote_types,
    result_type,
    scalar_type_name,
    to_float,
)

DTYPES = {
    "Byte": torch.uint8, "Char": torch.int8, "Short": torch.int16, "Int": torch.int32,
    "Long": torch.int64, "Half": torch.half, "BFloat16": torch.bfloat16, "Float": torch.float,
    "Double": torch.double, "ComplexHalf": torch.complex32, "ComplexFloat": torch.complex64,
    "ComplexDouble": torch.complex128, "Bool": torch.bool, "UInt16": torch.uint16,
    "UInt32": torch.uint32, "UInt64": torch.uint64,
}
NAMES = {v: k for k, v in DTYPES.items()}


@pytest.mark.parametrize("a", list(DTYPES))
def test_promote_types_matches_torch(a):
    for b in DTYPES:
        try:
            expected = NAMES[torch.promote_types(DTYPES[a], DTYPES[b])]
        except RuntimeError:
            expected = None  # PyTorch refuses (uint16 with int8...)
        assert promote_types(a, b) == expected, (a, b)


COMMON = ["Bool", "Byte", "Char", "Int", "Long", "Half", "Float", "Double", "ComplexFloat"]
SCALARS = {"int": (3, "Long"), "float": (2.5, "Double"), "bool": (True, "Bool"), "complex": (1j, "ComplexDouble")}


def _operand(kind: str, dtype: str):
    if kind == "dim":
        return torch.ones(2, dtype=DTYPES[dtype]), Operand(dtype, DIM)
    return torch.ones((), dtype=DTYPES[dtype]), Operand(dtype, ZERO_DIM)


@pytest.mark.parametrize(("kind_a", "kind_b"), [("dim", "dim"), ("dim", "zero"), ("zero", "zero")])
def test_result_type_of_tensors_matches_torch(kind_a, kind_b):
    for a, b in itertools.product(COMMON, COMMON):
        ta, oa = _operand(kind_a, a)
        tb, ob = _operand(kind_b, b)
        expected = NAMES[torch.result_type(ta, tb)]
        assert result_type([oa, ob]) == expected, (kind_a, a, kind_b, b)


@pytest.mark.parametrize("kind", ["dim", "zero"])
@pytest.mark.parametrize("scalar", list(SCALARS))
def test_result_type_with_python_numbers_matches_torch(kind, scalar):
    value, dtype = SCALARS[scalar]
    for a in COMMON:
        tensor, operand = _operand(kind, a)
        expected = NAMES[torch.result_type(tensor, value)]
        assert result_type([operand, Operand(dtype, WRAPPED)]) == expected, (kind, a, scalar)


def test_unknown_rank_is_tried_both_ways():
    # Float beside Double: a 0-dim Double would lose, a dimensioned one would win.
    assert result_type([Operand("Float", DIM), Operand("Double", None)]) is None
    # Same category either way: the dimensioned tensor decides.
    assert result_type([Operand("Float", DIM), Operand("Long", None)]) == "Float"
    assert result_type([Operand("Int", None), Operand("Int", None)]) == "Int"


def test_unknown_dtypes():
    assert result_type([Operand(None, DIM), Operand("Float", DIM)]) is None
    # A number of unknown kind cannot change a floating tensor's dtype.
    assert result_type([Operand("Double", DIM), Operand(None, WRAPPED)]) == "Double"
    assert result_type([Operand("Long", DIM), Operand(None, WRAPPED)]) is None


def test_helpers():
    assert scalar_type_name(6) == "Float" and scalar_type_name(4) == "Long" and scalar_type_name(99) is None
    assert to_float("Long") == "Float" and to_float("Bool") == "Float" and to_float("Half") == "Half"
