"""TorchScript's lists, tuples, strings, printing and prim ops on non-tensor values
(the kernels of :mod:`gradview.ops.containers`).

Like :mod:`.scalar_math`, whose int64 helpers they share, these kernels take
and return plain Python values and follow TorchScript's C++ kernels
(``register_prim_ops.cpp``):

* lists and strings: ``len``, indexing, slicing, ``+`` and ``*``, ``split``,
  ``join``, ``in``, ``sum`` of a list (``sum.int`` wraps at 32 bits, as
  PyTorch accumulates in a C++ ``int``), the ``range`` helpers of scripted
  loops, and the list methods (``append``, ``pop``...), which mutate the list
  in place as TorchScript's do.
* ``format``, ``str`` and ``prim::Print`` write values as TorchScript prints
  IValues: ``1.0`` as ``1.``, other floats with 17 significant digits,
  strings inside lists unquoted. Arrays print as NumPy prints them followed
  by PyTorch's type line (``[ CPUFloatType{2} ]``), not in PyTorch's layout.
* ``prim::TupleSlice`` (TupleConstruct, TupleUnpack and TupleIndex compile
  to plain Python in the interpreter; TupleSlice has no schema and is bound
  under its kind, taking its bounds as the ``beg``/``end`` attributes or as
  two int inputs).
* prims: an array's ``device``/``dtype``/``shape``, ``NumToTensor`` and
  back, ``prim::abs``, and ``prim::min``/``prim::max``, which are
  ``a < b ? a : b`` and ``a > b ? a : b`` (so NaN handling follows the
  argument order, as in TorchScript).

Strings are sequences of characters, as in Python: TorchScript's ``len``,
indexing and slicing count UTF-8 bytes, so they agree on ASCII text only.

Ops without a schema in :mod:`gradview.ir.builtin_schemas` (``prim::*``,
and list methods such as ``aten::append``) are bound (in ``gradview.ops.containers``)
under their bare kind, the key the interpreter looks up; list methods are also
bound under TorchScript's overload name (``aten::append.t``) for when their schema
is added.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy

from .dtypes import dtype_name, scalar_type_index
from .protocol import KernelError
from .scalar_math import _I64_MIN, _INF, _is_int, _item, _wrap, _wrap32

__all__ = ["format_value"]


# -- lists and strings ----------------------------------------------------------------
def len_(xp: Any, a: Any) -> int:
    return len(a)


def len_tensor(xp: Any, a: Any) -> int:
    if a.ndim == 0:
        raise KernelError("len() of a 0-d tensor")
    return int(a.shape[0])


def getitem(xp: Any, a: list[Any], index: int) -> Any:
    try:
        return a[index]
    except IndexError:
        raise KernelError(f"list index {index} is out of range for a list of length {len(a)}") from None


def getitem_str(xp: Any, a: str, index: int) -> str:
    try:
        return a[index]
    except IndexError:
        raise KernelError(f"string index {index} is out of range for a string of length {len(a)}") from None


def contains(xp: Any, a: list[Any], item: Any) -> bool:
    return any(x == item for x in a)  # no identity shortcut: nan is never found


def list_(xp: Any, a: list[Any]) -> list[Any]:
    return list(a)


def list_str(xp: Any, a: str) -> list[str]:
    return list(a)


def add_list(xp: Any, a: list[Any], b: list[Any]) -> list[Any]:
    return a + b


def add_str(xp: Any, a: str, b: str) -> str:
    return a + b


def mul_list(xp: Any, a: list[Any], n: int) -> list[Any]:
    return a * n


def mul_list_right(xp: Any, n: int, a: list[Any]) -> list[Any]:
    return a * n


def _slice(a: Any, start: int | None, end: int | None, step: int) -> Any:
    if step == 0:
        raise KernelError("List slice should have non-zero step")
    return a[start:end:step]


def slice_list(xp: Any, a: list[Any], start: int | None = None, end: int | None = None, step: int = 1) -> list[Any]:
    return _slice(a, start, end, step)


def slice_str(xp: Any, a: str, start: int | None = None, end: int | None = None, step: int = 1) -> str:
    return _slice(a, start, end, step)


_WHITESPACE = " \t\n\r\v\f"
_WHITESPACE_RUN = re.compile(f"[{re.escape(_WHITESPACE)}]+")


def split_str(xp: Any, a: str, separator: str | None = None, max: int = -1) -> list[str]:  # schema name
    if separator is None:
        # TorchScript splits on every run of blanks and ignores ``max`` here.
        stripped = a.strip(_WHITESPACE)
        return _WHITESPACE_RUN.split(stripped) if stripped else []
    if not separator:
        raise KernelError("ValueError: empty separator")
    return a.split(separator, max)


def sum_int(xp: Any, a: list[int]) -> int:
    # PyTorch accumulates in a C++ int: the sum wraps at 32 bits.
    return _wrap32(sum(a))


def sum_float(xp: Any, a: list[float]) -> float:
    return float(sum(a, 0.0))


def sum_bool(xp: Any, a: list[bool]) -> int:
    return int(sum(a))


def range_length(xp: Any, lo: int, hi: int, step: int) -> int:
    if step == 0:
        raise KernelError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))


def derive_index(xp: Any, index: int, start: int, step: int) -> int:
    return _wrap(start + index * step)


# List methods (TorchScript's ``.t`` overloads): they mutate the list in place.
def append(xp: Any, a: list[Any], item: Any) -> list[Any]:
    """Appends in place (other values holding the list see it) and returns the list."""
    a.append(item)
    return a


def set_item(xp: Any, a: list[Any], index: int, item: Any) -> list[Any]:
    try:
        a[index] = item
    except IndexError:
        raise KernelError(f"list index {index} is out of range for a list of length {len(a)}") from None
    return a


def extend(xp: Any, a: list[Any], other: list[Any]) -> None:
    a.extend(list(other))  # list(): extending a list with itself doubles it once


def insert(xp: Any, a: list[Any], index: int, item: Any) -> None:
    a.insert(index, item)


def pop(xp: Any, a: list[Any], index: int = -1) -> Any:
    if not a:
        raise KernelError("pop from empty list")
    try:
        return a.pop(index)
    except IndexError:
        raise KernelError(f"pop index {index} is out of range for a list of length {len(a)}") from None


def clear(xp: Any, a: list[Any]) -> None:
    a.clear()


def reverse(xp: Any, a: list[Any]) -> None:
    a.reverse()


def copy(xp: Any, a: list[Any]) -> list[Any]:
    return list(a)


def join(xp: Any, separator: str, values: list[str]) -> str:
    return separator.join(values)


# -- printing ----------------------------------------------------------------------
def _format_float(value: float) -> str:
    if value == value and abs(value) != _INF and value == int(value) and _I64_MIN <= value < -_I64_MIN:
        return f"{int(value)}."  # integral doubles print as "1." (and -0.0 as "0.")
    return "%.17g" % value  # noqa: UP031 - printf's %g is the format being reproduced


def _format_array(value: Any) -> str:
    device = "CUDA" if _device(value).startswith("cuda") else "CPU"
    shape = ",".join(str(int(s)) for s in value.shape)
    return f"{value}\n[ {device}{dtype_name(value.dtype)}Type{{{shape}}} ]"


def format_value(value: Any) -> str:
    """``value`` as TorchScript prints an IValue (``str()``, ``format``, ``print``)."""
    if value is None:
        return "None"
    if isinstance(value, numpy.generic):
        value = value.item()
    if isinstance(value, bool | str):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _format_array(value)
    return str(value)


def format_(xp: Any, template: str, *args: Any) -> str:
    """TorchScript's ``str.format``: each ``{}`` takes the next argument, other
    braces stay as they are, and unused arguments are ignored."""
    pieces = template.split("{}")
    if len(pieces) - 1 > len(args):
        raise KernelError(f"Too few arguments for format string: {template}")
    out = [pieces[0]]
    for arg, piece in zip(args, pieces[1:], strict=False):
        out.append(format_value(arg))
        out.append(piece)
    return "".join(out)


def str_(xp: Any, value: Any) -> str:
    return format_value(value)


def print_(xp: Any, *values: Any) -> None:
    print(" ".join(format_value(v) for v in values))


# -- prims -------------------------------------------------------------------------
def _device(value: Any) -> str:
    device = getattr(value, "device", "cpu")
    if isinstance(device, str):  # NumPy >= 2 arrays have device "cpu"
        return device
    return f"cuda:{device.id}"  # a CuPy device


def device(xp: Any, a: Any) -> str:
    return _device(a)


def is_cuda(xp: Any, a: Any) -> bool:
    return _device(a).startswith("cuda")


def dtype(xp: Any, a: Any) -> int:
    return scalar_type_index(a.dtype)


def requires_grad(xp: Any, a: Any) -> bool:
    return bool(getattr(a, "requires_grad", False))


def shape(xp: Any, a: Any) -> list[int]:
    return [int(s) for s in a.shape]


def num_to_tensor(xp: Any, a: Any) -> Any:
    """A 0-d array: bool -> bool, int -> int64, float -> float64 (as PyTorch wraps numbers)."""
    if isinstance(a, bool | numpy.bool_):
        return xp.asarray(a, dtype=xp.bool_)
    if _is_int(a):
        return xp.asarray(a, dtype=xp.int64)
    return xp.asarray(a, dtype=xp.float64)


def implicit_tensor_to_num(xp: Any, a: Any) -> Any:
    """A one-element tensor's value: int, float or bool by its dtype."""
    return _item(a)


def uninitialized(xp: Any) -> None:
    return None


def _list_less(a: list[Any], b: list[Any]) -> bool:
    """TorchScript's lexicographic ``a < b`` (the first unequal pair decides)."""
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x < y
    return len(a) < len(b)


_MISSING = object()


def _extreme(name: str, pick_first: Callable[[Any, Any], bool], pick: Callable[[list[Any]], Any]) -> Any:
    def kernel(xp: Any, a: Any, b: Any = _MISSING) -> Any:
        if b is _MISSING:
            if not a:
                raise KernelError(f"{name}() arg is an empty sequence")
            return pick(a)
        if isinstance(a, list):
            return a if pick_first(a, b) else b
        if not (_is_int(a) and _is_int(b)):
            a, b = float(a), float(b)
        return a if pick_first(a, b) else b

    kernel.__name__ = name
    return kernel


# min/max of two values: ``a < b ? a : b`` / ``a > b ? a : b``; of one list:
# the first element unless a later one is strictly smaller / larger.
prim_min = _extreme("min", lambda a, b: _list_less(a, b) if isinstance(a, list) else a < b, min)
prim_max = _extreme("max", lambda a, b: _list_less(b, a) if isinstance(a, list) else a > b, max)


def abs_(xp: Any, a: Any) -> Any:
    if hasattr(a, "dtype") and not isinstance(a, numpy.generic):
        return xp.absolute(a)
    return _wrap(abs(a)) if _is_int(a) else abs(a)


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
