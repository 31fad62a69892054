"""In-place ops under autograd, as PyTorch's eager autograd treats them.

* an in-place op on an intermediate value is differentiated like its
  out-of-place twin, and later readers see the new value and its history;
* an in-place op that overwrites a value a backward node saved makes that
  backward raise PyTorch's "modified by an inplace operation" error, never a
  gradient computed from the overwritten numbers;
* an in-place op on a graph input that requires grad is refused;
* in-place writes to inputs that need no gradient (running statistics)
  change the caller's arrays, as they change torch's buffers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes.check_inplace import InplaceError
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor

# mul_ needs self's old value for w's gradient (kept, as PyTorch keeps it);
# add_ and relu_ write values nobody saved; the last mul reads the final a.
SAFE = """graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::mul_(%a, %w)
  %c : Tensor = aten::add_(%b, %x, %one)
  %d : Tensor = aten::relu_(%c)
  %e : Tensor = aten::tanh(%d)
  %f : Tensor = aten::mul(%e, %a)
  return (%f)
"""


def torch_safe(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    a = torch.sin(x)
    b = a.mul_(w)
    c = b.add_(x)
    d = c.relu_()
    return torch.tanh(d) * a


def test_in_place_ops_on_intermediates_get_torch_gradients() -> None:
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, w = Tensor(xv.copy(), requires_grad=True), Tensor(wv.copy(), requires_grad=True)
    (out,) = GraphExecutor(parse_ir(SAFE)).run([x, w])
    tx, tw = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)
    expected = torch_safe(tx, tw)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    ours = grad([out.sum()], [x, w])
    theirs = torch.autograd.grad(expected.sum(), [tx, tw])
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


OVERWRITES_A_SAVED_VALUE = """graph(%x : Tensor, %w : Tensor):
  %a : Tensor = aten::mul(%x, %w)
  %b : Tensor = aten::sigmoid(%a)
  %c : Tensor = aten::relu_(%b)
  return (%c)
"""

# relu_ keeps its result for backward; add_ then overwrites it.
OVERWRITES_A_SAVED_RESULT = """graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %w)
  %b : Tensor = aten::relu_(%a)
  %c : Tensor = aten::add_(%b, %x, %one)
  return (%c)
"""


@pytest.mark.parametrize(
    ("text", "writer", "torch_fn"),
    [
        (OVERWRITES_A_SAVED_VALUE, r"aten::relu_\(%b\)", lambda x, w: torch.sigmoid(x * w).relu_()),
        (OVERWRITES_A_SAVED_RESULT, r"aten::add_\(%b, %x, %one\)", lambda x, w: (x * w).relu_().add_(x)),
    ],
)
def test_overwriting_a_value_saved_for_backward_raises_at_backward(text: str, writer: str, torch_fn) -> None:
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    w = Tensor(np.array([0.5, 0.5, -1.0]), requires_grad=True)
    (out,) = GraphExecutor(parse_ir(text)).run([x, w])
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: `%c : .*" + writer):
        grad([out.sum()], [x])
    tx, tw = torch.tensor([1.0, -2.0, 3.0], requires_grad=True), torch.tensor([0.5, 0.5, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch_fn(tx, tw).sum().backward()


def test_in_place_write_to_an_input_requiring_grad_is_refused() -> None:
    text = """graph(%x : Tensor):
  %y : Tensor = aten::relu_(%x)
  return (%y)
"""
    with pytest.raises(InplaceError, match="requires grad"):
        GraphExecutor(parse_ir(text)).run([Tensor(np.ones(2), requires_grad=True)])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.ones(2, requires_grad=True).relu_()


BUFFER_UPDATE = """graph(%x : Tensor, %w : Tensor, %count : Tensor):
  %one : int = prim::Constant[value=1]()
  %n : Tensor = aten::add_(%count, %one, %one)
  %y : Tensor = aten::mul(%x, %w)
  return (%y)
"""


def test_in_place_writes_to_inputs_without_grad_reach_the_caller() -> None:
    count = Tensor(np.array(0, dtype=np.int64))
    x, w = Tensor(np.ones(2)), Tensor(np.full(2, 3.0), requires_grad=True)
    executor = GraphExecutor(parse_ir(BUFFER_UPDATE))
    for _ in range(3):
        (y,) = executor.run([x, w, count])
    assert count.numpy() == 3  # as torch's num_batches_tracked after three steps
    (gw,) = grad([y.sum()], [w])
    np.testing.assert_allclose(gw.numpy(), np.ones(2))


_ROWS, _ROW = torch.tensor([2, 0]), torch.tensor([1])


def _assign_rows(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x * 2
    y[_ROWS] = v  # traces to aten::index_put_
    y[_ROW] += v[:1]  # index_put_ with accumulate
    return y.sin()


def test_item_assignment_in_user_code_gets_torch_gradients() -> None:
    from gradview.ir import from_torch

    rng = np.random.default_rng(1)
    xv, vv = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    xt, vt = (torch.tensor(a, requires_grad=True) for a in (xv, vv))
    expected = _assign_rows(xt, vt)
    expected_grads = torch.autograd.grad(expected.sum(), (xt, vt))
    graph, _ = from_torch(_assign_rows, (xt.detach(), vt.detach()))
    x, v = Tensor(xv.copy(), requires_grad=True), Tensor(vv.copy(), requires_grad=True)
    (out,) = GraphExecutor(graph).run([x, v])
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    for ours, theirs in zip(grad([out], [x, v], [Tensor(np.ones((4, 3)))]), expected_grads, strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
