"""Reduction kernels against PyTorch: sum, mean, prod, max/min, norm, argmax/argmin,
amax/amin, cumsum, topk, kthvalue and sort on seeded random inputs, and
value_selecting_reduction_backward (the statistics' are in test_statistics.py,
softmax's in test_softmax.py).

Every case runs one node through gradview's interpreter (tests.kernels.oracle)
and compares values (1e-6 relative in float64), dtypes and shapes with
``torch.ops.aten``; dims include negative ones, None and empty lists, keepdim
both ways, 0-d tensors, and float64/float32/int64/bool inputs where PyTorch
accepts them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.ir import node_summary
from gradview.kernels import KernelError
from gradview.runtime import GraphRuntimeError
from tests.kernels.oracle import op_graph, run_kernel, torch_call
from tests.kernels.reduction_cases import (
    DOUBLE,
    FLOAT32,
    LONG,
    SEEDS,
    check_close,
    dim_lists,
    one_dim,
    rand_values,
    random_shape,
    run_graph,
    some_dims,
)


# -- sum, mean, prod -----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_sum(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    check_close("aten::sum", [x, None])
    check_close("aten::sum", [x, DOUBLE])
    for dims in dim_lists(rng, x.ndim):
        for keepdim in (False, True):
            check_close("aten::sum.dim_IntList", [x, dims, keepdim, None])
    check_close("aten::sum.dim_IntList", [x, some_dims(rng, x.ndim), True, LONG])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_mean(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    check_close("aten::mean", [x, None])
    check_close("aten::mean", [x, DOUBLE])
    for dims in dim_lists(rng, x.ndim):
        for keepdim in (False, True):
            check_close("aten::mean.dim", [x, dims, keepdim, None])


@pytest.mark.parametrize("seed", SEEDS)
def test_mean_of_integers_needs_a_floating_dtype(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), np.int64)
    check_close("aten::mean", [x, DOUBLE])
    check_close("aten::mean.dim", [x, some_dims(rng, x.ndim), bool(seed % 2), FLOAT32])
    for args, op in (([x, None], "aten::mean"), ([x, [0], False, LONG], "aten::mean.dim")):
        graph, inputs = op_graph(op, args)
        with pytest.raises(GraphRuntimeError, match="floating-point") as info:
            run_graph(graph, inputs)
        assert node_summary(list(graph.nodes())[-1]) in str(info.value)
        with pytest.raises(RuntimeError):
            torch.ops.aten.mean.default(torch.from_numpy(x))


def test_mean_of_an_empty_dim_is_nan() -> None:
    x = np.zeros((0, 3))
    check_close("aten::mean.dim", [x, [0], False, None])
    check_close("aten::sum.dim_IntList", [x, [0], True, None])


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_prod(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    check_close("aten::prod", [x, None])
    check_close("aten::prod", [x, DOUBLE])
    for keepdim in (False, True):
        check_close("aten::prod.dim_int", [x, one_dim(rng, x.ndim), keepdim, None])
    check_close("aten::prod.dim_int", [x, one_dim(rng, x.ndim), False, DOUBLE])


# -- max, min --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_max_min(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)  # integers and bools have ties: first index wins
    for op in ("max", "min"):
        check_close(f"aten::{op}", [x])
        for keepdim in (False, True):
            values, indices = check_close(f"aten::{op}.dim", [x, one_dim(rng, x.ndim), keepdim])
            assert indices.dtype == np.int64


def test_max_min_with_nan_pick_the_first_nan() -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.0, -1.0, 2.0]])
    for op in ("max", "min"):
        check_close(f"aten::{op}", [x])
        check_close(f"aten::{op}.dim", [x, -1, False])
        check_close(f"aten::{op}.dim", [x, 0, True])


def test_max_of_empty_tensor_raises() -> None:
    graph, inputs = op_graph("aten::max", [np.zeros((0, 2))])
    with pytest.raises(GraphRuntimeError, match="no elements") as info:
        run_graph(graph, inputs)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)
    graph, inputs = op_graph("aten::min.dim", [np.zeros((0, 2)), 0, False])
    with pytest.raises(GraphRuntimeError, match="size 0"):
        run_graph(graph, inputs)
    check_close("aten::max.dim", [np.zeros((0, 2)), 1, False])  # other dims may be empty


# -- norm --------------------------------------------------------------------------
NORM_ORDERS = [2, 1, math.inf, -math.inf, 0, 3, 0.5]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    for p in NORM_ORDERS:
        check_close("aten::norm.Scalar", [x, p])
        dims = some_dims(rng, x.ndim)
        keepdim = bool(rng.random() < 0.5)
        check_close("aten::norm.ScalarOpt_dim", [x, p, dims, keepdim])
        check_close("aten::norm.ScalarOpt_dim_dtype", [x, p, dims, keepdim, DOUBLE])
        check_close("aten::norm.ScalarOpt_dtype", [x, p, DOUBLE])
    check_close("aten::norm.ScalarOpt_dim", [x, None, [], True])
    check_close("aten::norm.ScalarOpt_dtype", [x, None, DOUBLE])


def test_norm_refuses_integers_and_narrowing() -> None:
    for op, args in (
        ("aten::norm.Scalar", [np.arange(4), 2]),
        ("aten::norm.ScalarOpt_dim_dtype", [np.ones(3), 2, [0], False, FLOAT32]),
        ("aten::norm.ScalarOpt_dim", [np.zeros((2, 0)), math.inf, [1], False]),
    ):
        graph, inputs = op_graph(op, args)
        with pytest.raises(GraphRuntimeError, match="norm"):
            run_graph(graph, inputs)


# -- topk, kthvalue, sort ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_topk(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)  # continuous values: no ties, so indices are unique
    dim = one_dim(rng, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    for k in sorted({0, 1, size, int(rng.integers(0, size + 1))}):
        for largest in (True, False):
            check_close("aten::topk", [x, k, dim, largest, True])


@pytest.mark.parametrize("seed", SEEDS)
def test_topk_unsorted_and_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, (3, 7), np.int64)
    k = int(rng.integers(1, 8))
    for largest in (True, False):
        graph, inputs = op_graph("aten::topk", [x, k, -1, largest, False])
        values, indices = run_graph(graph, inputs)
        expected = torch.topk(torch.from_numpy(x), k, -1, largest, sorted=True).values.numpy()
        # Any order is valid for sorted=False; the same values must come out.
        np.testing.assert_array_equal(np.sort(values, -1), np.sort(expected, -1))
        np.testing.assert_array_equal(np.take_along_axis(x, indices, -1), values)
        assert indices.dtype == np.int64 and values.dtype == x.dtype


def test_topk_nan_counts_as_largest() -> None:
    x = np.array([1.0, np.nan, 3.0, -2.0])
    check_close("aten::topk", [x, 2, -1, True, True])
    check_close("aten::topk", [x, 2, -1, False, True])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("seed", SEEDS)
def test_kthvalue(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = random_shape(rng)
    if dtype is np.int64:  # distinct integers: the index of the k-th value is unique
        x = rng.permutation(math.prod(shape)).reshape(shape).astype(np.int64)
    else:
        x = rand_values(rng, shape, dtype)
    dim = one_dim(rng, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    for k in sorted({1, size, int(rng.integers(1, size + 1))}):
        for keepdim in (False, True):
            check_close("aten::kthvalue", [x, k, dim, keepdim])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_sort(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)  # ties in integers and bools: stable order
    dim = one_dim(rng, x.ndim)
    for descending in (False, True):
        check_close("aten::sort.stable", [x, True, dim, descending])
        check_close("aten::sort.stable", [x, None, dim, descending])
        check_close("aten::sort", [x, dim, descending])


def test_sort_places_nan_like_torch() -> None:
    x = np.array([1.0, np.nan, 3.0, -1.0, np.nan])
    for descending in (False, True):
        check_close("aten::sort.stable", [x, True, 0, descending])


@pytest.mark.parametrize(
    ("op", "args", "message"),
    [
        ("aten::topk", [np.ones((2, 3)), 4, -1, True, True], "k=4 is out of range"),
        ("aten::topk", [np.ones((2, 3), dtype=bool), 1, -1, True, True], "bool"),
        ("aten::kthvalue", [np.ones((2, 3)), 0, 1, False], "k=0 is out of range"),
    ],
)
def test_selection_errors(op: str, args: list, message: str) -> None:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message):
        run_graph(graph, inputs)


# -- bad dims ----------------------------------------------------------------------
BAD_DIMS = [
    ("aten::sum.dim_IntList", [np.ones((2, 3)), [2], False, None], "dim 2 is out of range"),
    ("aten::sum.dim_IntList", [np.ones((2, 3)), [0, -2], False, None], "more than once"),
    ("aten::mean.dim", [np.ones((2, 3)), [-3], True, None], "dim -3 is out of range"),
    ("aten::prod.dim_int", [np.ones(()), 1, False, None], "dim 1 is out of range"),
    ("aten::max.dim", [np.ones((2, 3)), 2, False], "dim 2 is out of range"),
    ("aten::min.dim", [np.ones((2, 3)), -3, False], "dim -3 is out of range"),
    ("aten::norm.ScalarOpt_dim", [np.ones((2, 3)), 2, [5], False], "dim 5 is out of range"),
    ("aten::softmax.int", [np.ones((2, 3)), 2, None], "dim 2 is out of range"),
    ("aten::_log_softmax", [np.ones((2, 3)), -3, False], "dim -3 is out of range"),
    ("aten::topk", [np.ones((2, 3)), 1, 3, True, True], "dim 3 is out of range"),
    ("aten::kthvalue", [np.ones((2, 3)), 1, -4, False], "dim -4 is out of range"),
    ("aten::sort", [np.ones((2, 3)), 2, False], "dim 2 is out of range"),
]


@pytest.mark.parametrize(("op", "args", "message"), BAD_DIMS, ids=[case[0] for case in BAD_DIMS])
def test_bad_dim_names_the_node(op: str, args: list, message: str) -> None:
    graph, inputs = op_graph(op, args)
    node = list(graph.nodes())[-1]
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, inputs)
    text = str(info.value)
    assert node_summary(node) in text
    assert message in text
    assert op.split("::")[1].split(".")[0].lstrip("_") in text  # the op is named
    with pytest.raises((RuntimeError, IndexError)):  # PyTorch refuses it too
        torch_call(op, args)


# -- argmax, argmin --------------------------------------------------------------
@pytest.mark.parametrize("op", ["aten::argmax", "aten::argmin"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("seed", SEEDS)
def test_argmax_argmin(seed: int, dtype: type, op: str) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)  # small integers: ties pick the first index
    for keepdim in (False, True):
        check_close(op, [x, None, keepdim])  # the flattened tensor
        check_close(op, [x, one_dim(rng, x.ndim), keepdim])
        check_close(op, [x, -1, keepdim])


@pytest.mark.parametrize("op", ["aten::argmax", "aten::argmin"])
def test_argmax_argmin_pick_the_first_nan_and_the_first_tie(op: str) -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [5.0, 5.0, 5.0, 5.0]])
    for dim in (None, 0, 1, -1):
        check_close(op, [x, dim, False])
    check_close(op, [np.zeros((2, 0)), 0, True])  # an empty result is fine


@pytest.mark.parametrize("op", ["aten::argmax", "aten::argmin"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([np.ones(3, dtype=bool), None, False], "bool"),
        ([np.zeros(0), None, False], "no elements"),
        ([np.zeros((2, 0)), 1, False], "size 0"),
        ([np.ones((2, 3)), 2, False], "dim 2 is out of range"),
    ],
    ids=["bool", "empty", "empty-dim", "bad-dim"],
)
def test_argmax_argmin_errors(op: str, args: list, message: str) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message):
        run_graph(graph, inputs)


# -- amax, amin ------------------------------------------------------------------
@pytest.mark.parametrize("op", ["aten::amax", "aten::amin"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_amax_amin(seed: int, dtype: type, op: str) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    for dims in ([], some_dims(rng, x.ndim), [one_dim(rng, x.ndim)], [-1]):
        for keepdim in (False, True):
            check_close(op, [x, dims, keepdim])


@pytest.mark.parametrize("op", ["aten::amax", "aten::amin"])
def test_amax_amin_propagate_nan_and_reduce_empty_tensors_along_other_dims(op: str) -> None:
    x = np.array([[1.0, np.nan, 3.0], [2.0, -np.inf, np.inf]])
    for dims in ([], [0], [1], [-1, 0]):
        check_close(op, [x, dims, False])
    check_close(op, [np.zeros((2, 0)), [0], True])
    for args in ([np.zeros((2, 0)), [1], False], [np.zeros((2, 0)), [], False]):
        with pytest.raises((RuntimeError, IndexError)):
            torch_call(op, args)
        graph, inputs = op_graph(op, args)
        with pytest.raises(GraphRuntimeError, match="size 0|no elements"):
            run_graph(graph, inputs)


# -- cumsum --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_cumsum(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype)
    for dim in (one_dim(rng, x.ndim), -1, 0):
        check_close("aten::cumsum", [x, dim, None])  # bool and integers give int64
    check_close("aten::cumsum", [x, one_dim(rng, x.ndim), DOUBLE])
    check_close("aten::cumsum", [x, -1, LONG])


def test_cumsum_of_float32_accumulates_like_pytorch() -> None:
    x = np.full(100_000, 0.1, dtype=np.float32)
    check_close("aten::cumsum", [x, 0, None], rtol=1e-6)
    check_close("aten::cumsum", [np.array([1e8, 1.0, -1e8, 1.0], dtype=np.float32), 0, None], rtol=1e-6)


# -- value_selecting_reduction_backward against PyTorch's op of that name --
@pytest.mark.parametrize(("shape", "dim", "keepdim"), [((2, 3, 4), 1, False), ((2, 3, 4), -1, True), ((5,), 0, False), ((3, 1), 0, True)])
def test_value_selecting_reduction_backward_like_torch(shape: tuple[int, ...], dim: int, keepdim: bool) -> None:
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(shape))
    values, indices = x.max(dim, keepdim=keepdim)
    grad = torch.tensor(rng.standard_normal(tuple(values.shape)))
    expected = torch.ops.aten.value_selecting_reduction_backward(grad, dim, indices, list(shape), keepdim)
    ours = run_kernel("aten::value_selecting_reduction_backward", grad.numpy(), dim, indices.numpy(), list(shape), keepdim)
    np.testing.assert_array_equal(ours, expected.numpy())
    assert ours.dtype == np.float64


def test_value_selecting_reduction_backward_topk_and_0d() -> None:
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((3, 5)))
    values, indices = x.topk(2, 1)
    grad = torch.tensor(rng.standard_normal((3, 2)))
    expected = torch.ops.aten.value_selecting_reduction_backward(grad, 1, indices, [3, 5], True)
    name = "aten::value_selecting_reduction_backward"
    np.testing.assert_array_equal(run_kernel(name, grad.numpy(), 1, indices.numpy(), [3, 5], True), expected.numpy())
    assert run_kernel(name, np.array(2.5), 0, np.array(0), [], False) == 2.5
    with pytest.raises(KernelError, match="do not fit"):
        run_kernel(name, grad.numpy(), 1, indices.numpy(), [3, 5, 1], True)
