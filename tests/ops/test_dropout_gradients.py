"""Random ops through a user's path (traced, run by the GraphExecutor, differentiated by
gradview's autograd): the seeded draw is the same on every run, so the gradient autograd
gives is the derivative of the function each run computes, which central finite
differences check (each perturbed run draws the same mask)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gradview.ir import from_torch
from gradview.runtime import GraphExecutor, Tensor, autograd

CALLS: dict[str, tuple[Callable[..., torch.Tensor], list[tuple[int, ...]]]] = {
    "dropout": (lambda x: F.dropout(x, 0.4, training=True), [(4, 5)]),
    "dropout2d": (lambda x: F.dropout2d(x, 0.5, training=True), [(3, 4, 2, 2)]),
    "alpha_dropout": (lambda x: F.alpha_dropout(x, 0.3, training=True), [(4, 5)]),
    "feature_alpha_dropout": (lambda x: F.feature_alpha_dropout(x, 0.3, training=True), [(3, 4, 2)]),
    "sdpa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.3),
        [(2, 3, 4), (2, 5, 4), (2, 5, 3)],
    ),
    "bernoulli": (lambda x: torch.bernoulli(x) * x, [(4, 5)]),
    "dropout2d in place": (lambda x: F.dropout2d(x * 1.0, 0.5, True, inplace=True), [(3, 4, 2, 2)]),
    "alpha_dropout in place": (lambda x: F.alpha_dropout(x * 1.0, 0.3, True, inplace=True), [(4, 5)]),
    # Dropout between the layers of an LSTM and a GRU in training.
    "lstm": (
        lambda x, h, c, *w: torch.lstm(x, (h, c), w, True, 2, 0.5, True, True, False)[0],
        [(5, 2, 3), (4, 2, 4), (4, 2, 4)] + [(16, 3), (16, 4), (16,), (16,)] * 2 + [(16, 8), (16, 4), (16,), (16,)] * 2,
    ),
    "gru": (
        lambda x, h, *w: torch.gru(x, h, w, True, 2, 0.5, True, False, False)[0],
        [(5, 2, 3), (2, 2, 4), (12, 3), (12, 4), (12,), (12,), (12, 4), (12, 4), (12,), (12,)],
    ),
}


def _run(graph: object, arrays: list[np.ndarray], requires_grad: bool = False) -> tuple[list[Tensor], Tensor]:
    inputs = [Tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    out = GraphExecutor(graph).run(inputs)
    return inputs, out[0] if isinstance(out, list) else out


@pytest.mark.parametrize("name", list(CALLS))
def test_the_draw_is_the_same_every_run_and_the_gradient_is_its_derivative(name: str) -> None:
    call, shapes = CALLS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.2, 0.8, shape) for shape in shapes]
    graph, _ = from_torch(call, tuple(torch.from_numpy(a).requires_grad_() for a in arrays))
    inputs, out = _run(graph, arrays, requires_grad=True)
    _, again = _run(graph, arrays)
    np.testing.assert_array_equal(again.detach().numpy(), out.detach().numpy())
    cotangent = rng.standard_normal(out.shape)
    grads = autograd.grad([out], inputs, [Tensor(cotangent)], allow_unused=True)
    directions = [rng.standard_normal(a.shape) for a in arrays]
    eps = 1e-6

    def loss(t: float) -> float:
        _, y = _run(graph, [a + t * d for a, d in zip(arrays, directions, strict=True)])
        return float((y.detach().numpy() * cotangent).sum())

    numeric = (loss(eps) - loss(-eps)) / (2 * eps)
    analytic = sum(float((g.numpy() * d).sum()) for g, d in zip(grads, directions, strict=True) if g is not None)
    assert numeric == pytest.approx(analytic, rel=1e-6, abs=1e-8)
