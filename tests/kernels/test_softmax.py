"""Softmax's backward kernels (kernels/softmax.py) against PyTorch, on seeded
random inputs through gradview's interpreter, with seeded_checks.py's helpers.

Values agree to 1e-6 relative in float64 (1e-5 in float32), dtypes and shapes
exactly; a float16 softmax's gradient is checked to 2e-3.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.kernels.oracle import op_graph
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
