"""Tuple prims that need a kernel: ``prim::TupleSlice``.

(TupleConstruct, TupleUnpack and TupleIndex compile to plain Python in the
interpreter.) TupleSlice has no schema; it is bound under its kind (in
``gradview.ops.containers``) and gets its bounds either as the ``beg``/``end``
attributes, which the interpreter passes as keyword arguments, or as two int inputs.
"""

from __future__ import annotations

from typing import Any

from .protocol import KernelError

__all__: list[str] = []


def tuple_slice(xp: Any, tup: Any, *bounds: Any, beg: Any = None, end: Any = None) -> tuple[Any, ...]:
    """``tup[beg:end]`` as a tuple (Python's slice rules for out-of-range bounds)."""
    if bounds:
        if len(bounds) != 2 or beg is not None or end is not None:
            raise KernelError(
                f"prim::TupleSlice takes its bounds as beg/end attributes or as two int inputs, got "
                f"{len(bounds)} extra inputs and beg={beg!r}, end={end!r}"
            )
        beg, end = bounds
    for name, value in (("beg", beg), ("end", end)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise KernelError(f"prim::TupleSlice: {name} must be an int, got {type(value).__name__} {value!r}")
    if not isinstance(tup, tuple | list):
        raise KernelError(f"prim::TupleSlice expects a tuple, got {type(tup).__name__}")
    return tuple(tup[beg:end])
