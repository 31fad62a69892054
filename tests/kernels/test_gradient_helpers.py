"""The kernels gradient formulas use: value_selecting_reduction_backward
against PyTorch's op of that name, and gradview::matmul_grad_self/_other
against torch.autograd's gradients of torch.matmul, for every rank combination."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import get_backend
from gradview.kernels.protocol import KernelError
from gradview.ops import kernel_for


def _run(backend: str, name: str, *args: object) -> np.ndarray:
    """The kernel on the backend conftest.py picked, arrays moved there and back."""
    chosen = get_backend(backend)
    moved = [chosen.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    return np.asarray(chosen.to_host(kernel_for(name)(chosen.xp, *moved)))


@pytest.mark.parametrize(("shape", "dim", "keepdim"), [((2, 3, 4), 1, False), ((2, 3, 4), -1, True), ((5,), 0, False), ((3, 1), 0, True)])
def test_value_selecting_reduction_backward_like_torch(
    backend: str, shape: tuple[int, ...], dim: int, keepdim: bool
) -> None:
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(shape))
    values, indices = x.max(dim, keepdim=keepdim)
    grad = torch.tensor(rng.standard_normal(tuple(values.shape)))
    expected = torch.ops.aten.value_selecting_reduction_backward(grad, dim, indices, list(shape), keepdim)
    ours = _run(backend, "aten::value_selecting_reduction_backward", grad.numpy(), dim, indices.numpy(), list(shape), keepdim)
    np.testing.assert_array_equal(ours, expected.numpy())
    assert ours.dtype == np.float64


def test_value_selecting_reduction_backward_topk_and_0d(backend: str) -> None:
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((3, 5)))
    values, indices = x.topk(2, 1)
    grad = torch.tensor(rng.standard_normal((3, 2)))
    expected = torch.ops.aten.value_selecting_reduction_backward(grad, 1, indices, [3, 5], True)
    name = "aten::value_selecting_reduction_backward"
    np.testing.assert_array_equal(_run(backend, name, grad.numpy(), 1, indices.numpy(), [3, 5], True), expected.numpy())
    assert _run(backend, name, np.array(2.5), 0, np.array(0), [], False) == 2.5
    with pytest.raises(KernelError, match="do not fit"):
        _run(backend, name, grad.numpy(), 1, indices.numpy(), [3, 5, 1], True)


SHAPES = [
    ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES, ids=str)
def test_matmul_grads_like_torch(backend: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    a = torch.tensor(rng.standard_normal(a_shape), requires_grad=True)
    b = torch.tensor(rng.standard_normal(b_shape), requires_grad=True)
    out = torch.matmul(a, b)
    grad = torch.tensor(rng.standard_normal(tuple(out.shape)))
    grad_a, grad_b = torch.autograd.grad(out, (a, b), grad)
    g = grad.numpy()
    ours_a = _run(backend, "gradview::matmul_grad_self", g, b.detach().numpy(), list(a_shape))
    ours_b = _run(backend, "gradview::matmul_grad_other", g, a.detach().numpy(), list(b_shape))
    np.testing.assert_allclose(ours_a, grad_a.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_b, grad_b.numpy(), rtol=1e-12, atol=1e-12)
