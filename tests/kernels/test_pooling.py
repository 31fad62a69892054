"""Pooling kernels against PyTorch: avg_pool2d and its backward over kernel sizes,
strides (default = kernel), paddings, ceil_mode, count_include_pad and
divisor_override on odd sizes, integer inputs (truncating division); the
adaptive average pools (1-d, 2-d, windows of unequal sizes, outputs larger
than the input) and their backward; max_pool2d over ceil_mode, padding and
dilation, its errors and its backward (kernels/pooling.py). Values to 1e-10 relative in float64, 1e-5 in float32.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call
from tests.kernels.seeded_checks import as_torch, check, expect_error, randn


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-10, atol=1e-5 if f32 else 1e-12)


def _refuses(op: str, args: list) -> None:
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError):
        _run_graph(graph, inputs, backend=oracle.BACKEND)


def _check_or_refuse(op: str, args: list) -> None:
    try:
        torch_call(op, args)
    except RuntimeError:
        _refuses(op, args)
        return
    _check(op, args)


def _x(seed: int, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- avg_pool2d -----------------------------------------------------------------------------------
POOLS = [
    # kernel, stride, padding
    ([2, 2], [], [0, 0]),
    ([3, 3], [2, 2], [1, 1]),
    ([3, 2], [1, 2], [1, 0]),
    ([2, 3], [3, 1], [1, 1]),
    ([1, 1], [2, 2], [0, 0]),
    ([3, 3], [], [1, 1]),
    ([4, 4], [3, 3], [2, 2]),
]


@pytest.mark.parametrize(("kernel", "stride", "padding"), POOLS, ids=str)
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 5])
def test_avg_pool2d(kernel: list, stride: list, padding: list, ceil_mode: bool, count_include_pad: bool,
                    divisor: int | None) -> None:
    for shape in ((2, 3, 7, 6), (3, 5, 9)):
        x = _x(len(shape), shape)
        args = [x, kernel, stride, padding, ceil_mode, count_include_pad, divisor]
        out = torch_call("aten::avg_pool2d", args)[0]
        _check("aten::avg_pool2d", args)
        grad = _x(1, tuple(out.shape))
        _check("aten::avg_pool2d_backward", [grad, *args])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_dtypes(dtype: type, count_include_pad: bool) -> None:
    """Integers divide with truncation toward zero (negative sums included)."""
    x = (_x(3, (2, 2, 7, 7)) * 10).astype(dtype)
    rtol = 1e-2 if dtype == np.float16 else 1e-5
    check_op("aten::avg_pool2d", [x, [3, 3], [2, 2], [1, 1], True, count_include_pad, None], rtol=rtol, atol=1e-3)
    check_op("aten::avg_pool2d", [x, [2, 2], [], [1, 1], False, count_include_pad, 3], rtol=rtol, atol=1e-3)


def test_avg_pool2d_single_values_and_empty_batch() -> None:
    _check("aten::avg_pool2d", [_x(0, (1, 2, 5, 5)), [2], [], [0], False, True, None])
    _check("aten::avg_pool2d", [_x(0, (0, 2, 5, 5)), [2, 2], [], [0, 0], False, True, None])


def test_avg_pool2d_refusals() -> None:
    x = _x(0, (1, 2, 5, 5))
    _refuses("aten::avg_pool2d", [x, [2, 2], [], [0, 0], False, True, 0])  # divisor 0
    _refuses("aten::avg_pool2d", [x, [2, 2], [], [2, 2], False, True, None])  # padding > kernel / 2
    _refuses("aten::avg_pool2d", [x, [2, 2, 2], [], [0, 0], False, True, None])
    _refuses("aten::avg_pool2d", [x > 0, [2, 2], [], [0, 0], False, True, None])  # bool
    _refuses("aten::avg_pool2d", [x.astype(np.int32), [2, 2], [], [0, 0], False, True, None])  # int64 only
    _refuses("aten::avg_pool2d", [x, [2, 2], [0, 1], [0, 0], False, True, None])  # stride 0


# -- adaptive average pooling ----------------------------------------------------------------------
@pytest.mark.parametrize(("size", "out"), list(itertools.product([(5, 7), (1, 4), (8, 3)], [[1, 1], [2, 3], [5, 7], [3, 9]])), ids=str)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adaptive_avg_pool2d(size: tuple[int, int], out: list[int], batched: bool, dtype: type) -> None:
    x = _x(sum(out), ((2, 3) if batched else (3,)) + size, dtype)
    for op in ("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d"):
        _check(op, [x, out])
    grad = _x(1, x.shape[:-2] + tuple(out), dtype)
    _check("aten::_adaptive_avg_pool2d_backward", [grad, x])


@pytest.mark.parametrize("length", [1, 5, 9])
@pytest.mark.parametrize("out", [1, 2, 4, 9, 11])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool1d(length: int, out: int, batched: bool) -> None:
    x = _x(length, ((2, 3) if batched else (3,)) + (length,))
    _check("aten::adaptive_avg_pool1d", [x, [out]])


@pytest.mark.parametrize(("size", "out"), [((5, 4, 6), [2, 3, 4]), ((3, 3, 3), [1, 1, 1]), ((2, 5, 3), [4, 5, 7])], ids=str)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adaptive_avg_pool3d(size: tuple[int, int, int], out: list[int], batched: bool, dtype: type) -> None:
    x = _x(sum(out), ((2, 3) if batched else (3,)) + size, dtype)
    for op in ("aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d"):
        _check(op, [x, out])
    grad = _x(1, x.shape[:-3] + tuple(out), dtype)
    _check("aten::_adaptive_avg_pool3d_backward", [grad, x])


def test_adaptive_avg_pool3d_refusals() -> None:
    x = _x(0, (1, 2, 3, 5, 5))
    _refuses("aten::adaptive_avg_pool3d", [x, [2, 2]])
    _refuses("aten::adaptive_avg_pool3d", [x[0, 0], [2, 2, 2]])  # 3-d input
    _refuses("aten::adaptive_avg_pool3d", [x.astype(np.int64), [2, 2, 2]])


def test_adaptive_pool_half_and_empty() -> None:
    check_op("aten::adaptive_avg_pool2d", [_x(0, (2, 3, 5, 5), np.float16), [2, 3]], rtol=1e-2, atol=1e-3)
    _check("aten::adaptive_avg_pool2d", [_x(0, (0, 3, 5, 5)), [2, 3]])  # no batch
    _check("aten::adaptive_avg_pool2d", [_x(0, (2, 3, 5, 5)), [0, 3]])  # an empty output dim


def test_adaptive_pool_refusals() -> None:
    x = _x(0, (1, 2, 5, 5))
    _refuses("aten::adaptive_avg_pool2d", [x, [2]])
    _refuses("aten::adaptive_avg_pool2d", [x, [-1, 2]])
    _refuses("aten::adaptive_avg_pool2d", [x[0, 0], [2, 2]])  # 2-d input
    _refuses("aten::adaptive_avg_pool2d", [x[:, :, :0], [2, 2]])  # an empty spatial dim
    _refuses("aten::adaptive_avg_pool2d", [x.astype(np.int64), [2, 2]])
    _refuses("aten::adaptive_avg_pool1d", [x, [2]])  # 4-d input


# -- max_pool2d ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation"), [
    ([2, 2], [], [0, 0], [1, 1]), ([3, 3], [2, 2], [1, 1], [1, 1]), ([3, 2], [2, 1], [1, 1], [2, 2]),
    ([2, 3], [3, 2], [1, 0], [2, 1]), ([3, 3], [1, 1], [1, 1], [3, 3]), ([1, 1], [2, 2], [0, 0], [1, 1]),
], ids=str)
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_geometries(kernel: list, stride: list, padding: list, dilation: list, ceil_mode: bool) -> None:
    for shape in ((2, 3, 7, 6), (3, 9, 8)):
        args = [_x(len(shape), shape), kernel, stride, padding, dilation, ceil_mode]
        _check_or_refuse("aten::max_pool2d", args)
        try:
            values, indices = torch_call("aten::max_pool2d_with_indices", args)
        except RuntimeError:
            continue
        _check("aten::max_pool2d_with_indices", args)
        grad = _x(2, tuple(values.shape))
        _check("aten::max_pool2d_with_indices_backward", [grad, *args, indices.numpy()])


# -- max_pool2d on seeded inputs, its errors and backward -----------------------------------------
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
    x = rng.integers(-4, 5, shape) if dtype is np.int64 else randn(rng, *shape, dtype=dtype)
    for _ in range(3):
        args = [x, *_pool_case(rng)]
        check("aten::max_pool2d", args)
        check("aten::max_pool2d_with_indices", args)


def test_max_pool2d_scalar_arguments_and_edge_values() -> None:
    rng = np.random.default_rng(0)
    x = randn(rng, 1, 2, 6, 6)
    check("aten::max_pool2d", [x, 3, 2, 1, 1, True])  # int for int[2]
    check("aten::max_pool2d_with_indices", [x, [3], [], 1, [2], False])
    nan = np.array([[[[np.nan, 1.0, 2.0], [np.nan, 3.0, np.nan], [0.0, 5.0, 1.0]]]])
    check("aten::max_pool2d_with_indices", [nan, [2, 2], [1, 1], [0, 0], [1, 1], False])
    low = np.full((1, 1, 3, 3), -np.inf)
    check("aten::max_pool2d_with_indices", [low, [2, 2], [1, 1], [1, 1], [1, 1], True])


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
    expect_error("aten::max_pool2d", args, message)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(6))
def test_max_pool2d_with_indices_backward(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = (2, 2, 7, 6) if seed % 2 else (3, 8, 5)
    x = randn(rng, *shape, dtype=dtype)
    kernel, stride, padding, dilation, ceil = _pool_case(rng)
    out, indices = torch.ops.aten.max_pool2d_with_indices(as_torch(x), kernel, stride, padding, dilation, ceil)
    grad = randn(rng, *out.shape, dtype=dtype)
    check("aten::max_pool2d_with_indices_backward",
           [grad, x, kernel, stride or kernel, padding, dilation, ceil, indices.numpy()])
