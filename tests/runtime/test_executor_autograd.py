"""Gradients through GraphExecutor: DifferentiableGraphOp hooks df into autograd.

An MLP with a mean-squared-error loss, trained for 20 SGD steps through the
executor, follows PyTorch's losses to 1e-7 (float64); the plan is compiled once.
"""

from __future__ import annotations

import numpy as np
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor
from gradview.runtime.executor import GraphExecutor

T = "Double(8, 4, strides=[4, 1], requires_grad=0, device=cpu)"
MLP_LOSS = """graph(%x : Tensor, %target : Tensor, %w1 : Tensor, %b1 : Tensor, %w2 : Tensor, %b2 : Tensor):
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %m1 : Tensor = aten::matmul(%x, %w1)
  %a1 : Tensor = aten::add(%m1, %b1, %one)
  %h : Tensor = aten::tanh(%a1)
  %m2 : Tensor = aten::matmul(%h, %w2)
  %y : Tensor = aten::add(%m2, %b2, %one)
  %d : Tensor = aten::sub(%y, %target, %one)
  %sq : Tensor = aten::mul(%d, %d)
  %loss : Tensor = aten::mean(%sq, %none)
  return (%loss)
"""
SHAPES = [(16, 4), (16, 3), (4, 8), (8,), (8, 3), (3,)]


def test_training_loop_matches_pytorch() -> None:
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) * 0.5 for s in SHAPES]
    executor = GraphExecutor(parse_ir(MLP_LOSS))
    x, target = Tensor(values[0]), Tensor(values[1])
    params = [Tensor(v.copy(), requires_grad=True) for v in values[2:]]
    t_x, t_target = torch.tensor(values[0]), torch.tensor(values[1])
    t_params = [torch.tensor(v.copy(), requires_grad=True) for v in values[2:]]
    lr = 0.1
    for _ in range(20):
        (loss,) = executor.run([x, target, *params])
        loss.backward()
        t_loss = ((torch.tanh(t_x @ t_params[0] + t_params[1]) @ t_params[2] + t_params[3] - t_target) ** 2).mean()
        t_loss.backward()
        np.testing.assert_allclose(loss.detach().numpy(), t_loss.item(), rtol=1e-7)
        for p, tp in zip(params, t_params, strict=True):
            np.testing.assert_allclose(np.asarray(p.grad.numpy()), tp.grad.numpy(), rtol=1e-7, atol=1e-12)
            p.data = p.data - lr * np.asarray(p.grad.numpy())
            p.grad = None
            with torch.no_grad():
                tp -= lr * tp.grad
            tp.grad = None
    assert executor.cache_misses == 1 and executor.cache_hits == 19
    optimized = executor.last_executed_optimized_graph()
    assert [n.kind() for n in optimized.nodes()].count("prim::DifferentiableGraph") == 1


def test_no_grad_inputs_give_plain_tensors() -> None:
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s) for s in SHAPES]
    executor = GraphExecutor(parse_ir(MLP_LOSS))
    (loss,) = executor.run([Tensor(v) for v in values])
    assert isinstance(loss, Tensor) and not loss.requires_grad and loss.grad_fn is None


def test_gradients_through_loops_and_ifs_match_pytorch() -> None:
    """Nodes left outside every DifferentiableGraph (here, in a loop body) still
    get autograd, through singleton differentiable ops."""
    from .test_executor_trace import LOOP_AND_IF

    rng = np.random.default_rng(0)
    for n, flag in ((0, True), (2, True), (3, False)):
        data = rng.standard_normal((3, 4))
        x = Tensor(data.copy(), requires_grad=True)
        (result,) = GraphExecutor(parse_ir(LOOP_AND_IF)).run([x, n, flag])
        result.sum().backward()
        t_x = torch.tensor(data, requires_grad=True)
        value = torch.sigmoid(torch.tanh(t_x) * t_x)
        for _ in range(n):
            value = torch.tanh(value * t_x)
        expected = torch.exp(value) if flag else value
        expected.sum().backward()
        np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-7)
        np.testing.assert_allclose(x.grad.numpy(), t_x.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_scripted_training_loop_matches_pytorch() -> None:
    """Acceptance 1's shape: the loss written with gradview.ir.script, 20 SGD steps
    through GraphExecutor, losses equal the same loop in PyTorch."""
    from gradview.runtime import script

    from .scripted_training import SHAPES as MLP_SHAPES
    from .scripted_training import mlp_loss

    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s) * 0.1 for s in MLP_SHAPES]
    loss_fn = script(mlp_loss)
    x, target = Tensor(values[0]), Tensor(values[1])
    params = [Tensor(v.copy(), requires_grad=True) for v in values[2:]]
    t_values = [torch.tensor(v) for v in values[:2]]
    t_params = [torch.tensor(v.copy(), requires_grad=True) for v in values[2:]]
    for _ in range(20):
        loss = loss_fn(x, target, *params)
        loss.backward()
        t_loss = mlp_loss(*t_values, *t_params)
        t_loss.backward()
        np.testing.assert_allclose(loss.detach().numpy(), t_loss.item(), rtol=1e-7)
        for p, tp in zip(params, t_params, strict=True):
            p.data = p.data - 0.1 * p.grad.numpy()
            p.grad = None
            with torch.no_grad():
                tp -= 0.1 * tp.grad
            tp.grad = None
    assert loss_fn.executor.cache_misses == 1 and loss_fn.executor.cache_hits == 19


def test_gradients_handed_to_leaves_are_never_shared() -> None:
    """The first gradient of a leaf may be taken over instead of copied; two
    leaves must still never share one buffer (add passes its gradient through
    to both operands)."""
    graph = parse_ir("""graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%a, %b, %one)
  %t : Tensor = aten::tanh(%s)
  return (%t)
""")
    a = Tensor(np.ones((2, 3)), requires_grad=True)
    b = Tensor(np.ones((2, 3)) * 2, requires_grad=True)
    for _ in range(2):
        (out,) = GraphExecutor(graph).run([a, b])
        out.sum().backward()
    assert a.grad.data is not b.grad.data
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    np.testing.assert_allclose(a.grad.numpy(), 2 * (1 - np.tanh(3.0) ** 2))


def test_gradients_through_tensor_lists_match_pytorch() -> None:
    """A list built with append in a loop and joined with cat: DifferentiableGraphOp
    flattens the list into one edge per element and restores it around df."""
    from gradview.runtime import script

    from ..ir.frontend.scripted_fns import appended

    compiled = script(appended)
    for n in (0, 3, 10):
        data = np.random.default_rng(n).standard_normal((2, 3))
        x = Tensor(data.copy(), requires_grad=True)
        out = compiled(x, n)
        (out * out).sum().backward()
        t_x = torch.tensor(data, requires_grad=True)
        expected = appended(t_x, n)
        (expected * expected).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-7)
        np.testing.assert_allclose(x.grad.numpy(), t_x.grad.numpy(), rtol=1e-7)


def test_a_group_too_small_to_keep_still_gets_gradients() -> None:
    # tanh(sigmoid(x)) makes a DifferentiableGraph of two nodes, below the
    # inlining threshold: InlineAutodiffSubgraphs pastes it back, and its
    # nodes must then run with autograd like any other node outside a group.
    graph = parse_ir(
        "graph(%x : Tensor):\n"
        "  %t : Tensor = aten::sigmoid(%x)\n"
        "  %u : Tensor = aten::tanh(%t)\n"
        "  return (%u)\n"
    )
    array = np.random.default_rng(2).standard_normal((2, 3))
    x = Tensor(array.copy(), requires_grad=True)
    (out,) = GraphExecutor(graph).run([x])
    assert out.requires_grad
    out.backward(Tensor(np.ones_like(array)))
    reference = torch.tensor(array, requires_grad=True)
    torch.tanh(torch.sigmoid(reference)).backward(torch.ones(2, 3, dtype=torch.float64))
    np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy(), rtol=1e-12)
