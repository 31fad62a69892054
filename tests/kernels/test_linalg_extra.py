"""baddbmm and bilinear against ``torch.ops.aten``; bilinear_backward against torch.autograd."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels.oracle import check_op, op_graph, random_array

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("self_shape", [(2, 3, 4), (3, 4), (4,), (1, 3, 1), ()])
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
def test_baddbmm(dtype: type, self_shape: tuple, beta: float, alpha: float) -> None:
    s = random_array(RNG, self_shape, dtype)
    b1, b2 = random_array(RNG, (2, 3, 5), dtype), random_array(RNG, (2, 5, 4), dtype)
    check_op("aten::baddbmm", [s, b1, b2, beta, alpha], rtol=1e-5, atol=1e-6 if dtype == np.float32 else 1e-12)


def test_baddbmm_nan_rules() -> None:
    """beta=0 hides NaN in self; alpha=0 still shows NaN in the product (PyTorch's CPU kernel)."""
    nan_self = np.full((3, 4), math.nan)
    b1, b2 = random_array(RNG, (2, 3, 5), np.float64), random_array(RNG, (2, 5, 4), np.float64)
    check_op("aten::baddbmm", [nan_self, b1, b2, 0, 1])
    check_op("aten::baddbmm", [np.ones((3, 4)), np.full((2, 3, 5), math.nan), b2, 1, 0])


def test_baddbmm_errors() -> None:
    b1, b2 = random_array(RNG, (2, 3, 5), np.float64), random_array(RNG, (2, 5, 4), np.float64)
    for args, match in [
        ([np.ones((2, 3, 4), dtype=np.float32), b1, b2, 1, 1], "dtypes must be the same"),
        ([np.ones((2, 3, 4)), b1, b2[:, :4], 1, 1], "cannot be multiplied"),
        ([np.ones((2, 3, 5)), b1, b2, 1, 1], "expand|broadcast|size"),
    ]:
        graph, inputs = op_graph("aten::baddbmm", args)
        with pytest.raises(GraphRuntimeError, match=match):
            run_graph(graph, inputs)


def test_baddbmm_dtype_follows_the_cuda_rule() -> None:
    """PyTorch runs baddbmm.dtype on CUDA only: float16 batches give float32."""
    b1 = random_array(RNG, (2, 3, 5), np.float16)
    b2 = random_array(RNG, (2, 5, 4), np.float16)
    out = KERNELS["aten::baddbmm.dtype"](np, np.zeros((3, 4), np.float32), b1, b2, 6)
    assert out.dtype == np.float32
    expected = torch.baddbmm(torch.zeros(3, 4), torch.from_numpy(b1).float(), torch.from_numpy(b2).float())
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-3)


@pytest.mark.parametrize(("a", "b"), [((4, 3), (4, 5)), ((2, 4, 3), (2, 4, 5)), ((3,), (5,))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bilinear(a: tuple, b: tuple, with_bias: bool) -> None:
    x1, x2 = random_array(RNG, a, np.float64), random_array(RNG, b, np.float64)
    w = random_array(RNG, (2, 3, 5), np.float64)
    bias = random_array(RNG, (2,), np.float64) if with_bias else None
    check_op("aten::bilinear", [x1, x2, w, bias])
    leaves = [torch.tensor(v, requires_grad=True) for v in (x1, x2, w)]
    tb = torch.tensor(bias, requires_grad=True) if with_bias else None
    out = torch.ops.aten.bilinear(*leaves, tb)
    grad = torch.randn(out.shape, dtype=torch.float64)
    expected = torch.autograd.grad(out, leaves + ([tb] if with_bias else []), grad)
    ours = KERNELS["gradview::bilinear_backward"](np, grad.numpy(), x1, x2, w, [True, True, True, with_bias])
    for got, theirs in zip(ours, expected, strict=False):
        np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-10)


def test_bilinear_batch_dims_must_match() -> None:
    graph, inputs = op_graph("aten::bilinear", [np.ones((4, 3)), np.ones((1, 5)), np.ones((2, 3, 5)), None])
    with pytest.raises(GraphRuntimeError, match="batch dimensions do not match"):
        run_graph(graph, inputs)
