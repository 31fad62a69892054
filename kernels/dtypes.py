"""PyTorch's dtypes and type promotion, on NumPy/CuPy dtypes.

PyTorch promotes differently from NumPy: operands fall into three tiers,
tensors with dimensions, zero-dimensional tensors and Python numbers, and a
lower tier only matters when its category (bool < integer < floating) is
higher. A Python float meeting an integer tensor gives the default dtype
(float32), not float64. :func:`result_dtype` implements that rule.
"""

from __future__ import annotations

from typing import Any

import numpy

__all__ = [
    "DEFAULT_FLOAT",
    "UnsupportedDtype",
    "unsupported_dtypes",
    "SCALAR_TYPES",
    "dtype_name",
    "result_dtype",
    "to_dtype",
    "is_floating",
    "is_integral",
    "scalar_type_index",
]

DEFAULT_FLOAT = numpy.dtype(numpy.float32)

# TorchScript ScalarType numbers (as ``dtype`` arguments carry them) and names.
SCALAR_TYPES: dict[int, tuple[str, Any]] = {
    0: ("Byte", numpy.uint8),
    1: ("Char", numpy.int8),
    2: ("Short", numpy.int16),
    3: ("Int", numpy.int32),
    4: ("Long", numpy.int64),
    5: ("Half", numpy.float16),
    6: ("Float", numpy.float32),
    7: ("Double", numpy.float64),
    9: ("ComplexFloat", numpy.complex64),
    10: ("ComplexDouble", numpy.complex128),
    11: ("Bool", numpy.bool_),
}
_BY_NAME = {name: numpy.dtype(dt) for name, dt in SCALAR_TYPES.values()}
_NAME_OF = {numpy.dtype(dt): name for name, dt in SCALAR_TYPES.values()}
_INDEX_OF = {name: index for index, (name, _) in SCALAR_TYPES.items()}


# ScalarTypes NumPy and CuPy have no dtype for, by number.
_NO_ARRAY_DTYPE = {8: "ComplexHalf", 12: "QInt8", 13: "QUInt8", 14: "QInt32", 15: "BFloat16",
                   23: "Float8_e5m2", 24: "Float8_e4m3fn"}


def unsupported_dtypes() -> list[str]:
    """The ScalarTypes gradview refuses, by name (BFloat16, ComplexHalf...)."""
    return list(_NO_ARRAY_DTYPE.values())


class UnsupportedDtype(ValueError):
    """A dtype gradview's arrays cannot hold: one line naming it."""


def to_dtype(scalar_type: int | str) -> numpy.dtype:
    """A NumPy dtype for a TorchScript ScalarType number or name (CuPy shares them)."""
    found = _BY_NAME.get(scalar_type) if isinstance(scalar_type, str) else SCALAR_TYPES.get(scalar_type)
    if found is None:
        name = scalar_type if isinstance(scalar_type, str) else _NO_ARRAY_DTYPE.get(scalar_type, "unknown")
        raise UnsupportedDtype(
            f"gradview does not run {name} tensors (ScalarType {scalar_type}): NumPy has no such dtype"
        )
    return numpy.dtype(found if isinstance(scalar_type, str) else found[1])


def dtype_name(dtype: Any) -> str:
    """TorchScript's name ("Float", "Long"...) for an array dtype."""
    return _NAME_OF[numpy.dtype(dtype)]


def scalar_type_index(dtype: Any) -> int:
    return _INDEX_OF[dtype_name(dtype)]


def is_floating(dtype: Any) -> bool:
    return numpy.dtype(dtype).kind in "fc"


def is_integral(dtype: Any) -> bool:
    return numpy.dtype(dtype).kind in "iub"


def _category(dtype: numpy.dtype) -> int:
    kind = dtype.kind
    return 0 if kind == "b" else 1 if kind in "iu" else 2 if kind == "f" else 3


def _promote(a: numpy.dtype | None, b: numpy.dtype | None) -> numpy.dtype | None:
    """torch.promote_types: across categories the higher category's dtype wins
    (int64 + float32 is float32, unlike NumPy); within one, the wider type."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == cb:
        return numpy.promote_types(a, b)
    if max(ca, cb) == 3:
        wide = numpy.dtype(numpy.float64) in (a, b) or numpy.dtype(numpy.complex128) in (a, b)
        return numpy.dtype(numpy.complex128 if wide else numpy.complex64)
    return a if ca > cb else b


def _combine(higher: numpy.dtype | None, lower: numpy.dtype | None) -> numpy.dtype | None:
    """c10's combine_categories: the lower tier wins only with a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(lower) > _category(higher):
        return _promote(higher, lower)
    return higher


def _scalar_dtype(value: Any) -> numpy.dtype:
    if isinstance(value, bool):
        return numpy.dtype(numpy.bool_)
    if isinstance(value, int):
        return numpy.dtype(numpy.int64)
    if isinstance(value, complex):
        return numpy.dtype(numpy.complex64)
    return DEFAULT_FLOAT


def result_dtype(*operands: Any) -> numpy.dtype:
    """The dtype PyTorch computes for an elementwise op on ``operands``.

    Operands are arrays (tensors) or Python numbers; ``None`` is ignored.
    """
    dims: numpy.dtype | None = None
    zeros: numpy.dtype | None = None
    wrapped: numpy.dtype | None = None
    for operand in operands:
        if operand is None:
            continue
        dtype = getattr(operand, "dtype", None)
        if dtype is None:
            wrapped = _promote(wrapped, _scalar_dtype(operand))
        elif operand.ndim == 0:
            zeros = _promote(zeros, dtype)
        else:
            dims = _promote(dims, dtype)
    result = _combine(dims, _combine(zeros, wrapped))
    return result if result is not None else DEFAULT_FLOAT
