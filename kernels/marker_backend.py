"""A test backend that plays a GPU on the CPU, to catch arrays crossing mid-graph.

On a GPU, an array made with ``numpy`` where ``xp`` was meant (``numpy.zeros``
in the runtime, a result brought to the host between two graphs) is a silent
copy between host and device every step, or an error far from its cause.
This backend finds those places on any machine: its arrays are NumPy arrays
wrapped in :class:`DeviceArray`, a type that behaves as a CuPy array does
(``xp`` functions, operators, methods and NumPy's own functions keep it), and
that refuses to meet a plain ``numpy.ndarray``: mixing the two, or converting
one into the other implicitly (``numpy.asarray(device_array)``), raises
:class:`DeviceBoundaryError` naming the function and the line of code that
did it. ``MarkerBackend.to_device`` and ``to_host`` (and ``xp.asnumpy``, the
same thing as CuPy's) are the only places where the wrapper is put on or
taken off, so they are the only places arrays cross, as on a real device.

    backend = get_backend("marker")
    GraphExecutor(graph, backend="marker").run(inputs)  # fails loudly on a crossing
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy

from .backend import Backend

__all__ = ["DeviceArray", "DeviceBoundaryError", "MarkerBackend", "MarkerNamespace", "marker_backend"]


class DeviceBoundaryError(TypeError):
    """A host (plain NumPy) array showed up where a backend array must be, or the reverse."""


_HERE = os.path.abspath(__file__)
_NUMPY_DIR = os.path.dirname(os.path.abspath(numpy.__file__))


def _caller() -> str:
    """``file:line`` of the first frame outside this module and NumPy (who did it)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if name != _HERE and not name.startswith(_NUMPY_DIR):
            return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _crossing(value: numpy.ndarray, where: str) -> DeviceBoundaryError:
    return DeviceBoundaryError(
        f"a host array (numpy.ndarray, {value.dtype}{list(value.shape)}) was given to {where} "
        f"where a backend array must be, at {_caller()}: arrays move between host and device "
        "only at the user's edge (Backend.to_device / Backend.to_host); "
        "make it with the backend's xp, not numpy"
    )


def _unwrap(value: Any, where: str) -> Any:
    """The NumPy data inside ``value`` (recursing into lists, tuples and dicts);
    refuses plain ndarrays. NumPy scalars pass, as CuPy accepts them."""
    kind = type(value)
    if kind is DeviceArray:
        return value._data
    if kind is numpy.ndarray or isinstance(value, numpy.ndarray):
        raise _crossing(value, where)
    if kind is list or kind is tuple:
        items = [_unwrap(v, where) for v in value]
        return items if kind is list else tuple(items)
    if kind is dict:
        return {k: _unwrap(v, where) for k, v in value.items()}
    return value


def _wrap(value: Any) -> Any:
    """Results of NumPy back into DeviceArrays; NumPy scalars become 0-d arrays,
    as CuPy's reductions and 0-d arithmetic return 0-d arrays."""
    if isinstance(value, numpy.ndarray):
        return DeviceArray(value)
    if isinstance(value, numpy.generic):
        return DeviceArray(numpy.asarray(value))
    kind = type(value)
    if kind is tuple or kind is list:
        items = [_wrap(v) for v in value]
        return items if kind is list else tuple(items)
    return value


def _call(fn: Callable[..., Any], where: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a NumPy function on unwrapped arguments; ``out=`` arrays keep their wrapper."""
    out = kwargs.get("out")
    result = fn(*_unwrap(args, where), **_unwrap(kwargs, where))
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        for wrapper in outs:
            if type(wrapper) is DeviceArray and result is wrapper._data:
                return wrapper
    return _wrap(result)


class DeviceArray:
    """A NumPy array that plays a device array: see the module docstring."""

    __slots__ = ("_data",)
    __array_priority__ = 1000.0
    __hash__ = None  # type: ignore[assignment] - arrays are not hashable

    def __init__(self, data: numpy.ndarray) -> None:
        self._data = data

    # -- what NumPy asks of an array-like ------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> numpy.ndarray:
        raise DeviceBoundaryError(
            f"implicit conversion of a backend array ({self._data.dtype}{list(self._data.shape)}) "
            f"to a NumPy array, at {_caller()}: bring it to the host with Backend.to_host "
            "(as CuPy refuses numpy.asarray on a device array)"
        )

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _call(getattr(ufunc, method), f"numpy.{ufunc.__name__}", inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _call(func, f"numpy.{func.__name__}", args, kwargs)

    def __array_namespace__(self, api_version: Any = None) -> MarkerNamespace:
        return MARKER_XP

    # -- attributes and methods ----------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> numpy.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def strides(self) -> tuple[int, ...]:
        return self._data.strides

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def flags(self) -> Any:
        return self._data.flags

    @property
    def T(self) -> DeviceArray:  # ndarray's name
        return DeviceArray(self._data.T)

    @property
    def mT(self) -> DeviceArray:  # ndarray's name
        return DeviceArray(self._data.mT)

    @property
    def real(self) -> DeviceArray:
        return DeviceArray(self._data.real)

    @property
    def imag(self) -> DeviceArray:
        return DeviceArray(self._data.imag)

    @property
    def base(self) -> DeviceArray | None:
        base = self._data.base
        return DeviceArray(base) if isinstance(base, numpy.ndarray) else None

    def __getattr__(self, name: str) -> Any:
        # Dunders are never forwarded: __array_interface__, __dlpack__ or
        # __deepcopy__ would hand NumPy the host data behind the wrapper.
        if name == "_data" or name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._data, name)
        if not callable(attr):
            return _wrap(attr)
        where = f"ndarray.{name}"
        return lambda *args, **kwargs: _call(attr, where, args, kwargs)

    def get(self) -> numpy.ndarray:
        """CuPy's explicit copy to the host."""
        return self._data.copy()

    def __copy__(self) -> DeviceArray:
        return DeviceArray(self._data.copy())

    def __deepcopy__(self, memo: Any) -> DeviceArray:
        return DeviceArray(self._data.copy())

    def __getitem__(self, key: Any) -> Any:
        return _wrap(self._data[_unwrap(key, "ndarray.__getitem__")])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._data[_unwrap(key, "ndarray.__setitem__")] = _unwrap(value, "ndarray.__setitem__")

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Any:
        return (_wrap(row) for row in self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        return self._data.__index__()

    def __complex__(self) -> complex:
        return complex(self._data)

    def __repr__(self) -> str:
        return f"DeviceArray({self._data!r})"

    __str__ = __repr__


def _binary(ufunc: Any, reflected: bool = False, inplace: bool = False) -> Callable[..., Any]:
    where = f"numpy.{ufunc.__name__}"
    if inplace:
        return lambda self, other: _call(ufunc, where, (self, other), {"out": (self,)})
    if reflected:
        return lambda self, other: _call(ufunc, where, (other, self), {})
    return lambda self, other: _call(ufunc, where, (self, other), {})


_OPERATORS = {
    "add": numpy.add, "sub": numpy.subtract, "mul": numpy.multiply, "truediv": numpy.true_divide,
    "floordiv": numpy.floor_divide, "mod": numpy.remainder, "pow": numpy.power,
    "matmul": numpy.matmul, "and": numpy.bitwise_and, "or": numpy.bitwise_or,
    "xor": numpy.bitwise_xor, "lshift": numpy.left_shift, "rshift": numpy.right_shift,
}
for _name, _ufunc in _OPERATORS.items():
    setattr(DeviceArray, f"__{_name}__", _binary(_ufunc))
    setattr(DeviceArray, f"__r{_name}__", _binary(_ufunc, reflected=True))
    setattr(DeviceArray, f"__i{_name}__", _binary(_ufunc, inplace=True))
for _name, _ufunc in {
    "eq": numpy.equal, "ne": numpy.not_equal, "lt": numpy.less, "le": numpy.less_equal,
    "gt": numpy.greater, "ge": numpy.greater_equal,
}.items():
    setattr(DeviceArray, f"__{_name}__", _binary(_ufunc))
for _name, _ufunc in {
    "neg": numpy.negative, "pos": numpy.positive, "abs": numpy.absolute, "invert": numpy.invert,
}.items():
    setattr(DeviceArray, f"__{_name}__", lambda self, _u=_ufunc: _call(_u, f"numpy.{_u.__name__}", (self,), {}))
DeviceArray.__divmod__ = lambda self, other: _call(numpy.divmod, "numpy.divmod", (self, other), {})  # type: ignore[attr-defined]


class _Ufunc:
    """A NumPy ufunc whose arguments must be backend arrays. Keeps ``nin``,
    ``nout`` and ``signature``, which the interpreter reads to pick ``out=``."""

    def __init__(self, ufunc: Any) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout, self.signature = ufunc.nin, ufunc.nout, ufunc.signature
        self._where = f"xp.{ufunc.__name__}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._ufunc, self._where, args, kwargs)

    def __getattr__(self, name: str) -> Any:  # reduce, accumulate, outer, at
        if name.startswith("__"):
            raise AttributeError(name)
        method = getattr(self._ufunc, name)
        where = f"{self._where}.{name}"
        return lambda *args, **kwargs: _call(method, where, args, kwargs)


class MarkerNamespace:
    """``xp`` of the marker backend: NumPy's functions, on DeviceArrays only."""

    def __init__(self, module: ModuleType, prefix: str = "xp") -> None:
        self._module = module
        self._prefix = prefix
        self.ndarray = DeviceArray

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._module, name)
        where = f"{self._prefix}.{name}"
        if isinstance(attr, numpy.ufunc):
            found: Any = _Ufunc(attr)
        elif isinstance(attr, ModuleType):
            found = MarkerNamespace(attr, where)
        elif isinstance(attr, type) or not callable(attr):
            found = attr  # dtypes (xp.float32 is numpy.float32, as in CuPy), constants
        else:
            found = _function(attr, where)
        setattr(self, name, found)  # one object per name: ``call is xp.matmul`` holds
        return found

    def asnumpy(self, value: Any) -> Any:
        """CuPy's explicit copy to the host (``Tensor.numpy()`` uses it)."""
        return _to_host(value)

    def __repr__(self) -> str:
        return f"<marker backend namespace {self._prefix}>"


def _function(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return _call(fn, where, args, kwargs)

    call.__name__ = getattr(fn, "__name__", where)
    call.__qualname__ = where
    return call


MARKER_XP = MarkerNamespace(numpy)


def _to_host(value: Any) -> Any:
    if type(value) is DeviceArray:
        return value._data.copy()
    if isinstance(value, numpy.ndarray):
        raise DeviceBoundaryError(
            f"a host array (numpy.ndarray, {value.dtype}{list(value.shape)}) came out where the "
            f"backend's arrays come out, at {_caller()}: something made it with numpy instead of xp "
            "or brought it to the host before the user's edge"
        )
    if isinstance(value, list | tuple):
        items = [_to_host(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


@dataclass(frozen=True)
class MarkerBackend(Backend):
    """NumPy behind a device boundary: see the module docstring."""

    def to_device(self, value: Any) -> Any:
        """Host arrays (and those in lists and tuples) become DeviceArrays (copied, as an upload is)."""
        if isinstance(value, numpy.ndarray | numpy.generic):
            return DeviceArray(numpy.array(value))
        if isinstance(value, list):
            return [self.to_device(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.to_device(v) for v in value)
        return value

    def to_host(self, value: Any) -> Any:
        """DeviceArrays (and those in lists and tuples) back to NumPy; a plain
        ndarray here was made on the host mid-graph, and is refused."""
        return _to_host(value)

    def results_to_host(self, results: Any) -> list[Any]:
        return [_to_host(r) for r in results]


def marker_backend() -> MarkerBackend:
    """The marker backend (``get_backend("marker")`` returns the same one)."""
    return _MARKER


_MARKER = MarkerBackend("marker", MARKER_XP)  # type: ignore[arg-type]
