"""nn kernels (kernels/nn.py) against PyTorch: layer/batch norm, max
pooling and their backward kernels, on seeded random inputs through
gradview's interpreter.

Values agree to 1e-6 relative in float64 (1e-5 in float32), dtypes and shapes
exactly (dropout's kernels are test_dropout.py's).
test_softmax.py shares this module's helpers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import Graph, node_summary
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph

SEEDS = range(5)
DOUBLE, FLOAT32, HALF = 7, 6, 5  # TorchScript ScalarType numbers


def run_graph(graph: Graph, inputs: list) -> list:
    """Run on the backend tests/kernels/conftest.py picked for this test."""
    return _run_graph(graph, inputs, backend=getattr(oracle, "BACKEND", "numpy"))


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-6, atol=1e-6 if f32 else 1e-12)


def _randn(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _expect_error(op: str, args: list, message: str) -> GraphRuntimeError:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message) as info:
        run_graph(graph, inputs)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)
    return info.value


def _t(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array))


# -- layer norm ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(6,), (3, 5), (2, 3, 4), (2, 3, 4, 5)][seed % 4]
    x = _randn(rng, *shape, dtype=dtype) * 3 + 1
    for k in range(1, len(shape) + 1):
        normalized = list(shape[-k:])
        w = _randn(rng, *normalized, dtype=dtype)
        b = _randn(rng, *normalized, dtype=dtype)
        eps = float(rng.choice([1e-5, 1e-3]))
        for weight, bias in ((None, None), (w, None), (None, b), (w, b)):
            _check("aten::native_layer_norm", [x, normalized, weight, bias, eps])
            _check("aten::layer_norm", [x, normalized, weight, bias, eps, True])


def test_layer_norm_shape_errors() -> None:
    x = np.ones((2, 3, 4))
    _expect_error("aten::native_layer_norm", [x, [3], None, None, 1e-5], r"normalized_shape=\[3\]")
    _expect_error("aten::layer_norm", [x, [4], np.ones(3), None, 1e-5, True], "weight must have shape")
    _expect_error("aten::native_layer_norm", [x.astype(np.int64), [4], None, None, 1e-5], "floating-point")


@pytest.mark.parametrize("seed", SEEDS)
def test_native_layer_norm_backward(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [(4, 6), (2, 3, 5), (2, 3, 4, 2)][seed % 3]
    k = 1 + seed % (len(shape) - 1)
    normalized = list(shape[-k:])
    x, grad = _randn(rng, *shape), _randn(rng, *shape)
    w, b = _randn(rng, *normalized), _randn(rng, *normalized)
    _, mean, rstd = (t.numpy() for t in torch.ops.aten.native_layer_norm(_t(x), normalized, _t(w), _t(b), 1e-5))
    for mask in ([True, True, True], [True, False, False], [False, True, True], [False, False, True]):
        _check("aten::native_layer_norm_backward", [grad, x, normalized, mean, rstd, w, b, mask])
    _check("aten::native_layer_norm_backward", [grad, x, normalized, mean, rstd, None, None, [True, False, False]])


# -- batch norm ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_native_batch_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(4, 3), (2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 2, 2), (3, 2, 1)][seed]
    c = shape[1]
    x = _randn(rng, *shape, dtype=dtype) * 2 + 0.5
    w, b = _randn(rng, c, dtype=dtype), _randn(rng, c, dtype=dtype)
    running_mean = _randn(rng, c, dtype=dtype)
    running_var = np.asarray(rng.random(c) + 0.5, dtype=dtype)
    for weight, bias in ((None, None), (w, b), (w, None)):
        for stats in ((None, None), (running_mean, running_var)):
            args = [x, weight, bias, *stats, True, 0.1, 1e-5]
            _check("aten::native_batch_norm", args)
            _check("aten::batch_norm", [*args, True])
        args = [x, weight, bias, running_mean, running_var, False, 0.1, 1e-3]
        _check("aten::native_batch_norm", args)
        _check("aten::batch_norm", [*args, True])


def test_batch_norm_of_one_value_per_channel() -> None:
    x = _randn(np.random.default_rng(1), 1, 3)  # zero variance: the output is the bias
    for training in (True, False):
        _check("aten::native_batch_norm", [x, None, np.ones(3), np.zeros(3), np.ones(3), training, 0.1, 1e-5])


def test_batch_norm_updates_running_stats_in_place() -> None:
    """As PyTorch's: momentum 0.1, the unbiased variance (test_normalization.py compares with torch)."""
    if oracle.BACKEND != "numpy":
        pytest.skip("host arrays are copied to the device: the update lands on the copy")
    rng = np.random.default_rng(0)
    x = _randn(rng, 4, 3, 2)
    running_mean, running_var = np.zeros(3), np.ones(3)
    graph, inputs = op_graph("aten::native_batch_norm", [x, None, None, running_mean, running_var, True, 0.1, 1e-5])
    out, save_mean, save_invstd = run_graph(graph, inputs)
    np.testing.assert_allclose(running_mean, 0.1 * x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(running_var, 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1), rtol=1e-12)
    np.testing.assert_allclose(save_mean, x.mean(axis=(0, 2)), rtol=1e-12)


def test_batch_norm_errors() -> None:
    x = np.ones((2, 3, 4))
    _expect_error("aten::native_batch_norm", [x, None, None, None, None, False, 0.1, 1e-5], "running_mean")
    _expect_error("aten::batch_norm", [x, np.ones(4), None, None, None, True, 0.1, 1e-5, True], r"weight must have shape \[3\]")
    _expect_error("aten::native_batch_norm", [np.ones(3), None, None, None, None, True, 0.1, 1e-5], "at least 2 dims")


@pytest.mark.parametrize("seed", SEEDS)
def test_native_batch_norm_backward(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [(5, 3), (2, 3, 4), (2, 3, 4, 2)][seed % 3]
    c = shape[1]
    x, grad, w = _randn(rng, *shape), _randn(rng, *shape), _randn(rng, c)
    running_mean, running_var = _randn(rng, c), rng.random(c) + 0.5
    _, save_mean, save_invstd = (
        t.numpy() for t in torch.ops.aten.native_batch_norm(_t(x), _t(w), None, None, None, True, 0.1, 1e-5)
    )
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        for weight in (w, None):
            _check("aten::native_batch_norm_backward",
                   [grad, x, weight, None, None, save_mean, save_invstd, True, 1e-5, mask])
            _check("aten::native_batch_norm_backward",
                   [grad, x, weight, running_mean, running_var, None, None, False, 1e-5, mask])


# -- max pooling -------------------------------------------------------------------
def _pool_case(rng: np.random.Generator) -> tuple[list, list, list, list, bool]:
    kernel = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    stride = [] if rng.random() < 0.3 else [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    padding = [int(rng.integers(0, k // 2 + 1)) for k in kernel]
    dilation = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    return kernel, stride, padding, dilation, bool(rng.random() < 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("seed", range(8))
def test_max_pool2d(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = (2, 3, 7, 8) if seed % 2 else (3, 6, 9)
    # Integers have ties: the index is the first maximum's, as in PyTorch.
    x = rng.integers(-4, 5, shape) if dtype is np.int64 else _randn(rng, *shape, dtype=dtype)
    for _ in range(3):
        args = [x, *_pool_case(rng)]
        _check("aten::max_pool2d", args)
        _check("aten::max_pool2d_with_indices", args)


def test_max_pool2d_scalar_arguments_and_edge_values() -> None:
    rng = np.random.default_rng(0)
    x = _randn(rng, 1, 2, 6, 6)
    _check("aten::max_pool2d", [x, 3, 2, 1, 1, True])  # int for int[2]
    _check("aten::max_pool2d_with_indices", [x, [3], [], 1, [2], False])
    nan = np.array([[[[np.nan, 1.0, 2.0], [np.nan, 3.0, np.nan], [0.0, 5.0, 1.0]]]])
    _check("aten::max_pool2d_with_indices", [nan, [2, 2], [1, 1], [0, 0], [1, 1], False])
    low = np.full((1, 1, 3, 3), -np.inf)
    _check("aten::max_pool2d_with_indices", [low, [2, 2], [1, 1], [1, 1], [1, 1], True])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([np.ones((2, 3, 4, 4)), [2, 2], [0, 1], [0, 0], [1, 1], False], "stride must be positive"),
        ([np.ones((2, 3, 4, 4)), [2, 2], [1, 1], [2, 0], [1, 1], False], "at most half"),
        ([np.ones((2, 3, 4, 4)), [2, 2], [1, 1, 1], [0, 0], [1, 1], False], "single int or two ints"),
        ([np.ones((4, 4)), [2, 2], [], [0, 0], [1, 1], False], "3-d"),
        ([np.ones((1, 1, 2, 2)), [3, 3], [], [0, 0], [1, 1], False], "output would be empty"),
        ([np.ones((1, 1, 2, 2), dtype=bool), [2, 2], [], [0, 0], [1, 1], False], "bool"),
    ],
)
def test_max_pool2d_errors(args: list, message: str) -> None:
    _expect_error("aten::max_pool2d", args, message)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(6))
def test_max_pool2d_with_indices_backward(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = (2, 2, 7, 6) if seed % 2 else (3, 8, 5)
    x = _randn(rng, *shape, dtype=dtype)
    kernel, stride, padding, dilation, ceil = _pool_case(rng)
    out, indices = torch.ops.aten.max_pool2d_with_indices(_t(x), kernel, stride, padding, dilation, ceil)
    grad = _randn(rng, *out.shape, dtype=dtype)
    _check("aten::max_pool2d_with_indices_backward",
           [grad, x, kernel, stride or kernel, padding, dilation, ceil, indices.numpy()])
