"""Helpers for the pointwise and shape formula tests: IR type strings, inputs, and one call that
checks a graph against torch (tests.autodiff.oracle.check_gradient) and
against finite differences (tests.autodiff.finite_differences).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradview.autodiff import Gradient
from gradview.ir import TensorType, parse_ir

from .finite_differences import check_finite_differences
from .oracle import check_gradient

__all__ = ["tensor_type", "make_inputs", "check_formula"]

_NUMPY_DTYPES = {"Double": np.float64, "Float": np.float32, "Bool": np.bool_, "Long": np.int64}


def tensor_type(*shape: int, dtype: str = "Double", grad: bool = True) -> str:
    """``Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu)`` for a contiguous tensor."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(size, 1)
    sizes = "".join(f"{s}, " for s in shape)
    stride_text = f"strides=[{', '.join(map(str, strides))}], " if shape else ""
    return f"{dtype}({sizes}{stride_text}requires_grad={int(grad)}, device=cpu)"


def make_inputs(
    text: str,
    seed: int,
    low: float = 0.5,
    high: float = 1.5,
    away_from: Sequence[float] = (),
    scalars: dict[str, Any] | None = None,
) -> list[Any]:
    """Inputs of the declared shapes and dtypes, uniform in [low, high], each at least
    0.05 from every point in ``away_from`` (kinks of clamp, sign, leaky_relu...)."""
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    for value in parse_ir(text).inputs():
        type_ = value.type()
        if not isinstance(type_, TensorType) or type_.sizes is None:
            values.append((scalars or {})[value.debug_name()])
            continue
        shape = tuple(type_.sizes)
        array = rng.uniform(low, high, size=shape)
        for point in away_from:
            close = np.abs(array - point) < 0.05
            array = np.where(close, array + np.where(array >= point, 0.1, -0.1), array)
        dtype = _NUMPY_DTYPES[type_.scalar_type or "Double"]
        values.append(array > (low + high) / 2 if dtype is np.bool_ else array.astype(dtype))
    return values


def check_formula(
    text: str,
    *,
    inputs: list[Any] | None = None,
    scalars: dict[str, Any] | None = None,
    low: float = 0.5,
    high: float = 1.5,
    away_from: Sequence[float] = (),
    torch_lists: bool = True,
    finite_differences: bool = True,
    seeds: Sequence[int] = (0, 1),
    rtol: float = 1e-7,
) -> Gradient:
    """check_gradient (torch's lists unless ``torch_lists`` is False) and the
    finite-difference check, for each seed; returns the last Gradient."""
    grad = None
    for seed in seeds:
        values = inputs if inputs is not None else make_inputs(text, seed, low, high, away_from, scalars)
        grad = check_gradient(text, values, seed=seed, rtol=rtol, compare_torch_lists=torch_lists)
        if finite_differences:
            check_finite_differences(text, values, seed=seed)
    assert grad is not None
    return grad
