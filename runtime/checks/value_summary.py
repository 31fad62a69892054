"""Summaries of run-time values, as the viewer shows them beside the nodes.

A tensor gives its shape, dtype, min, max and mean (NaN and inf counted apart,
the statistics over the finite entries); anything else a short text.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any

import numpy

__all__ = ["MAX_ITEMS", "ValueSummary", "short_repr", "summarize_value"]

SHORT = reprlib.Repr()
SHORT.maxlist = SHORT.maxtuple = 6
SHORT.maxstring = 40
SHORT.maxother = 40
MAX_ITEMS = 32


def short_repr(value: Any) -> str:
    """A repr cut to a few items and characters."""
    return SHORT.repr(value)


@dataclass(frozen=True)
class ValueSummary:
    """What one value held: statistics for a tensor, a short text for anything else.

    ``kind`` is ``"tensor"``, ``"undefined"`` (None: an undefined tensor or a
    None optional), ``"scalar"``, ``"list"``, ``"tuple"`` or ``"other"``. For
    a tensor ``min``/``max``/``mean`` cover its finite entries (None when it
    has none); ``nan``/``inf`` count the others. ``times`` is how often the
    value was computed in the run (more than once in a loop body; the summary
    is of the last time). A list or tuple holding tensors has a summary per
    element in ``items`` (the first ``MAX_ITEMS``).
    """

    kind: str
    text: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    nan: int = 0
    inf: int = 0
    times: int = 1
    items: tuple[ValueSummary, ...] = ()


def summarize_value(value: Any, times: int = 1) -> ValueSummary:
    """A summary of one run-time value (array, Python value, list, None)."""
    if value is None:
        return ValueSummary("undefined", "undefined", times=times)
    if isinstance(value, numpy.ndarray | numpy.generic):
        return _summarize_array(numpy.asarray(value), times)
    if isinstance(value, bool | int | float | complex | str):
        return ValueSummary("scalar", SHORT.repr(value), times=times)
    if isinstance(value, list | tuple):
        kind = "list" if isinstance(value, list) else "tuple"
        if any(isinstance(v, numpy.ndarray) for v in value):
            items = tuple(summarize_value(v) for v in value[:MAX_ITEMS])
            shapes = ", ".join(f"{v.dtype}{list(v.shape)}" if isinstance(v, numpy.ndarray) else SHORT.repr(v) for v in value[:4])
            more = ", ..." if len(value) > 4 else ""
            return ValueSummary(kind, f"{kind} of {len(value)}: {shapes}{more}", times=times, items=items)
        return ValueSummary(kind, SHORT.repr(value), times=times)
    return ValueSummary("other", f"{type(value).__name__} {SHORT.repr(value)}", times=times)


def _summarize_array(array: numpy.ndarray, times: int) -> ValueSummary:
    shape = tuple(int(s) for s in array.shape)
    dtype = str(array.dtype)
    head = f"{dtype}{list(shape)}"
    if array.size == 0 or array.dtype.kind not in "biuf":
        return ValueSummary("tensor", head, shape, dtype, times=times)
    nan = inf = 0
    finite = array
    if array.dtype.kind == "f":
        mask = numpy.isfinite(array)
        if not mask.all():
            nan = int(numpy.isnan(array).sum())
            inf = int(array.size - mask.sum()) - nan
            finite = array[mask]
    if finite.size == 0:
        low = high = mean = None
    else:
        # bool and float16 statistics are taken in float64 (no overflow, a mean of a mask).
        wide = finite.astype(numpy.float64) if finite.dtype.kind == "b" else finite
        low, high = float(wide.min()), float(wide.max())
        mean = float(wide.mean(dtype=numpy.float64))
    text = head
    if low is not None:
        text += f" min {low:.4g} max {high:.4g} mean {mean:.4g}"
    if nan:
        text += f" nan {nan}"
    if inf:
        text += f" inf {inf}"
    return ValueSummary("tensor", text, shape, dtype, low, high, mean, nan, inf, times)


