"""Dropout in every form, and the other random draws, from gradview's own seeded generator.

gradview cannot reproduce PyTorch's random numbers (PyTorch's generator is not
NumPy's). Every draw here comes from NumPy's generator seeded with
``DROPOUT_SEED``, the kind of draw and the shape drawn, the same for every
call: so every run of a graph draws the same values, its forward is a
deterministic function of its inputs, the backward sees the forward's mask,
and the gradient check's finite differences perturb a fixed function (each
perturbed run drops the same elements). Two draws of one kind and shape in a
graph are equal; PyTorch's would differ. The values are gradview's, never
PyTorch's; their distributions are PyTorch's.

**Dropout** (PyTorch's ``_dropout_impl``): ``dropout`` and ``native_dropout``
keep each element with probability ``1 - p`` and scale it by ``1 / (1 - p)``;
``feature_dropout`` draws one keep per channel (the noise has shape ``[N, C,
1, ...]``); ``alpha_dropout`` (and ``feature_alpha_dropout``) keep the
self-normalizing mean and variance: with ``alpha = 1.7580993408473766`` and
``a = 1 / sqrt((alpha^2 p + 1)(1 - p))``, ``y = x * (keep * a) + b``, ``b =
(keep - 1) * alpha * a + alpha * a * p``. ``p == 1`` multiplies by zero (inf
and NaN inputs give NaN); ``p == 0``, ``train=False`` or an empty input return
the input. Each is ``x * noise (+ b)``: its gradient is ``grad * noise``, the
noise :func:`dropout_noise` gives. ``native_dropout(input, p, train)``
returns ``(output, mask)`` (``train`` True or None drops; False copies) and
``native_dropout_backward(grad, mask, scale)`` is ``grad * mask * scale``.

**Draws**: ``bernoulli`` (1 with probability ``p``), ``normal`` (``mean + std *
z``), ``randint_like`` (integers in ``[low, high)``), as PyTorch checks their
arguments.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy

from .dtypes import is_floating, to_dtype
from .protocol import KernelError

__all__ = ["DROPOUT_SEED", "keep_mask", "seeded_generator", "native_dropout", "native_dropout_backward"]

DROPOUT_SEED = 20240610
_ALPHA = 1.7580993408473766  # PyTorch's SELU alpha, in _dropout_impl


def seeded_generator(kind: str, shape: tuple[int, ...]) -> numpy.random.Generator:
    """The generator of one kind of draw of ``shape``: the same on every call."""
    salt = [] if kind == "dropout" else [zlib.crc32(kind.encode())]
    return numpy.random.default_rng([DROPOUT_SEED, *salt, *shape])


def keep_mask(xp: Any, shape: Sequence[int], p: float) -> Any:
    """The elements dropout keeps (a bool array, each True with probability ``1 - p``)."""
    shape = tuple(int(s) for s in shape)
    return xp.asarray(seeded_generator("dropout", shape).random(shape) >= p)


def _check_p(op: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise KernelError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")


def _noise_shape(op: str, input: Any, feature: bool) -> tuple[int, ...]:
    if not feature:
        return tuple(input.shape)
    if input.ndim < 2:
        raise KernelError(f"{op}: Feature dropout requires at least 2 dimensions in the input")
    return (input.shape[0], input.shape[1]) + (1,) * (input.ndim - 2)


def _noise(xp: Any, op: str, input: Any, p: float, feature: bool, alpha: bool) -> tuple[Any, Any]:
    """(noise, b) of a training-mode dropout with 0 < p < 1: ``y = x * noise + b`` (b None
    unless alpha), in PyTorch's order of operations."""
    keep = keep_mask(xp, _noise_shape(op, input, feature), p).astype(input.dtype)
    if not alpha:
        return keep / xp.asarray(1.0 - p, dtype=input.dtype), None
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = (keep - 1) * xp.asarray(_ALPHA * a, dtype=input.dtype) + xp.asarray(_ALPHA * a * p, dtype=input.dtype)
    return keep * xp.asarray(a, dtype=input.dtype), b


def _identity(input: Any, p: float, train: bool | None) -> bool:
    return p == 0 or train is False or input.size == 0


def _dropout_impl(xp: Any, op: str, input: Any, p: float, train: bool | None, feature: bool, alpha: bool) -> Any:
    _check_p(op, p)
    if _identity(input, p, train):
        return input
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: expected a floating-point input, got {input.dtype}")
    if feature:
        _noise_shape(op, input, feature)
    if p == 1:
        # PyTorch multiplies by a zero tensor, so inf and NaN inputs give NaN.
        return input * xp.zeros((), dtype=input.dtype)
    noise, b = _noise(xp, op, input, p, feature, alpha)
    out = input * noise
    return (out if b is None else out + b).astype(input.dtype, copy=False)


def dropout(xp: Any, input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(xp, "dropout", input, p, train, False, False)


def feature_dropout(xp: Any, input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(xp, "feature_dropout", input, p, train, True, False)


def alpha_dropout(xp: Any, input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(xp, "alpha_dropout", input, p, train, False, True)


def feature_alpha_dropout(xp: Any, input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(xp, "feature_alpha_dropout", input, p, train, True, True)


def dropout_noise(xp: Any, input: Any, p: float, train: bool, feature: bool, alpha: bool) -> Any:
    """d(output)/d(input) of the dropout of ``input`` (broadcastable to it): the gradient's factor."""
    if _identity(input, p, train):
        return xp.ones((), dtype=input.dtype)
    if p == 1:
        return xp.zeros((), dtype=input.dtype)
    return _noise(xp, "dropout", input, p, feature, alpha)[0]


# -- native_dropout, native_dropout_backward (AOTAutograd's graphs) ----------------------------------
def native_dropout(xp: Any, input: Any, p: float, train: bool | None) -> tuple[Any, Any]:
    if not 0.0 <= p <= 1.0:
        raise KernelError(f"native_dropout: the probability p has to be between 0 and 1, got {p}")
    if not is_floating(input.dtype):
        raise KernelError(f"native_dropout: expected a floating-point input, got {input.dtype}")
    if train is False:
        return input.copy(), xp.ones(input.shape, dtype=bool)
    if p == 1:
        # PyTorch multiplies by a zero mask, so inf and NaN inputs give NaN.
        return input * xp.zeros((), dtype=input.dtype), xp.zeros(input.shape, dtype=bool)
    mask = keep_mask(xp, input.shape, p)
    scale = xp.asarray(1.0 / (1.0 - p), dtype=input.dtype)
    return (input * mask * scale).astype(input.dtype, copy=False), mask


def native_dropout_backward(xp: Any, grad_output: Any, mask: Any, scale: float) -> Any:
    if mask.dtype.kind != "b":
        raise KernelError(f"native_dropout_backward: mask should be a bool tensor, got {mask.dtype}")
    if not is_floating(grad_output.dtype):
        raise KernelError(
            f"native_dropout_backward: expected a floating-point gradient, got {grad_output.dtype}"
        )
    return (grad_output * mask * xp.asarray(scale, dtype=grad_output.dtype)).astype(
        grad_output.dtype, copy=False
    )


# -- bernoulli ------------------------------------------------------------------------------------
def _uniform(xp: Any, kind: str, shape: Sequence[int]) -> Any:
    shape = tuple(int(s) for s in shape)
    return xp.asarray(seeded_generator(kind, shape).random(shape))


def _bernoulli_of(xp: Any, op: str, self: Any, p: Any) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"{op}: expected a floating-point tensor, got {self.dtype}")
    probs = xp.asarray(p)
    if bool(xp.any((probs < 0) | (probs > 1) | xp.isnan(probs))):
        found = float(probs) if probs.ndim == 0 else "values outside"
        raise KernelError(f"{op}: bernoulli_ expects p to be in [0, 1], but got p={found}")
    return (_uniform(xp, "bernoulli", self.shape) < probs).astype(self.dtype)


def bernoulli(xp: Any, self: Any, generator: Any = None) -> Any:
    """Each element 1 with the probability ``self`` holds there."""
    return _bernoulli_of(xp, "bernoulli", self, self)


def bernoulli_p(xp: Any, self: Any, p: float, generator: Any = None) -> Any:
    return _bernoulli_of(xp, "bernoulli", self, p)


def bernoulli_tensor(xp: Any, self: Any, p: Any, generator: Any = None) -> Any:
    if tuple(numpy.broadcast_shapes(tuple(p.shape), tuple(self.shape))) != tuple(self.shape):
        raise KernelError(f"bernoulli: p of shape {list(p.shape)} does not broadcast to {list(self.shape)}")
    return _bernoulli_of(xp, "bernoulli", self, p)


# -- normal ---------------------------------------------------------------------------------------
def _standard_normal(xp: Any, shape: Sequence[int]) -> Any:
    shape = tuple(int(s) for s in shape)
    return xp.asarray(seeded_generator("normal", shape).standard_normal(shape))


def _check_std(std: Any, xp: Any) -> None:
    if bool(xp.any(xp.asarray(std) < 0)):
        found = float(std) if numpy.ndim(std) == 0 else "a negative element"
        raise KernelError(f"normal: normal expects std >= 0.0, but found std {found}")


def normal_tensor_tensor(xp: Any, mean: Any, std: Any, generator: Any = None) -> Any:
    _check_std(std, xp)
    shape = numpy.broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    dtype = numpy.result_type(mean.dtype, std.dtype)
    return (mean + std * _standard_normal(xp, shape)).astype(dtype, copy=False)


def normal_tensor_float(xp: Any, mean: Any, std: float = 1.0, generator: Any = None) -> Any:
    _check_std(std, xp)
    z = _standard_normal(xp, mean.shape)
    return (mean + xp.asarray(std, dtype=mean.dtype) * z).astype(mean.dtype, copy=False)


def normal_float_tensor(xp: Any, mean: float, std: Any, generator: Any = None) -> Any:
    _check_std(std, xp)
    z = _standard_normal(xp, std.shape)
    return (xp.asarray(mean, dtype=std.dtype) + std * z).astype(std.dtype, copy=False)


def normal_float_float(
    xp: Any, mean: float, std: float, size: Sequence[int], generator: Any = None, dtype: int | None = None,
    layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Any:
    _check_std(std, xp)
    out = numpy.dtype(numpy.float32) if dtype is None else to_dtype(dtype)
    return (mean + std * _standard_normal(xp, size)).astype(out)


# -- randint_like ---------------------------------------------------------------------------------
def _randint(xp: Any, op: str, shape: Sequence[int], low: int, high: int, dtype: Any) -> Any:
    if low >= high:
        raise KernelError(f"{op}: random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape = tuple(int(s) for s in shape)
    return xp.asarray(seeded_generator("randint", shape).integers(low, high, shape)).astype(dtype)


def randint_like(
    xp: Any, self: Any, high: int, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    out = self.dtype if dtype is None else to_dtype(dtype)
    return _randint(xp, "randint_like", self.shape, 0, int(high), out)


def randint_like_low(
    xp: Any, self: Any, low: int, high: int, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    out = self.dtype if dtype is None else to_dtype(dtype)
    return _randint(xp, "randint_like", self.shape, int(low), int(high), out)


# -- in-place fills: normal_, uniform_, exponential_, geometric_, log_normal_, cauchy_, bernoulli_ ----
def _fill(xp: Any, op: str, self: Any, draw: Any) -> Any:
    """``self`` overwritten with ``draw(generator, shape)`` (gradview's seeded values)."""
    from .inplace import write_back  # (inplace imports this module's dropout)

    shape = tuple(int(s) for s in self.shape)
    values = xp.asarray(draw(seeded_generator(op, shape), shape))
    return write_back(xp, op, self, values.astype(self.dtype))


def normal_(xp: Any, self: Any, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Any:
    if std < 0:
        raise KernelError(f"normal_: normal expects std >= 0.0, but found std {std}")
    return _fill(xp, "normal_", self, lambda g, s: mean + std * g.standard_normal(s))


def uniform_(xp: Any, self: Any, low: float = 0.0, high: float = 1.0, generator: Any = None) -> Any:
    if low > high:
        raise KernelError(f"uniform_: uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    return _fill(xp, "uniform_", self, lambda g, s: low + (high - low) * g.random(s))


def exponential_(xp: Any, self: Any, lambd: float = 1.0, generator: Any = None) -> Any:
    if not lambd > 0:
        raise KernelError(f"exponential_: exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(xp, "exponential_", self, lambda g, s: g.exponential(1.0 / lambd, s))


def geometric_(xp: Any, self: Any, p: float, generator: Any = None) -> Any:
    if not 0 < p < 1:
        raise KernelError(f"geometric_: geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(xp, "geometric_", self, lambda g, s: g.geometric(p, s))


def log_normal_(xp: Any, self: Any, mean: float = 1.0, std: float = 2.0, generator: Any = None) -> Any:
    if not std > 0:
        raise KernelError(f"log_normal_: log_normal_ expects std > 0.0, but found std={std}")
    return _fill(xp, "log_normal_", self, lambda g, s: g.lognormal(mean, std, s))


def cauchy_(xp: Any, self: Any, median: float = 0.0, sigma: float = 1.0, generator: Any = None) -> Any:
    if not sigma > 0:
        raise KernelError(f"cauchy_: cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(xp, "cauchy_", self, lambda g, s: median + sigma * numpy.tan(numpy.pi * (g.random(s) - 0.5)))


def bernoulli_float(xp: Any, self: Any, p: float = 0.5, generator: Any = None) -> Any:
    if not 0 <= p <= 1:
        raise KernelError(f"bernoulli_: bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(xp, "bernoulli_", self, lambda g, s: g.random(s) < p)


def bernoulli_tensor_(xp: Any, self: Any, p: Any, generator: Any = None) -> Any:
    probs = numpy.asarray(p.get() if hasattr(p, "get") else p)
    if bool(numpy.any((probs < 0) | (probs > 1) | numpy.isnan(probs))):
        raise KernelError("bernoulli_: bernoulli_ expects p to be in [0, 1]")
    return _fill(xp, "bernoulli_", self, lambda g, s: g.random(s) < probs)


# -- randint, multinomial (rand and randn are in factories.py) ---------------------------------------------------
def _factory_dtype(dtype: int | None, default: str) -> Any:
    return to_dtype(default) if dtype is None else to_dtype(dtype)


def randint(
    xp: Any, high: int, size: Sequence[int], dtype: int | None = 4, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return _randint(xp, "randint", size, 0, int(high), _factory_dtype(dtype, "Long"))


def randint_low(
    xp: Any, low: int, high: int, size: Sequence[int], dtype: int | None = 4, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    return _randint(xp, "randint", size, int(low), int(high), _factory_dtype(dtype, "Long"))


def multinomial(xp: Any, self: Any, num_samples: int, replacement: bool = False, generator: Any = None) -> Any:
    """Category indices drawn per row of ``self`` (weights), PyTorch's checks first."""
    op = "multinomial"
    if self.ndim not in (1, 2):
        raise KernelError(f"{op}: prob_dist must be 1 or 2 dim")
    if not is_floating(self.dtype):
        raise KernelError(f"{op}: only supports floating-point dtypes for input, got: {self.dtype}")
    if num_samples <= 0:
        raise KernelError(f"{op}: cannot sample n_sample <= 0 samples")
    categories = self.shape[-1]
    if not replacement and num_samples > categories:
        raise KernelError(f"{op}: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    weights = numpy.asarray(self.get() if hasattr(self, "get") else self, dtype=numpy.float64).reshape(-1, categories)
    if not numpy.all(numpy.isfinite(weights)) or numpy.any(weights < 0):
        raise KernelError(f"{op}: probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(axis=1)
    if numpy.any(totals <= 0):
        raise KernelError(f"{op}: invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and numpy.any((weights > 0).sum(axis=1) < num_samples):
        raise KernelError(f"{op}: invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)")
    rng = seeded_generator(op, (*self.shape, num_samples))
    rows = [rng.choice(categories, num_samples, replace=replacement, p=w / t) for w, t in zip(weights, totals, strict=True)]
    drawn = numpy.asarray(rows, dtype=numpy.int64).reshape(tuple(self.shape[:-1]) + (num_samples,))
    return xp.asarray(drawn)
