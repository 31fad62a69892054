"""Nodes outside every DifferentiableGraph still get PyTorch's gradients, or a
clear error naming the node: a gradient is never silently lost.

Each graph runs through GraphExecutor (PyTorch's default autodiff mode), then
backward; the same function runs in eager PyTorch and the gradients compare.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.eager_ops import NotDifferentiableError
from gradview.runtime.executor import GraphExecutor

# sum, cat and select are ops PyTorch's JIT leaves to eager autograd; the
# graph runs them outside any DifferentiableGraph.
OUTSIDE_THE_GROUPS = """graph(%x : Tensor, %y : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %s : Tensor = aten::sum(%x, %none)
  %list : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%list, %zero)
  %r : Tensor = aten::select(%c, %zero, %zero)
  %m : Tensor = aten::mul(%c, %s)
  %t : Tensor = aten::tanh(%m)
  %out : Tensor = aten::mul(%t, %r)
  return (%out)
"""


def torch_outside_the_groups(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    s = x.sum()
    c = torch.cat([x, y], 0)
    return torch.tanh(c * s) * c.select(0, 0)


@pytest.mark.parametrize("rows", [(2, 3), (1, 4)])
def test_ops_torch_leaves_to_autograd_get_torch_gradients(rows: tuple[int, int]) -> None:
    rng = np.random.default_rng(0)
    x_value, y_value = rng.standard_normal((rows[0], 3)), rng.standard_normal((rows[1], 3))
    x, y = Tensor(x_value.copy(), requires_grad=True), Tensor(y_value.copy(), requires_grad=True)
    (out,) = GraphExecutor(parse_ir(OUTSIDE_THE_GROUPS)).run([x, y])
    assert out.requires_grad
    ours = grad([out.sum()], [x, y])
    tx, ty = torch.tensor(x_value, requires_grad=True), torch.tensor(y_value, requires_grad=True)
    theirs = torch.autograd.grad(torch_outside_the_groups(tx, ty).sum(), [tx, ty])
    np.testing.assert_allclose(out.detach().numpy(), torch_outside_the_groups(tx, ty).detach().numpy(), rtol=1e-12)
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine is not None
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


NO_DERIVATIVE = """graph(%x : Tensor, %y : Tensor):
  %d : float = prim::Constant[value=0.7]()
  %q : Tensor = aten::floor_divide(%x, %d)
  %z : Tensor = aten::mul(%q, %y)
  return (%z)
"""


def test_a_node_without_a_gradient_raises_naming_the_node_when_backward_reaches_it() -> None:
    rng = np.random.default_rng(1)
    x = Tensor(rng.random(3) + 1, requires_grad=True)
    y = Tensor(rng.random(3), requires_grad=True)
    (z,) = GraphExecutor(parse_ir(NO_DERIVATIVE)).run([x, y])
    assert z.requires_grad  # connected to autograd, as PyTorch's result is
    # y's gradient alone does not go through floor_divide.
    (gy,) = grad([z.sum()], [y], retain_graph=True)
    np.testing.assert_allclose(gy.numpy(), np.floor_divide(x.detach().numpy(), 0.7))
    with pytest.raises(NotDifferentiableError, match=r"aten::floor_divide\(%x, %d\).*not implemented|derivative"):
        grad([z.sum()], [x])
    # PyTorch refuses the same backward.
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        (torch.floor_divide(tx, 0.7) * torch.tensor(y.detach().numpy())).sum().backward()


def test_without_grad_the_node_runs_plainly() -> None:
    x = Tensor(np.array([1.5, 2.5]), requires_grad=True)
    y = Tensor(np.array([1.0, 1.0]))
    from gradview.runtime.autograd import no_grad

    with no_grad():
        (z,) = GraphExecutor(parse_ir(NO_DERIVATIVE)).run([x, y])
    assert not z.requires_grad
    np.testing.assert_allclose(z.numpy(), np.floor_divide(x.detach().numpy(), 0.7))


SPLIT_INTO_A_LIST = """graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = aten::sin(%x)
  %parts : Tensor[] = aten::split(%y, %two, %zero)
  return (%parts)
"""


def test_tensors_returned_in_a_list_stay_connected_to_autograd() -> None:
    value = np.linspace(0.1, 1.0, 5)
    x = Tensor(value.copy(), requires_grad=True)
    (parts,) = GraphExecutor(parse_ir(SPLIT_INTO_A_LIST)).run([x])
    assert isinstance(parts, list) and all(isinstance(p, Tensor) and p.requires_grad for p in parts)
    (gx,) = grad([(parts[0] * 2.0).sum() + parts[2].sum()], [x])
    tx = torch.tensor(value, requires_grad=True)
    tparts = torch.split(torch.sin(tx), 2, 0)
    (expected,) = torch.autograd.grad((tparts[0] * 2.0).sum() + tparts[2].sum(), [tx])
    np.testing.assert_allclose(gx.numpy(), expected.numpy(), rtol=1e-12)
