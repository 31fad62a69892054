"""Softmax kernels (kernels/softmax.py) against PyTorch, on seeded random inputs through
gradview's interpreter: softmax, log_softmax, _softmax/_log_softmax (half_to_float),
_safe_softmax (masked rows give zeros) and the backward kernels (with seeded_checks.py's
helpers).

Values agree to 1e-6 relative in float64 (1e-5 in float32), dtypes and shapes
exactly; a float16 softmax's gradient is checked to 2e-3.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.ir import IntType
from gradview.runtime import GraphRuntimeError
from tests.kernels import reduction_cases
from tests.kernels.oracle import Typed, check_op, op_graph, random_array
from tests.kernels.reduction_cases import (
    SHAPES,
    check_close,
    one_dim,
    rand_values,
    random_shape,
    some_dims,
)
from tests.kernels.seeded_checks import (
    DOUBLE,
    FLOAT32,
    HALF,
    SEEDS,
    as_torch,
    check,
    expect_error,
    randn,
    run_graph,
)


def test_softmax_backward_errors() -> None:
    x = np.ones((2, 3))
    expect_error("aten::_softmax_backward_data", [x, x, 2, DOUBLE], "dim 2 is out of range")
    expect_error("aten::_log_softmax_backward_data", [x.astype(np.int64)] * 2 + [1, DOUBLE], "floating-point")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_backward(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(5,), (3, 4), (2, 3, 4), (), (4, 1, 3)][seed]
    x, grad = randn(rng, *shape, dtype=dtype), randn(rng, *shape, dtype=dtype)
    input_dtype = DOUBLE if dtype is np.float64 else FLOAT32
    for dim in range(-max(len(shape), 1), max(len(shape), 1)):
        y = torch.softmax(as_torch(x), dim).numpy()
        check("aten::_softmax_backward_data", [grad, y, dim, input_dtype])
        log_y = torch.log_softmax(as_torch(x), dim).numpy()
        check("aten::_log_softmax_backward_data", [grad, log_y, dim, input_dtype])


def test_softmax_backward_of_half_to_float() -> None:
    rng = np.random.default_rng(3)
    x, grad = randn(rng, 3, 4, dtype=np.float32), randn(rng, 3, 4, dtype=np.float32)
    y = torch.softmax(as_torch(x), 1).numpy()
    graph, inputs = op_graph("aten::_softmax_backward_data", [grad, y, 1, HALF])
    (out,) = run_graph(graph, inputs)
    assert out.dtype == np.float16  # the gradient goes back to the float16 input's dtype
    expected = y * (grad - (grad * y).sum(1, keepdims=True))
    np.testing.assert_allclose(out, expected, rtol=2e-3, atol=2e-3)


# -- softmax -----------------------------------------------------------------------
SOFTMAX_OPS = ["aten::softmax.int", "aten::log_softmax.int"]
PRIVATE_SOFTMAX_OPS = ["aten::_softmax", "aten::_log_softmax"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", reduction_cases.SEEDS)
def test_softmax(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype) * 30  # large logits: the shift keeps exp finite
    for op in SOFTMAX_OPS:
        check_close(op, [x, one_dim(rng, x.ndim), None])
        check_close(op, [x, one_dim(rng, x.ndim), DOUBLE])
    for op in PRIVATE_SOFTMAX_OPS:
        check_close(op, [x, one_dim(rng, x.ndim), False])


@pytest.mark.parametrize("seed", reduction_cases.SEEDS)
def test_softmax_of_integers_with_dtype(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), np.int64)
    for op in SOFTMAX_OPS:
        check_close(op, [x, one_dim(rng, x.ndim), DOUBLE])
        graph, inputs = op_graph(op, [x, 0, None])
        with pytest.raises(GraphRuntimeError, match="floating-point"):
            run_graph(graph, inputs)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_softmax_extremes_match_torch() -> None:
    x = np.array([[1e308, -1e308, 0.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 1.0], [np.inf, 0.0, 1.0]])
    for op in SOFTMAX_OPS:
        check_close(op, [x, 1, None])
    check_close("aten::softmax.int", [np.zeros((0, 3)), 0, None])


def test_softmax_half_to_float() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float16)
    for op, fn in (("aten::_softmax", torch.softmax), ("aten::_log_softmax", torch.log_softmax)):
        graph, inputs = op_graph(op, [x, -1, True])
        (out,) = run_graph(graph, inputs)
        assert out.dtype == np.float32  # the CUDA behaviour; PyTorch's CPU kernels refuse the flag
        expected = fn(torch.from_numpy(x).float(), -1).numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
        graph, inputs = op_graph(op, [x.astype(np.float64), -1, True])
        with pytest.raises(GraphRuntimeError, match="float16"):
            run_graph(graph, inputs)


# -- _safe_softmax ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", reduction_cases.SEEDS)
def test_safe_softmax(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = random_array(rng, shape, np.float64)
        check_op("aten::_safe_softmax", [x, some_dims(rng, x.ndim)[0], None])
    x = random_array(rng, (3, 4), np.float32)
    check_op("aten::_safe_softmax", [x, 1, Typed(7, IntType())])


def test_safe_softmax_of_masked_rows_is_zero() -> None:
    inf = math.inf
    x = np.array([[-inf, -inf, -inf], [0.0, -inf, 1.0], [-inf, 2.0, -inf]])
    for dim in (0, 1, -1):
        check_op("aten::_safe_softmax", [x, dim, None])
    check_op("aten::_safe_softmax", [np.array(-inf), 0, None])
    check_op("aten::_safe_softmax", [np.zeros((0, 3)), 1, None])
