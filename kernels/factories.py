"""Tensor factories: zeros, ones, full, arange, rand and randn.

``dtype`` arguments are TorchScript ScalarType numbers; ``None`` follows
PyTorch's inference: ``zeros``/``ones`` give the default float (float32),
``full`` takes its fill value's kind (bool -> bool, int -> int64, float ->
float32) and ``arange`` gives int64 when start, end and step are all ints and
float32 otherwise. Layout, device and pin_memory arguments are accepted and
ignored: arrays live on the backend that runs the graph (NumPy or CuPy).

``arange`` follows PyTorch's CPU kernel: element ``i`` is ``start + i * step``
computed in int64 for integer dtypes (with start and step truncated to
integers) and in float64 for floating ones, then rounded to the dtype. An
int64 result also checks and counts ``ceil((end - start) / step)`` with the
truncated numbers (``arange(0.5, 5, 1.7, dtype=int64)`` is ``[0, 1, 2, 3,
4]``); every other dtype counts with the numbers as given, in double
precision (``arange(0.5, 5, 1.7, dtype=int32)`` is ``[0, 1, 2]``).

``rand`` and ``randn`` (and kernels/casts.py's ``rand_like`` and ``randn_like``) draw from gradview's
seeded generator (kernels/dropout.py: the same values on every run of a graph),
so their values never match PyTorch's, only their shape, dtype and
distribution. All need a floating result dtype, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .c_math import fma
from .dropout import seeded_generator
from .dtypes import DEFAULT_FLOAT, is_floating, is_integral, result_dtype, to_dtype
from .protocol import KernelError

__all__: list[str] = []

_LONG = to_dtype("Long")
_BOOL = to_dtype("Bool")


def _size(op: str, size: Any) -> tuple[int, ...]:
    sizes = [size] if isinstance(size, int) else list(size)
    shape = tuple(int(s) for s in sizes)
    for index, s in enumerate(shape):
        if s < 0:
            raise KernelError(f"{op}: cannot create a tensor with negative dimension {s} (at index {index} of {list(shape)})")
    return shape


def _number(op: str, name: str, value: Any) -> Any:
    """A Scalar argument as a Python number (a 0-d array, from a traced graph, too)."""
    if hasattr(value, "shape"):
        if value.ndim != 0:
            raise KernelError(f"{op}: {name} must be a number, got a tensor of shape {list(value.shape)}")
        value = value.item()
    if isinstance(value, bool | int | float):
        return value
    raise KernelError(f"{op}: {name} must be a real number, got {type(value).__name__} {value!r}")


# -- zeros, ones, full -------------------------------------------------------------------
def zeros(
    xp: Any, size: Sequence[int], dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    out = DEFAULT_FLOAT if dtype is None else to_dtype(dtype)
    return xp.zeros(_size("zeros", size), dtype=out)


def ones(
    xp: Any, size: Sequence[int], dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    out = DEFAULT_FLOAT if dtype is None else to_dtype(dtype)
    return xp.ones(_size("ones", size), dtype=out)


def full(
    xp: Any, size: Sequence[int], fill_value: Any, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    value = _number("full", "fill_value", fill_value)
    out = result_dtype(value) if dtype is None else to_dtype(dtype)
    # Through a 0-d array: the cast wraps like C++'s (NumPy refuses -1 as uint8 otherwise).
    result = xp.empty(_size("full", size), dtype=out)
    result[...] = xp.asarray(value).astype(out)
    return result


def scalar_tensor(
    xp: Any, s: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` says."""
    value = _number("scalar_tensor", "s", s)
    out = DEFAULT_FLOAT if dtype is None else to_dtype(dtype)
    if not is_floating(out) and isinstance(value, float) and not math.isfinite(value):
        raise KernelError(f"scalar_tensor: {value} cannot be converted to {out}")
    return xp.asarray(value).astype(out)


# -- arange -------------------------------------------------------------------------------
def arange(
    xp: Any, end: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return _arange(xp, 0, end, 1, dtype)


def arange_start(
    xp: Any, start: Any, end: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return _arange(xp, start, end, 1, dtype)


def arange_start_step(
    xp: Any, start: Any, end: Any, step: Any = 1, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    return _arange(xp, start, end, step, dtype)


def _arange(xp: Any, start: Any, end: Any, step: Any, dtype: int | None) -> Any:
    numbers = [_number("arange", n, v) for n, v in (("start", start), ("end", end), ("step", step))]
    if dtype is not None:
        out = to_dtype(dtype)
    elif all(isinstance(v, int) for v in numbers):
        out = _LONG
    else:
        out = DEFAULT_FLOAT
    if out == _BOOL or not (is_integral(out) or is_floating(out)) or out.kind == "c":
        raise KernelError(f"arange: dtype {out} is not supported (PyTorch refuses bool and complex too)")
    if not all(math.isfinite(v) for v in numbers):
        raise KernelError(f"arange: unsupported range {numbers[0]} -> {numbers[1]} with step {numbers[2]}")
    # Values are start + i * step in PyTorch's CPU accumulate type: int64 for
    # integer dtypes (start and step truncated), float64 for floating ones.
    acc = _LONG if is_integral(out) else xp.float64
    lo, st = (int(v) if is_integral(out) else float(v) for v in (numbers[0], numbers[2]))
    if out == _LONG:
        # int64 checks and counts with the truncated bounds, in integer arithmetic.
        hi = int(numbers[1])
        _check_range(lo, hi, st)
        sign = 1 if st > 0 else -1
        count = (hi - lo + st - sign) // st
    else:
        # Every other dtype checks and counts with the numbers as given, in double.
        a, b, c = (float(v) for v in numbers)
        _check_range(a, b, c)
        count = math.ceil((b - a) / c)
    return (xp.arange(count, dtype=acc) * st + lo).astype(out, copy=False)


def _check_range(lo: float, hi: float, step: float) -> None:
    if step == 0:
        raise KernelError("arange: step must be nonzero")
    if (step > 0 and hi < lo) or (step < 0 and hi > lo):
        raise KernelError(
            f"arange: upper bound and lower bound inconsistent with step sign (start {lo}, end {hi}, step {step})"
        )


# -- random ---------------------------------------------------------------------------------
def _uniform(xp: Any, op: str, shape: Sequence[int], out: Any) -> Any:
    """Uniform on [0, 1): values rounding up to 1 in a narrower dtype are clamped below it."""
    shape = tuple(int(s) for s in shape)
    values = xp.asarray(seeded_generator(op, shape).random(shape)).astype(out)
    below_one = xp.nextafter(xp.ones((), dtype=out), xp.zeros((), dtype=out))
    return xp.minimum(values, below_one).astype(out, copy=False)


def _normal(xp: Any, op: str, shape: Sequence[int], out: Any) -> Any:
    shape = tuple(int(s) for s in shape)
    return xp.asarray(seeded_generator(op, shape).standard_normal(shape)).astype(out)


def _random_factory_dtype(op: str, dtype: int | None) -> Any:
    out = DEFAULT_FLOAT if dtype is None else to_dtype(dtype)
    if not is_floating(out) or out.kind == "c":
        raise KernelError(f"{op}: needs a floating-point result dtype, got {out} (pass a floating dtype)")
    return out


def rand(
    xp: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    return _uniform(xp, "rand", _size("rand", size), _random_factory_dtype("rand", dtype))


def randn(
    xp: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    return _normal(xp, "randn", _size("randn", size), _random_factory_dtype("randn", dtype))


# -- new_* (a tensor's dtype and device, new sizes), empty, eye ------------------------------
def _own_dtype(self: Any, dtype: int | None) -> Any:
    return self.dtype if dtype is None else to_dtype(dtype)


def new_zeros(
    xp: Any, self: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return xp.zeros(_size("new_zeros", size), dtype=_own_dtype(self, dtype))


def new_ones(
    xp: Any, self: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return xp.ones(_size("new_ones", size), dtype=_own_dtype(self, dtype))


def new_empty(
    xp: Any, self: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    """Zeros: PyTorch leaves an empty tensor's values undefined (only shape and dtype count)."""
    return xp.zeros(_size("new_empty", size), dtype=_own_dtype(self, dtype))


def new_full(
    xp: Any, self: Any, size: Any, fill_value: Any, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    """``fill_value`` in ``self``'s dtype unless ``dtype`` says (not the value's own kind, as ``full``)."""
    value = _number("new_full", "fill_value", fill_value)
    result = xp.empty(_size("new_full", size), dtype=_own_dtype(self, dtype))
    result[...] = xp.asarray(value).astype(result.dtype)
    return result


def empty(
    xp: Any, size: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    """Zeros: PyTorch leaves an empty tensor's values undefined (only shape and dtype count)."""
    return xp.zeros(_size("empty", size), dtype=DEFAULT_FLOAT if dtype is None else to_dtype(dtype))


def empty_permuted(
    xp: Any, size: Any, physical_layout: Sequence[int], dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    """Zeros of ``size`` (the physical layout orders memory only, which arrays here do not keep)."""
    shape = _size("empty_permuted", size)
    if sorted(int(d) for d in physical_layout) != list(range(len(shape))):
        raise KernelError(f"empty_permuted: physical_layout {list(physical_layout)} is not a permutation of "
                          f"{len(shape)} dims")
    return xp.zeros(shape, dtype=DEFAULT_FLOAT if dtype is None else to_dtype(dtype))


def empty_strided(
    xp: Any, size: Any, stride: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    """Zeros of ``size`` (strides are layout only, which arrays here do not keep)."""
    shape = _size("empty_strided", size)
    if len(list(stride)) != len(shape):
        raise KernelError(f"empty_strided: mismatch in length of strides and shape ({len(list(stride))} vs {len(shape)})")
    return xp.zeros(shape, dtype=DEFAULT_FLOAT if dtype is None else to_dtype(dtype))


def eye(
    xp: Any, n: int, dtype: int | None = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    return eye_m(xp, n, n, dtype)


def eye_m(
    xp: Any, n: int, m: int, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    if n < 0 or m < 0:
        raise KernelError(f"eye: n and m must be greater or equal to 0, got {n} and {m}")
    return xp.eye(int(n), int(m), dtype=DEFAULT_FLOAT if dtype is None else to_dtype(dtype))


# -- linspace, logspace --------------------------------------------------------------------------
def _endpoints(op: str, start: Any, end: Any, steps: int, dtype: int | None) -> tuple[Any, Any, Any]:
    if steps < 0:
        raise KernelError(f"{op}: number of steps must be non-negative, got {steps}")
    out = DEFAULT_FLOAT if dtype is None else to_dtype(dtype)
    if out == _BOOL or out.kind == "c":
        raise KernelError(f"{op}: dtype {out} is not supported")
    return _number(op, "start", start), _number(op, "end", end), out


def _from_both_ends(xp: Any, start: Any, end: Any, step: Any, steps: int, dtype: Any, fused: bool = True) -> Any:
    """PyTorch's CPU loop: ``start + step * i`` for the first half (``i < steps // 2``),
    ``end - step * (steps - i - 1)`` for the rest, in ``dtype``'s arithmetic.

    With ``fused``, as linspace's kernel (cpu/RangeFactoriesKernel.cpp, built for AVX2
    with FMA), each is one fused multiply-add (one rounding, not two: kernels/c_math.py),
    so the values match PyTorch's bit for bit."""
    index = xp.arange(steps)
    first = index < steps // 2
    if fused:
        counts = xp.where(first, index, steps - index - 1).astype(dtype)
        base = xp.where(first, dtype.type(start), dtype.type(end))
        signed = xp.where(first, dtype.type(step), -dtype.type(step))
        return fma(xp, signed, counts, base).astype(dtype)
    counts = index.astype(dtype)
    return xp.where(first, start + step * counts, end - step * (dtype.type(steps - 1) - counts))


def linspace(
    xp: Any, start: Any, end: Any, steps: int, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    """RangeFactoriesKernel.cpp's linspace: floating dtypes compute in their own precision
    (``step = (end - start) / (steps - 1)``, from both ends halfway); integer dtypes take
    the truncated endpoints and a double step, and truncate each value."""
    lo, hi, out = _endpoints("linspace", start, end, steps, dtype)
    if steps <= 1:
        return xp.full((steps,), lo).astype(out)
    if is_floating(out):
        a, b = out.type(lo), out.type(hi)
        step = (b - a) / out.type(steps - 1)
        return _from_both_ends(xp, a, b, step, steps, out).astype(out, copy=False)
    a, b = float(int(lo)), float(int(hi))
    step = (b - a) / (steps - 1)
    return _from_both_ends(xp, a, b, step, steps, xp.dtype("float64")).astype(out)


def logspace(
    xp: Any, start: Any, end: Any, steps: int, base: float = 10.0, dtype: int | None = None,
    layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    """RangeFactories.cpp's logspace: ``pow(base, e)`` in double, the exponents from both
    ends halfway with a double step from the endpoints in ``dtype``; ``steps == 1`` gives
    ``pow(base, start)``."""
    lo, hi, out = _endpoints("logspace", start, end, steps, dtype)
    if steps <= 1:
        return xp.full((steps,), float(base) ** float(lo)).astype(out)
    a, b = (out.type(v) if is_floating(out) else int(v) for v in (lo, hi))
    step = float(b - a) / (steps - 1)  # the difference in the dtype's arithmetic, then double
    a, b = float(a), float(b)
    # RangeFactories.cpp is built without FMA: two roundings per exponent.
    exponents = _from_both_ends(xp, a, b, step, steps, xp.dtype("float64"), fused=False)
    if xp.__name__ == "numpy":  # the C library's pow, as std::pow (NumPy's own may differ by an ulp)
        return xp.array([math.pow(float(base), e) for e in exponents.tolist()], dtype=xp.float64).astype(out)
    return xp.power(float(base), exponents).astype(out)


def _tensor_bounds(start: Any, end: Any) -> tuple[Any, Any]:
    return (_number("linspace", "start", start), _number("linspace", "end", end))


def linspace_tensor(
    xp: Any, start: Any, end: Any, steps: int, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    """The Tensor overloads: 0-d start and end read as numbers."""
    return linspace(xp, *_tensor_bounds(start, end), steps, dtype)


def logspace_tensor(
    xp: Any, start: Any, end: Any, steps: int, base: float = 10.0, dtype: int | None = None,
    layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    return logspace(xp, *_tensor_bounds(start, end), steps, base, dtype)
