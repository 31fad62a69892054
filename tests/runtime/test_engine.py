"""The backward engine and the FunctionNode/attach hook."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd
from gradview.runtime.autograd.engine import topological_order
from gradview.runtime.autograd.function import (
    SECOND_BACKWARD_MESSAGE,
    AccumulateGrad,
    FunctionNode,
    attach,
)


def test_ten_thousand_op_chain_has_no_recursion() -> None:
    assert sys.getrecursionlimit() < 10_000
    x = Tensor(np.array([0.5, -0.25]), requires_grad=True)
    y = x
    for _ in range(5_000):
        y = (y * 0.999).tanh()
    loss = y.sum()
    assert len(topological_order([loss.grad_fn])) == 10_002  # 10,000 ops + sum + accumulator
    loss.backward(retain_graph=True)

    xt = torch.tensor([0.5, -0.25], dtype=torch.float64, requires_grad=True)
    yt = xt
    for _ in range(5_000):
        yt = (yt * 0.999).tanh()
    yt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)

    (g,) = autograd.grad(loss, x)
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-10)
    del y, loss, g
    gc.collect()


def test_long_chain_of_additions_and_second_order() -> None:
    x = Tensor(np.array(1.5), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y + x * x * 1e-4
    (g,) = autograd.grad(y, x, create_graph=True)
    (gg,) = autograd.grad(g, x)
    np.testing.assert_allclose(g.item(), 1 + 2 * 1.5, rtol=1e-9)
    np.testing.assert_allclose(gg.item(), 2.0, rtol=1e-9)


def test_diamond_accumulates_each_path_once() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    a = x * 3
    b = a.exp()
    c = a * a
    (b + c + a).sum().backward()
    expected = 3 * np.exp(3 * x.data) + 2 * 9 * x.data + 3
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_leaf_as_output_and_as_input() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    x.backward(Tensor(np.array([3.0, 4.0])))
    assert x.grad.numpy().tolist() == [3.0, 4.0]
    given = Tensor(np.array([1.0, 1.0]))
    x.backward(given)
    assert x.grad.numpy().tolist() == [4.0, 5.0] and given.numpy().tolist() == [1.0, 1.0]
    (g,) = autograd.grad(x, x, Tensor(np.array([5.0, 6.0])))
    assert g.numpy().tolist() == [5.0, 6.0]


def test_release_frees_saved_state_and_only_that() -> None:
    x = Tensor(np.ones(3), requires_grad=True)
    y = (x * x).sum()
    mul = y.grad_fn.next_edges[0][0]
    y.backward()
    assert mul.released and mul.backward_fn is None
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    # Nodes that saved nothing run again, as in PyTorch: (x + 2).sum() twice works there too.
    z = (x + 2).sum()
    z.backward()
    z.backward()
    zt = (torch.ones(3, requires_grad=True) + 2).sum()
    zt.backward()
    zt.backward()


def test_retain_graph_keeps_nodes() -> None:
    x = Tensor(np.ones(3), requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    assert not y.grad_fn.next_edges[0][0].released
    y.backward(retain_graph=False)
    assert x.grad.numpy().tolist() == [4.0, 4.0, 4.0]
    assert y.grad_fn.next_edges[0][0].released


def test_only_needed_nodes_run_for_grad() -> None:
    calls = []
    x = Tensor(np.ones(2), requires_grad=True)
    w = Tensor(np.ones(2), requires_grad=True)
    h = x * 2

    def record(name):
        def backward_fn(grads):
            calls.append(name)
            return [grads[0]]

        return backward_fn

    left = Tensor(h.data.copy())
    attach(FunctionNode("Left", record("left"), [h]), [left])
    right = Tensor(w.data.copy())
    attach(FunctionNode("Right", record("right"), [w]), [right])
    (g,) = autograd.grad((left + right).sum(), h)
    assert calls == ["left"] and g.numpy().tolist() == [1.0, 1.0]
    assert x.grad is None and w.grad is None


# ----- the executor's hook -------------------------------------------------------


def test_function_node_two_outputs_and_a_non_tensor_input() -> None:
    a = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    scale = 2.0

    def backward_fn(grad_outputs):
        g_sum, g_scaled = grad_outputs
        total = np.zeros(3)
        if g_sum is not None:
            total = total + g_sum  # broadcast: the engine sums back to the input's shape
        if g_scaled is not None:
            total = total + g_scaled * scale
        return [total, None]

    node = FunctionNode("SplitBackward", backward_fn, [a, scale])
    assert node.requires_grad and node.next_edges[1] == (None, 0)
    outs = [Tensor(np.array(a.data.sum())), Tensor(a.data * scale)]
    assert attach(node, outs)
    assert [o.grad_fn for o in outs] == [node, node] and [o.output_nr for o in outs] == [0, 1]
    assert all(o.requires_grad and not o.is_leaf for o in outs)
    assert isinstance(node.next_edges[0][0], AccumulateGrad)

    (outs[1] * outs[1]).sum().backward(retain_graph=True)  # only output 1 gets a gradient
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.data * scale * scale)
    a.grad = None
    autograd.backward(outs, [Tensor(np.array(1.0)), Tensor(np.ones(3))])
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 1.0 + scale))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        outs[0].backward()


def test_function_node_feeds_eager_graph_and_vice_versa() -> None:
    x = Tensor(np.array([0.3, -0.7]), requires_grad=True)
    h = x.tanh()  # eager node below the hook
    out = Tensor(h.data**2)
    attach(FunctionNode("SquareBackward", lambda g: [g[0] * 2 * h.data], [h]), [out])
    loss = (out * 3).sum()  # eager node above
    loss.backward()
    xt = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    (xt.tanh() ** 2 * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


def test_attach_is_a_no_op_without_grad() -> None:
    plain = Tensor(np.ones(2))
    out = Tensor(np.ones(2))
    assert not attach(FunctionNode("F", lambda g: [g[0]], [plain, 3]), [out])
    assert out.grad_fn is None and not out.requires_grad
    x = Tensor(np.ones(2), requires_grad=True)
    with autograd.no_grad():
        assert not attach(FunctionNode("F", lambda g: [g[0]], [x]), [out])
    assert out.grad_fn is None


def test_invalid_gradient_shape_is_rejected_like_torch() -> None:
    a = Tensor(np.ones((2, 3)), requires_grad=True)
    out = Tensor(a.data.copy())
    attach(FunctionNode("FBackward", lambda g: [np.ones(4)], [a]), [out])
    message = (
        r"Function FBackward returned an invalid gradient at index 0 - got \[4\] but expected "
        r"shape compatible with \[2, 3\]"
    )
    with pytest.raises(RuntimeError, match=message):
        out.sum().backward()

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return torch.ones(4)

    with pytest.raises(RuntimeError, match=message):
        F.apply(torch.ones(2, 3, requires_grad=True)).sum().backward()


def test_wrong_number_of_gradients() -> None:
    a = Tensor(np.ones(2), requires_grad=True)
    out = Tensor(a.data.copy())
    attach(FunctionNode("G", lambda g: [g[0], g[0]], [a]), [out])
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        out.sum().backward()


def test_gradient_is_cast_to_the_input_dtype() -> None:
    a = Tensor(np.ones(2, np.float32), requires_grad=True)
    out = Tensor(a.data.copy())
    attach(FunctionNode("H", lambda g: [g[0].astype(np.float64)], [a]), [out])
    out.sum().backward()
    assert a.grad.dtype == np.float32


def test_released_function_node_message() -> None:
    a = Tensor(np.ones(2), requires_grad=True)
    node = FunctionNode("K", lambda g: [g[0]], [a])
    node.release()
    with pytest.raises(RuntimeError) as info:
        node.apply([Tensor(np.ones(2))])
    assert str(info.value) == SECOND_BACKWARD_MESSAGE
    keep = FunctionNode("K", lambda g: [g[0]], [a], saves_state=False)
    keep.release()
    assert keep.apply([Tensor(np.ones(2))])[0].numpy().tolist() == [1.0, 1.0]


def test_double_backward_through_hook_is_constant() -> None:
    # A non-differentiable backward_fn yields constants in a create_graph pass.
    a = Tensor(np.array([2.0]), requires_grad=True)
    out = Tensor(a.data**2)
    attach(FunctionNode("Sq", lambda g: [g[0] * 2 * a.data], [a]), [out])
    (g,) = autograd.grad(out.sum(), a, create_graph=True)
    assert g.numpy().tolist() == [4.0] and not g.requires_grad
