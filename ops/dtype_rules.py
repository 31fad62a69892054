"""PyTorch's type promotion on dtype *names*, for passes that reason about types.

:mod:`gradview.kernels.dtypes` promotes real arrays; shape inference only has
types such as ``Double(3, 4)`` or ``int``, so this module redoes the same rule
on TorchScript's dtype names ("Float", "Long"...).

An operand of an elementwise op sits in one of three tiers:

* ``DIM``: a tensor with at least one dimension;
* ``ZERO_DIM``: a zero-dimensional tensor;
* ``WRAPPED``: a Python number (``int``/``float``/``bool`` input), or a
  zero-dimensional tensor constant that tracing made from one.

The result is the promotion of the highest tier present, except that a lower
tier wins when its *category* (bool < integer < floating < complex) is
higher: ``Long(3) + 1.5`` is ``Float`` (the default dtype), ``Int(3) + 2`` stays
``Int``, ``Int(3) + Double()`` (0-dim) is ``Double``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import product

from gradview.ir.types import SCALAR_TYPE_NAMES

__all__ = [
    "DEFAULT_FLOAT",
    "DIM",
    "ZERO_DIM",
    "WRAPPED",
    "Operand",
    "category",
    "is_floating",
    "is_integral",
    "promote_types",
    "result_type",
    "scalar_type_name",
    "to_float",
    "accumulate_type",
]

DEFAULT_FLOAT = "Float"
DIM, ZERO_DIM, WRAPPED = 0, 1, 2

_BOOL, _INTEGER, _FLOATING, _COMPLEX = 0, 1, 2, 3
_INTEGERS = {"Byte": (8, False), "Char": (8, True), "Short": (16, True), "Int": (32, True),
             "Long": (64, True), "UInt16": (16, False), "UInt32": (32, False), "UInt64": (64, False)}
_BARE_UNSIGNED = frozenset({"UInt16", "UInt32", "UInt64"})
_FLOATS = {"Half": 16, "BFloat16": 16, "Float": 32, "Double": 64}
_COMPLEX_PARTS = {"ComplexHalf": "Half", "ComplexFloat": "Float", "ComplexDouble": "Double"}
_COMPLEX_OF = {part: name for name, part in _COMPLEX_PARTS.items()}


@dataclass(frozen=True, slots=True)
class Operand:
    """One input of an elementwise op: its dtype name (None: unknown) and tier.

    ``tier`` None means a tensor of unknown rank (DIM or ZERO_DIM).
    """

    dtype: str | None
    tier: int | None


def scalar_type_name(index: int) -> str | None:
    """The dtype name of a ``ScalarType`` number (as ``dtype=`` arguments carry it)."""
    return SCALAR_TYPE_NAMES[index] if 0 <= index < len(SCALAR_TYPE_NAMES) else None


def category(dtype: str) -> int:
    if dtype == "Bool":
        return _BOOL
    if dtype in _INTEGERS:
        return _INTEGER
    if dtype in _FLOATS or dtype.startswith("Float8"):
        return _FLOATING
    return _COMPLEX


def is_floating(dtype: str) -> bool:
    """Floating or complex: the dtypes autograd differentiates."""
    return category(dtype) >= _FLOATING


def is_integral(dtype: str, include_bool: bool = True) -> bool:
    cat = category(dtype)
    return cat == _INTEGER or (include_bool and cat == _BOOL)


def to_float(dtype: str) -> str:
    """``dtype`` for ops that compute in floating point (``sin``, true division):
    integers and bools become the default float, floats stay."""
    return dtype if is_floating(dtype) else DEFAULT_FLOAT


def accumulate_type(dtype: str) -> str:
    """The CPU accumulation dtype (``at::acc_type``): Half and BFloat16 widen to Float."""
    return "Float" if dtype in ("Half", "BFloat16") else dtype


def _promote_integers(a: str, b: str) -> str:
    (bits_a, signed_a), (bits_b, signed_b) = _INTEGERS[a], _INTEGERS[b]
    if signed_a == signed_b:
        return a if bits_a >= bits_b else b
    signed, unsigned = (a, b) if signed_a else (b, a)
    if _INTEGERS[signed][0] > _INTEGERS[unsigned][0]:
        return signed
    # uint8 meets int8: int16, as torch.promote_types does.
    return "Short" if unsigned == "Byte" else "Long"


def _promote_floats(a: str, b: str) -> str:
    if {a, b} == {"Half", "BFloat16"}:
        return "Float"
    return a if _FLOATS.get(a, 0) >= _FLOATS.get(b, 0) else b


def promote_types(a: str | None, b: str | None) -> str | None:
    """``torch.promote_types`` on names; None (unknown) is absorbing."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if (a in _BARE_UNSIGNED and cb != _FLOATING) or (b in _BARE_UNSIGNED and ca != _FLOATING):
        return None  # PyTorch refuses to promote uint16/32/64 with other non-floats
    if ca != cb and _COMPLEX not in (ca, cb):
        return a if ca > cb else b
    if ca == cb == _INTEGER:
        return _promote_integers(a, b)
    if ca == cb == _FLOATING:
        return _promote_floats(a, b)
    # Complex with anything: the complex type whose parts hold both real parts.
    parts = [_real_part(d) for d in (a, b) if _real_part(d) is not None]
    part = parts[0] if len(parts) == 1 else _promote_floats(parts[0], parts[1])
    return _COMPLEX_OF.get(part, "ComplexDouble")


def _real_part(dtype: str) -> str | None:
    if dtype in _COMPLEX_PARTS:
        return _COMPLEX_PARTS[dtype]
    return dtype if category(dtype) == _FLOATING else None


def _combine_categories(higher: str | None, lower: str | None) -> str | None:
    """c10's ``combine_categories``: the lower tier counts only with a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = category(higher), category(lower)
    if ch == _COMPLEX:
        return higher
    if cl == _COMPLEX:
        return _COMPLEX_OF.get(higher, lower) if ch == _FLOATING else lower
    if ch == _FLOATING:
        return higher
    if higher == "Bool" or cl == _FLOATING:
        return promote_types(higher, lower)
    return higher


def _result_known(operands: Iterable[tuple[str, int]]) -> str:
    tiers: list[str | None] = [None, None, None]
    for dtype, tier in operands:
        if tier == WRAPPED:
            # A Python float counts as the default dtype, not as Double.
            cat = category(dtype)
            dtype = DEFAULT_FLOAT if cat == _FLOATING else "ComplexFloat" if cat == _COMPLEX else dtype
        current = tiers[tier]
        tiers[tier] = dtype if current is None else promote_types(current, dtype)
    result = _combine_categories(tiers[DIM], _combine_categories(tiers[ZERO_DIM], tiers[WRAPPED]))
    return result if result is not None else DEFAULT_FLOAT


def result_type(operands: Sequence[Operand]) -> str | None:
    """``torch.result_type`` over ``operands``; None when it depends on something unknown.

    A tensor of unknown rank is tried in both tensor tiers: if every choice
    gives the same dtype, that is the answer. An operand of unknown dtype
    makes the result unknown unless a floating tensor with dimensions decides
    it anyway (a Python number can then only matter if it is complex, which
    TorchScript's ``Scalar`` inputs of unknown kind are not assumed to be).
    """
    known = [op for op in operands if op.dtype is not None]
    unknown = [op for op in operands if op.dtype is None]
    if unknown:
        dims = [op.dtype for op in known if op.tier == DIM]
        if any(op.tier != WRAPPED for op in unknown) or not dims:
            return None
        dim_result: str | None = dims[0]
        for dtype in dims[1:]:
            dim_result = promote_types(dim_result, dtype)
        if dim_result is None or category(dim_result) != _FLOATING:
            return None
    open_tiers = [i for i, op in enumerate(known) if op.tier is None]
    answers: set[str] = set()
    for choice in product((DIM, ZERO_DIM), repeat=len(open_tiers)):
        tiers = [op.tier for op in known]
        for index, tier in zip(open_tiers, choice, strict=True):
            tiers[index] = tier
        answers.add(_result_known((op.dtype, t) for op, t in zip(known, tiers, strict=True)))  # type: ignore[misc]
        if len(answers) > 1:
            return None
    return answers.pop() if answers else DEFAULT_FLOAT
