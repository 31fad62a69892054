"""rrelu beyond the op_db sweep (which compares only shapes for it, since it can draw):
evaluation mode is PyTorch's to the bit, forward and gradient; training mode draws
gradview's seeded slopes in [lower, upper), the same on every run, and its gradient is
the slope each element got; bad bounds are refused in one line naming the node."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gradview.ir import from_torch, parse_ir
from gradview.runtime import GraphExecutor, GraphRuntimeError, Tensor, autograd

_EDGES = np.array([0.0, -0.0, 1e-300, -1e-300, 2.5, -2.5, np.inf, -np.inf, np.nan, -7.0, 3.0])


def _run(call: Callable[[torch.Tensor], torch.Tensor], x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    graph, _ = from_torch(call, (torch.tensor(x),))
    gx = Tensor(x.copy(), requires_grad=True)
    (out,) = GraphExecutor(graph).run([gx])
    (grad,) = autograd.grad([out], [gx], [Tensor(v.copy())])
    return out.detach().numpy(), grad.detach().numpy()


@pytest.mark.parametrize(("lower", "upper"), [(0.125, 1.0 / 3.0), (0.1, 0.7), (0, 1), (1, 2), (-0.5, 0.25)])
def test_evaluation_mode_equals_torch_bit_for_bit(lower: float, upper: float) -> None:
    """leaky_relu with slope (lower + upper) / 2, its gradient leaky_relu_backward's."""
    x = np.concatenate([np.random.default_rng(0).standard_normal(9), _EDGES])
    v = np.random.default_rng(1).standard_normal(x.shape)

    def call(t: torch.Tensor) -> torch.Tensor:
        return F.rrelu(t, lower, upper, training=False)

    tx = torch.tensor(x, requires_grad=True)
    expected = call(tx)
    (expected_grad,) = torch.autograd.grad(expected, tx, torch.tensor(v))
    out, grad = _run(call, x, v)
    np.testing.assert_array_equal(out, expected.detach().numpy())
    np.testing.assert_array_equal(grad, expected_grad.numpy())


def test_training_mode_draws_seeded_slopes_and_differentiates_through_them() -> None:
    x = np.random.default_rng(2).standard_normal((4, 6))
    ones = np.ones_like(x)

    def call(t: torch.Tensor) -> torch.Tensor:
        return F.rrelu(t, 0.2, 0.6, training=True)

    out, grad = _run(call, x, ones)
    again, grad_again = _run(call, x, ones)
    np.testing.assert_array_equal(out, again)  # the same draw on every run
    np.testing.assert_array_equal(grad, grad_again)
    negative = x <= 0
    np.testing.assert_array_equal(out[~negative], x[~negative])
    np.testing.assert_array_equal(grad[~negative], 1.0)
    slopes = grad[negative]
    assert np.all((slopes >= 0.2) & (slopes < 0.6)) and len(np.unique(slopes)) == slopes.size
    np.testing.assert_array_equal(out[negative], x[negative] * slopes)


def test_lower_above_upper_is_refused_naming_the_node() -> None:
    graph = parse_ir(
        "graph(%x : Double(3)):\n"
        "  %lower : float = prim::Constant[value=0.5]()\n"
        "  %upper : float = prim::Constant[value=0.25]()\n"
        "  %training : bool = prim::Constant[value=0]()\n"
        "  %none : NoneType = prim::Constant()\n"
        "  %y : Tensor = aten::rrelu(%x, %lower, %upper, %training, %none)\n"
        "  return (%y)\n"
    )
    with pytest.raises(GraphRuntimeError, match=r"aten::rrelu.*Lower bound should be less than or equal"):
        GraphExecutor(graph).run([Tensor(np.ones(3))])
