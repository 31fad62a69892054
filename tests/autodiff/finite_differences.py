"""Check a Gradient against finite differences, without torch.

``check_finite_differences(text, inputs)`` differentiates the graph, runs
``f`` and ``df`` (tests.autodiff.oracle.run_gradient) with a random gradient
``p_k`` for each floating output, and compares each vector-Jacobian product
with the numerical derivative of the scalar ``phi = sum_k <p_k, out_k>``
(the outputs projected on the same random gradients), computed by running
the *original* graph on perturbed inputs, one element at a time, with
central differences ``(phi(x + eps e_j) - phi(x - eps e_j)) / (2 eps)``.

In float64 with ``eps = 1e-6`` the truncation error is about ``eps^2`` and
the rounding error about ``1e-16 * |phi| / eps``, far below ``rtol = 1e-6``,
as long as no input sits within ``eps`` of a kink (clamp bounds, ties of
max, zeros of abs): tests pick inputs away from those.

Graphs with random ops (dropout) pass ``reseed``: NumPy's global generator
is reseeded before every run, so every run draws the same mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradview.autodiff import Gradient, differentiate
from gradview.ir import parse_ir
from gradview.runtime import compile_graph

from .oracle import run_gradient

__all__ = ["check_finite_differences", "numerical_vjp"]


def _is_float_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating)


def numerical_vjp(
    run: Any, inputs: list[Any], index: int, projections: list[Any], eps: float
) -> np.ndarray:
    """d phi / d inputs[index] by central differences, one element at a time."""

    def phi(values: list[Any]) -> float:
        outputs = run(values)
        pairs = zip(projections, outputs, strict=True)
        return sum(float(np.sum(p * np.asarray(o))) for p, o in pairs if p is not None)

    x = np.asarray(inputs[index])
    numeric = np.zeros_like(x, dtype=np.float64)
    for position in np.ndindex(x.shape):
        shifted = []
        for sign in (1.0, -1.0):
            moved = x.copy()
            moved[position] += sign * eps
            values = list(inputs)
            values[index] = moved
            shifted.append(phi(values))
        numeric[position] = (shifted[0] - shifted[1]) / (2 * eps)
    return numeric


def check_finite_differences(
    text: str,
    inputs: list[Any],
    eps: float = 1e-6,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    seed: int = 0,
    reseed: int | None = None,
) -> Gradient:
    """Differentiate ``text``; assert every vjp matches finite differences of the original graph."""
    grad = differentiate(parse_ir(text), mode="extended")  # gradview's whole formula library
    original = compile_graph(parse_ir(text))

    def run(values: list[Any]) -> list[Any]:
        if reseed is not None:
            np.random.seed(reseed)
        return original(*values)

    rng = np.random.default_rng(seed + 2000)
    outputs = run(inputs)
    projections = [
        rng.standard_normal(np.shape(o)) if _is_float_array(np.asarray(o)) else None for o in outputs
    ]
    if reseed is not None:
        np.random.seed(reseed)
    forward, vjps = run_gradient(grad, inputs, projections)
    for ours, theirs in zip(forward, outputs, strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12, atol=1e-12)
    assert grad.df_output_vjps, "the graph has no input that receives a gradient"
    for slot, index in enumerate(grad.df_output_vjps):
        numeric = numerical_vjp(run, inputs, index, projections, eps)
        ours = vjps[slot]
        ours = np.zeros_like(numeric) if ours is None else np.asarray(ours)
        assert ours.shape == numeric.shape, f"input {index}: vjp {ours.shape}, input {numeric.shape}"
        np.testing.assert_allclose(ours, numeric, rtol=rtol, atol=atol, err_msg=f"vjp of input {index}")
    return grad
