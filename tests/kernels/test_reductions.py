"""Reduction kernels against PyTorch: sum, mean, prod, max/min, norm, softmax,
log_softmax, topk, kthvalue and sort on seeded random inputs.

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

from gradview.ir import Graph, node_summary
from gradview.kernels import KernelError
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, random_array, run_kernel, torch_call

SEEDS = range(6)
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
FLOAT = np.float64
DOUBLE, LONG, FLOAT32, BOOL = 7, 4, 6, 11  # TorchScript ScalarType numbers


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return random_array(rng, shape, dtype, -3, 4)


def _is_float32(*arrays: np.ndarray) -> bool:
    return any(getattr(a, "dtype", None) == np.float32 for a in arrays)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return SHAPES[rng.integers(len(SHAPES))]


def _some_dims(rng: np.random.Generator, ndim: int) -> list[int]:
    """A non-empty random subset of the dims, each written positive or negative."""
    rank = max(ndim, 1)
    count = rng.integers(1, rank + 1)
    dims = rng.permutation(rank)[:count]
    return [int(d) - rank if rng.random() < 0.5 else int(d) for d in dims]


def _one_dim(rng: np.random.Generator, ndim: int) -> int:
    return _some_dims(rng, ndim)[0]


def _dim_lists(rng: np.random.Generator, ndim: int) -> list[list[int] | None]:
    return [None, [], _some_dims(rng, ndim), _some_dims(rng, ndim)]


def run_graph(graph: Graph, inputs: list) -> list:
    """Run on the backend tests/kernels/conftest.py picked for this test."""
    return _run_graph(graph, inputs, backend=getattr(oracle, "BACKEND", "numpy"))


def _check(op: str, args: list, rtol: float | None = None) -> list:
    """check_op at 1e-6 relative in float64; float32 results (PyTorch rounds
    differently, e.g. log_softmax near 0) get 1e-5 relative and 1e-6 absolute."""
    f32 = _is_float32(*(a for a in args if isinstance(a, np.ndarray)))
    if rtol is None:
        rtol = 1e-5 if f32 else 1e-6
    return check_op(op, args, rtol=rtol, atol=1e-6 if f32 else 1e-12)


# -- sum, mean, prod -----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_sum(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)
    _check("aten::sum", [x, None])
    _check("aten::sum", [x, DOUBLE])
    for dims in _dim_lists(rng, x.ndim):
        for keepdim in (False, True):
            _check("aten::sum.dim_IntList", [x, dims, keepdim, None])
    _check("aten::sum.dim_IntList", [x, _some_dims(rng, x.ndim), True, LONG])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_mean(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)
    _check("aten::mean", [x, None])
    _check("aten::mean", [x, DOUBLE])
    for dims in _dim_lists(rng, x.ndim):
        for keepdim in (False, True):
            _check("aten::mean.dim", [x, dims, keepdim, None])


@pytest.mark.parametrize("seed", SEEDS)
def test_mean_of_integers_needs_a_floating_dtype(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), np.int64)
    _check("aten::mean", [x, DOUBLE])
    _check("aten::mean.dim", [x, _some_dims(rng, x.ndim), bool(seed % 2), FLOAT32])
    for args, op in (([x, None], "aten::mean"), ([x, [0], False, LONG], "aten::mean.dim")):
        graph, inputs = op_graph(op, args)
        with pytest.raises(GraphRuntimeError, match="floating-point") as info:
            run_graph(graph, inputs)
        assert node_summary(list(graph.nodes())[-1]) in str(info.value)
        with pytest.raises(RuntimeError):
            torch.ops.aten.mean.default(torch.from_numpy(x))


def test_mean_of_an_empty_dim_is_nan() -> None:
    x = np.zeros((0, 3))
    _check("aten::mean.dim", [x, [0], False, None])
    _check("aten::sum.dim_IntList", [x, [0], True, None])


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_prod(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)
    _check("aten::prod", [x, None])
    _check("aten::prod", [x, DOUBLE])
    for keepdim in (False, True):
        _check("aten::prod.dim_int", [x, _one_dim(rng, x.ndim), keepdim, None])
    _check("aten::prod.dim_int", [x, _one_dim(rng, x.ndim), False, DOUBLE])


# -- max, min --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_max_min(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)  # integers and bools have ties: first index wins
    for op in ("max", "min"):
        _check(f"aten::{op}", [x])
        for keepdim in (False, True):
            values, indices = _check(f"aten::{op}.dim", [x, _one_dim(rng, x.ndim), keepdim])
            assert indices.dtype == np.int64


def test_max_min_with_nan_pick_the_first_nan() -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.0, -1.0, 2.0]])
    for op in ("max", "min"):
        _check(f"aten::{op}", [x])
        _check(f"aten::{op}.dim", [x, -1, False])
        _check(f"aten::{op}.dim", [x, 0, True])


def test_max_of_empty_tensor_raises() -> None:
    graph, inputs = op_graph("aten::max", [np.zeros((0, 2))])
    with pytest.raises(GraphRuntimeError, match="no elements") as info:
        run_graph(graph, inputs)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)
    graph, inputs = op_graph("aten::min.dim", [np.zeros((0, 2)), 0, False])
    with pytest.raises(GraphRuntimeError, match="size 0"):
        run_graph(graph, inputs)
    _check("aten::max.dim", [np.zeros((0, 2)), 1, False])  # other dims may be empty


# -- norm --------------------------------------------------------------------------
NORM_ORDERS = [2, 1, math.inf, -math.inf, 0, 3, 0.5]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)
    for p in NORM_ORDERS:
        _check("aten::norm.Scalar", [x, p])
        dims = _some_dims(rng, x.ndim)
        keepdim = bool(rng.random() < 0.5)
        _check("aten::norm.ScalarOpt_dim", [x, p, dims, keepdim])
        _check("aten::norm.ScalarOpt_dim_dtype", [x, p, dims, keepdim, DOUBLE])
        _check("aten::norm.ScalarOpt_dtype", [x, p, DOUBLE])
    _check("aten::norm.ScalarOpt_dim", [x, None, [], True])
    _check("aten::norm.ScalarOpt_dtype", [x, None, DOUBLE])


def test_norm_refuses_integers_and_narrowing() -> None:
    for op, args in (
        ("aten::norm.Scalar", [np.arange(4), 2]),
        ("aten::norm.ScalarOpt_dim_dtype", [np.ones(3), 2, [0], False, FLOAT32]),
        ("aten::norm.ScalarOpt_dim", [np.zeros((2, 0)), math.inf, [1], False]),
    ):
        graph, inputs = op_graph(op, args)
        with pytest.raises(GraphRuntimeError, match="norm"):
            run_graph(graph, inputs)


# -- softmax -----------------------------------------------------------------------
SOFTMAX_OPS = ["aten::softmax.int", "aten::log_softmax.int"]
PRIVATE_SOFTMAX_OPS = ["aten::_softmax", "aten::_log_softmax"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_softmax(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype) * 30  # large logits: the shift keeps exp finite
    for op in SOFTMAX_OPS:
        _check(op, [x, _one_dim(rng, x.ndim), None])
        _check(op, [x, _one_dim(rng, x.ndim), DOUBLE])
    for op in PRIVATE_SOFTMAX_OPS:
        _check(op, [x, _one_dim(rng, x.ndim), False])


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_of_integers_with_dtype(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), np.int64)
    for op in SOFTMAX_OPS:
        _check(op, [x, _one_dim(rng, x.ndim), DOUBLE])
        graph, inputs = op_graph(op, [x, 0, None])
        with pytest.raises(GraphRuntimeError, match="floating-point"):
            run_graph(graph, inputs)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_softmax_extremes_match_torch() -> None:
    x = np.array([[1e308, -1e308, 0.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 1.0], [np.inf, 0.0, 1.0]])
    for op in SOFTMAX_OPS:
        _check(op, [x, 1, None])
    _check("aten::softmax.int", [np.zeros((0, 3)), 0, None])


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


# -- topk, kthvalue, sort ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_topk(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)  # continuous values: no ties, so indices are unique
    dim = _one_dim(rng, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    for k in sorted({0, 1, size, int(rng.integers(0, size + 1))}):
        for largest in (True, False):
            _check("aten::topk", [x, k, dim, largest, True])


@pytest.mark.parametrize("seed", SEEDS)
def test_topk_unsorted_and_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, (3, 7), np.int64)
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
    _check("aten::topk", [x, 2, -1, True, True])
    _check("aten::topk", [x, 2, -1, False, True])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("seed", SEEDS)
def test_kthvalue(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    if dtype is np.int64:  # distinct integers: the index of the k-th value is unique
        x = rng.permutation(math.prod(shape)).reshape(shape).astype(np.int64)
    else:
        x = _rand(rng, shape, dtype)
    dim = _one_dim(rng, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    for k in sorted({1, size, int(rng.integers(1, size + 1))}):
        for keepdim in (False, True):
            _check("aten::kthvalue", [x, k, dim, keepdim])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_sort(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype)  # ties in integers and bools: stable order
    dim = _one_dim(rng, x.ndim)
    for descending in (False, True):
        _check("aten::sort.stable", [x, True, dim, descending])
        _check("aten::sort.stable", [x, None, dim, descending])
        _check("aten::sort", [x, dim, descending])


def test_sort_places_nan_like_torch() -> None:
    x = np.array([1.0, np.nan, 3.0, -1.0, np.nan])
    for descending in (False, True):
        _check("aten::sort.stable", [x, True, 0, descending])


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
    x = _rand(rng, _shape(rng), dtype)  # small integers: ties pick the first index
    for keepdim in (False, True):
        _check(op, [x, None, keepdim])  # the flattened tensor
        _check(op, [x, _one_dim(rng, x.ndim), keepdim])
        _check(op, [x, -1, keepdim])


@pytest.mark.parametrize("op", ["aten::argmax", "aten::argmin"])
def test_argmax_argmin_pick_the_first_nan_and_the_first_tie(op: str) -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [5.0, 5.0, 5.0, 5.0]])
    for dim in (None, 0, 1, -1):
        _check(op, [x, dim, False])
    _check(op, [np.zeros((2, 0)), 0, True])  # an empty result is fine


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
    x = _rand(rng, _shape(rng), dtype)
    for dims in ([], _some_dims(rng, x.ndim), [_one_dim(rng, x.ndim)], [-1]):
        for keepdim in (False, True):
            _check(op, [x, dims, keepdim])


@pytest.mark.parametrize("op", ["aten::amax", "aten::amin"])
def test_amax_amin_propagate_nan_and_reduce_empty_tensors_along_other_dims(op: str) -> None:
    x = np.array([[1.0, np.nan, 3.0], [2.0, -np.inf, np.inf]])
    for dims in ([], [0], [1], [-1, 0]):
        _check(op, [x, dims, False])
    _check(op, [np.zeros((2, 0)), [0], True])
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
    x = _rand(rng, _shape(rng), dtype)
    for dim in (_one_dim(rng, x.ndim), -1, 0):
        _check("aten::cumsum", [x, dim, None])  # bool and integers give int64
    _check("aten::cumsum", [x, _one_dim(rng, x.ndim), DOUBLE])
    _check("aten::cumsum", [x, -1, LONG])


def test_cumsum_of_float32_accumulates_like_pytorch() -> None:
    x = np.full(100_000, 0.1, dtype=np.float32)
    _check("aten::cumsum", [x, 0, None], rtol=1e-6)
    _check("aten::cumsum", [np.array([1e8, 1.0, -1e8, 1.0], dtype=np.float32), 0, None], rtol=1e-6)


# -- std, var ---------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_std_var(seed: int, dtype: type, name: str) -> None:
    rng = np.random.default_rng(seed)
    x = _rand(rng, _shape(rng), dtype) * 3 + 1
    for unbiased in (True, False):
        _check(f"aten::{name}", [x, unbiased])
        for dims in _dim_lists(rng, x.ndim):
            for keepdim in (False, True):
                _check(f"aten::{name}.dim", [x, dims, unbiased, keepdim])
    for correction in (None, 0, 1, 2, 0.5):
        for dims in (None, _some_dims(rng, x.ndim), [-1]):
            _check(f"aten::{name}.correction", [x, dims, correction, bool(rng.integers(2))])


@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_with_too_few_elements_give_inf_or_nan(name: str) -> None:
    _check(f"aten::{name}", [np.array(2.5), True])  # one element, correction 1: 0 / 0
    _check(f"aten::{name}", [np.zeros(0), False])
    _check(f"aten::{name}.correction", [np.array([1.0, 3.0]), None, 3, False])  # m2 / 0: inf
    _check(f"aten::{name}.dim", [np.ones((3, 1)), [1], True, True])
    _check(f"aten::{name}.dim", [np.array(1.5, dtype=np.float32), [0], True, True])


@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_refuse_integers(name: str) -> None:
    args = [np.arange(4), True]
    with pytest.raises(RuntimeError):
        torch_call(f"aten::{name}", args)
    graph, inputs = op_graph(f"aten::{name}", args)
    with pytest.raises(GraphRuntimeError, match="floating point"):
        run_graph(graph, inputs)


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
