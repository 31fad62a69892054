"""Eager tensors: metadata, and each differentiable operation against PyTorch and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gradview.runtime.eager_ops as eager_ops
import gradview.runtime.tensor as tensor_module
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad, no_grad
from gradview.runtime.tensor import stack

from .test_eager_op_facts import aten_overloads

RNG = np.random.default_rng(0)


def both(*arrays: np.ndarray) -> tuple[list[Tensor], list[torch.Tensor]]:
    ours = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    return ours, theirs


def positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, size=shape)


def signed(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _stack(like):
    return torch.stack if isinstance(like, torch.Tensor) else stack


def _float32(like):
    return torch.float32 if isinstance(like, torch.Tensor) else np.float32


def _float64(like):
    return torch.float64 if isinstance(like, torch.Tensor) else np.float64


# (name, function written once for both libraries, input arrays)
CASES = [
    ("add", lambda a, b: a + b, (signed(2, 3), signed(2, 3))),
    ("add_broadcast", lambda a, b: a + b, (signed(2, 3), signed(3))),
    ("add_scalar", lambda a: 2.5 + a + 1, (signed(4),)),
    ("sub", lambda a, b: a - b, (signed(2, 3), signed(1, 3))),
    ("rsub", lambda a: 3 - a, (signed(3),)),
    ("mul", lambda a, b: a * b, (signed(2, 3), signed(2, 1))),
    ("mul_scalar", lambda a: a * 3 * a, (signed(3),)),
    ("div", lambda a, b: a / b, (signed(2, 3), positive(3))),
    ("rdiv", lambda a: 2 / a, (positive(3),)),
    ("neg", lambda a: -a, (signed(2, 2),)),
    ("pow_scalar", lambda a: a**3, (signed(5),)),
    ("pow_tensor", lambda a, b: a**b, (positive(3), signed(3))),
    ("rpow", lambda a: 2.0**a, (signed(3),)),
    ("matmul", lambda a, b: a @ b, (signed(2, 3), signed(3, 4))),
    ("matmul_method", lambda a, b: a.matmul(b).t(), (signed(3, 3), signed(3, 2))),
    ("matmul_vector", lambda a, b: a @ b, (signed(3), signed(3, 2))),
    ("matmul_batched", lambda a, b: a @ b, (signed(2, 3, 4), signed(4, 2))),
    ("rmatmul_array", lambda a: np.ones((2, 3)) @ a if isinstance(a, Tensor) else torch.ones(2, 3, dtype=a.dtype) @ a,
     (signed(3, 2),)),
    ("sum_all", lambda a: a.sum(), (signed(2, 3),)),
    ("sum_dim", lambda a: a.sum(1), (signed(2, 3),)),
    ("sum_dims_keepdim", lambda a: a.sum((0, 2), keepdim=True), (signed(2, 3, 4),)),
    ("sum_negative_dim", lambda a: a.sum(-1), (signed(2, 3),)),
    ("mean_all", lambda a: a.mean(), (signed(2, 3),)),
    ("mean_dim", lambda a: a.mean(0, keepdim=True), (signed(2, 3),)),
    ("tanh", lambda a: a.tanh(), (signed(4),)),
    ("sigmoid", lambda a: a.sigmoid(), (signed(4),)),
    ("relu", lambda a: a.relu(), (np.array([-1.0, -0.3, 0.4, 2.0]),)),
    ("exp", lambda a: a.exp(), (signed(4),)),
    ("log", lambda a: a.log(), (positive(4),)),
    ("t", lambda a: a.t(), (signed(2, 3),)),
    ("reshape", lambda a: a.reshape(3, 2) * a.reshape((2, 3)).t(), (signed(2, 3),)),
    ("sum_to_size", lambda a: a.sum_to_size((1, 3)), (signed(2, 3),)),
    ("to", lambda a: a.to(_float32(a)).to(_float64(a)) * a, (signed(3),)),
    ("select", lambda a: a.select(1, 2) * a.select(0, -1).sum(), (signed(2, 3, 4),)),
    ("stack", lambda a, b: _stack(a)([a, b * a, b]).tanh(), (signed(2, 3), signed(2, 3))),
    (
        "composite",
        lambda a, b: ((a @ b).tanh() * 2 - (a.sigmoid() / (b.t().exp() + 1)).t()).mean(),
        (signed(3, 3), signed(3, 3)),
    ),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_forward_and_grad_match_torch(name, fn, arrays) -> None:
    ours, theirs = both(*arrays)
    out, ref = fn(*ours), fn(*theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert out.dtype == np.float64 and out.shape == tuple(ref.shape)
    weights = signed(*out.shape)
    out.backward(Tensor(weights))
    ref.backward(torch.tensor(weights))
    for mine, other in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_second_derivatives_match_torch(name, fn, arrays) -> None:
    """create_graph: the gradients, computed with the op library's formulas, are differentiable too."""
    ours, theirs = both(*arrays)
    out, ref = fn(*ours), fn(*theirs)
    weights = signed(*out.shape)
    grads = grad((out * Tensor(weights)).sum(), ours, create_graph=True, allow_unused=True)
    ref_grads = torch.autograd.grad((ref * torch.tensor(weights)).sum(), theirs, create_graph=True, allow_unused=True)
    # A gradient that does not require grad is a constant (relu's mask times the weights):
    # PyTorch's may still require grad, and then its second derivative is zero.
    used = [i for i, g in enumerate(grads) if g is not None and g.requires_grad]
    ref_used = [i for i, g in enumerate(ref_grads) if g is not None and g.requires_grad]
    if used:
        sum(((grads[i] * grads[i]).sum() for i in used[1:]), (grads[used[0]] * grads[used[0]]).sum()).backward()
    if ref_used:
        sum((ref_grads[i] * ref_grads[i]).sum() for i in ref_used).backward()
    for mine, other in zip(ours, theirs, strict=True):
        expected = np.zeros(mine.shape) if other.grad is None else other.grad.numpy()
        got = np.zeros(mine.shape) if mine.grad is None else mine.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


# Cases whose result is rounded to float32 on the way: finite differences in float64 cannot see it.
ROUNDED = {"to"}


@pytest.mark.parametrize(
    "name,fn,arrays", [c for c in CASES if c[0] not in ROUNDED], ids=[c[0] for c in CASES if c[0] not in ROUNDED]
)
def test_grad_matches_finite_differences(name, fn, arrays) -> None:
    ours = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    out = fn(*ours)
    weights = signed(*out.shape)
    (out * Tensor(weights)).sum().backward()
    eps = 1e-6
    for index, array in enumerate(arrays):
        numeric = np.zeros_like(array)
        for position in np.ndindex(array.shape):
            shifted = []
            for sign in (1, -1):
                moved = [a.copy() for a in arrays]
                moved[index][position] += sign * eps
                with no_grad():
                    value = fn(*[Tensor(m) for m in moved])
                shifted.append(float((value.data * weights).sum()))
            numeric[position] = (shifted[0] - shifted[1]) / (2 * eps)
        np.testing.assert_allclose(ours[index].grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_float32_stays_float32() -> None:
    x = Tensor(np.ones(3, np.float32), requires_grad=True)
    y = (x * 2.0 + 1).tanh().sum()
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32


def test_metadata() -> None:
    data = np.arange(6.0).reshape(2, 3)
    x = Tensor(data, requires_grad=True)
    assert x.data is data and x.shape == (2, 3) and x.dtype == np.float64 and x.ndim == 2
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    assert x.output_nr == 0 and x.numel() == 6 and len(x) == 2
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name == "AccumulateGrad"
    assert "grad_fn=<MulBackward0>" in repr(y) and "requires_grad=True" in repr(x)
    d = y.detach()
    assert d.data is y.data and not d.requires_grad and d.is_leaf
    assert Tensor([1.0, 2.0]).dtype == np.float64
    assert Tensor(3.0).shape == ()
    assert (Tensor(np.float32(2)) * 3).item() == 6


def test_requires_grad_rules_match_torch() -> None:
    x = Tensor(np.ones(2))
    assert not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad and not (x * 2).requires_grad
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point dtype can require gradients"
    ):
        Tensor(np.array([1, 2]), requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        torch.tensor([1, 2]).requires_grad_()
    y = Tensor(np.ones(2), requires_grad=True) * 2
    y.requires_grad = True  # a non-leaf that requires grad: no-op, as in PyTorch
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        y.requires_grad = False
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        (torch.ones(2, requires_grad=True) * 2).requires_grad_(False)


def test_numpy_refuses_tensors_that_require_grad() -> None:
    message = r"Can't call numpy\(\) on Tensor that requires grad"
    with pytest.raises(RuntimeError, match=message):
        Tensor(np.ones(2), requires_grad=True).numpy()
    with pytest.raises(RuntimeError, match=message):
        torch.ones(2, requires_grad=True).numpy()
    assert Tensor(np.ones(2), requires_grad=True).detach().numpy().tolist() == [1.0, 1.0]


def test_no_grad_records_nothing() -> None:
    x = Tensor(np.ones(2), requires_grad=True)
    with no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None


def test_numpy_scalar_on_the_left() -> None:
    x = Tensor(np.ones(2), requires_grad=True)
    y = np.float64(3.0) * x
    assert isinstance(y, Tensor) and y.grad_fn is not None


def test_matmul_of_any_rank_runs_without_grad() -> None:
    assert (Tensor(np.ones(3)) @ Tensor(np.ones((3, 2)))).shape == (2,)


def test_every_op_tensor_exposes_is_compared_with_torch(monkeypatch) -> None:
    """The cases above run every overload runtime/tensor.py names (so each eager
    gradient is checked against PyTorch's, in float64, to 1e-10)."""
    plans: dict = {}
    monkeypatch.setattr(eager_ops, "_TENSOR_PLANS", plans)
    for _, fn, arrays in CASES:
        fn(*[Tensor(a, requires_grad=True) for a in arrays])
    seen = {key[0] for key in plans}
    named = {overload.split(".", 1)[0] for overload in aten_overloads(tensor_module)}
    assert named and not named - seen, f"no case runs {sorted(named - seen)}"


@pytest.mark.parametrize("other", [None, "a", [1.0, 2.0]], ids=["None", "str", "list"])
def test_an_operand_that_is_no_tensor_or_number_is_refused(other) -> None:
    with pytest.raises(TypeError):
        torch.ones(2, requires_grad=True) + other
    with pytest.raises(TypeError, match="aten::add takes tensors and numbers"):
        Tensor(np.ones(2), requires_grad=True) + other
