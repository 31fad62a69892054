"""Comparing what two runs computed: flattened outputs, value against value, rows of a check.

Shared by ``b`` on TorchScript traces (:mod:`.divergence`) and on compiled
graphs (:mod:`.compiled_divergence`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from .result import CheckRow
from .value_summary import short_repr

__all__ = ["MISSING", "compare_rows", "compare_values", "flatten", "is_float"]

# A value a run did not compute (a gradient df does not return): its row fails as "not computed".
MISSING: Any = object()
_END = object()


def flatten(values: Sequence[Any]) -> list[Any]:
    """Values with tuples and lists unpacked (a pass may flatten a returned tuple)."""
    flat: list[Any] = []
    stack = [iter(values)]
    while stack:
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
        elif isinstance(value, list | tuple):
            stack.append(iter(value))
        else:
            flat.append(value)
    return flat


def is_float(value: Any) -> bool:
    """Is ``value`` a floating-point array (what a gradient is taken of)?"""
    return isinstance(value, numpy.ndarray) and value.dtype.kind == "f"


def _is_numeric(value: Any) -> bool:
    if isinstance(value, numpy.ndarray | numpy.generic):
        return value.dtype.kind in "biufc"
    return isinstance(value, bool | int | float | complex)


def compare_values(want: Any, got: Any, rtol: float, atol: float) -> tuple[float, float, str] | None:
    """None when ``got`` matches ``want`` within ``atol + rtol * |want|`` (NaN where NaN,
    inf where inf); else the largest absolute and relative errors and a short reason."""
    if not (_is_numeric(want) and _is_numeric(got)):
        if type(want) is type(got) and want == got:
            return None
        return math.nan, math.nan, f"{short_repr(got)} instead of {short_repr(want)}"
    a, b = numpy.asarray(want), numpy.asarray(got)
    if a.shape != b.shape:
        return math.nan, math.nan, f"shape {list(b.shape)} instead of {list(a.shape)}"
    if a.size == 0:
        return None
    a64 = a.astype(numpy.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else numpy.float64)
    b64 = b.astype(a64.dtype)
    same_special = (numpy.isnan(a64) & numpy.isnan(b64)) | (a64 == b64)  # nan where nan, inf where inf
    diff = numpy.where(same_special, 0.0, numpy.abs(a64 - b64))
    diff = numpy.where(numpy.isnan(diff), numpy.inf, diff)
    scale = numpy.abs(a64)
    if bool((diff <= atol + rtol * scale).all()):
        return None
    abs_error = float(diff.max())
    with numpy.errstate(divide="ignore", invalid="ignore"):
        rel = numpy.where(diff == 0, 0.0, diff / numpy.maximum(scale, numpy.abs(b64)))
    rel_error = float(numpy.nan_to_num(rel, nan=numpy.inf).max())
    return abs_error, rel_error, f"max abs error {abs_error:.3g}, max rel error {rel_error:.3g}"


def compare_rows(names: Sequence[str], wanted: Sequence[Any], got: Sequence[Any], rtol: float, atol: float) -> list[CheckRow]:
    """One row per name: ``got`` against ``wanted`` (an undefined gradient, None, is zeros;
    :data:`MISSING` fails as not computed). Single and half precision get looser tolerances."""
    rows = []
    for name, want, have in zip(names, wanted, got, strict=True):
        shape = tuple(want.shape) if isinstance(want, numpy.ndarray) else None
        if have is MISSING:
            rows.append(CheckRow(name, shape, math.nan, math.nan, "FAIL", note="not computed"))
            continue
        if have is None and isinstance(want, numpy.ndarray):
            have = numpy.zeros_like(want)  # an undefined gradient is zeros
        loose_rtol, loose_atol = _for_dtype(want, rtol, atol)
        diff = compare_values(want, have, loose_rtol, loose_atol)
        size = int(numpy.size(want)) if isinstance(want, numpy.ndarray) else 1
        if diff is None:
            rows.append(CheckRow(name, shape, 0.0, 0.0, "pass", size))
        else:
            rows.append(CheckRow(name, shape, diff[0], diff[1], "FAIL", size, note=diff[2]))
    return rows


def _for_dtype(value: Any, rtol: float, atol: float) -> tuple[float, float]:
    """Single and half precision round far sooner than double: looser tolerances."""
    if isinstance(value, numpy.ndarray) and value.dtype.kind == "f" and value.dtype.itemsize < 8:
        return max(rtol, 1e-4), max(atol, 1e-6)
    return rtol, atol
