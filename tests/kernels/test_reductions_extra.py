"""logsumexp, nanmean, any/all and _safe_softmax kernels against ``torch.ops.aten``
on seeded inputs: dims negative, several, empty and None, keepdim both ways,
0-d and empty tensors, infinities and NaNs, the list overloads of any/all."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradview.ir import BoolType, FloatType, IntType, ListType, StringType
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels.oracle import Typed, check_op, op_graph, random_array

SEEDS = range(4)
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]


def _dims(rng: np.random.Generator, ndim: int) -> list[int]:
    rank = max(ndim, 1)
    count = int(rng.integers(1, rank + 1))
    return [int(d) - rank if rng.random() < 0.5 else int(d) for d in rng.permutation(rank)[:count]]


# -- logsumexp ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_logsumexp(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = random_array(rng, shape, dtype, -3, 4, scale=4.0)
        for keepdim in (False, True):
            rtol = 1e-5 if dtype is not np.float64 else 1e-7
            check_op("aten::logsumexp", [x, _dims(rng, x.ndim), keepdim], rtol=rtol)


def test_logsumexp_infinities_nan_and_empty() -> None:
    inf = math.inf
    x = np.array([[-inf, -inf, -inf], [inf, 1.0, 2.0], [inf, -inf, 0.0], [math.nan, 1.0, 0.0]])
    check_op("aten::logsumexp", [x, [1], False])
    check_op("aten::logsumexp", [x, [0, 1], True])
    check_op("aten::logsumexp", [np.zeros((0, 3)), [0], False])
    check_op("aten::logsumexp", [np.zeros((0, 3)), [1], True])
    check_op("aten::logsumexp", [np.array(2.5), [], False])
    check_op("aten::logsumexp", [np.ones((2, 3)), [], True])


def test_logsumexp_of_every_dim_without_keepdim_is_refused_as_in_torch() -> None:
    graph, inputs = op_graph("aten::logsumexp", [np.ones((2, 3)), [], False])
    with pytest.raises(GraphRuntimeError, match="keepdim=True"):
        run_graph(graph, inputs)


# -- nanmean -------------------------------------------------------------------------------
def _with_nans(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    x = random_array(rng, shape, dtype)
    return np.where(rng.random(shape) < 0.3, np.nan, x).astype(dtype)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nanmean(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = _with_nans(rng, shape, dtype)
        for dim in (None, [], _dims(rng, x.ndim)):
            for keepdim in (False, True):
                check_op("aten::nanmean", [x, dim, keepdim, None], rtol=1e-5)
    check_op("aten::nanmean", [_with_nans(rng, (3, 4), np.float32), [1], False, Typed(7, IntType())])


def test_nanmean_of_nans_only_and_of_integers() -> None:
    check_op("aten::nanmean", [np.full((2, 3), np.nan), [1], False, None])
    check_op("aten::nanmean", [np.zeros((0, 3)), [0], True, None])
    graph, inputs = op_graph("aten::nanmean", [np.arange(3), None, False, None])
    with pytest.raises(GraphRuntimeError, match="floating point"):
        run_graph(graph, inputs)


# -- any, all --------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_, np.uint8])
@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all(seed: int, dtype: type, op: str) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = random_array(rng, shape, dtype, 0, 2)
        check_op(f"aten::{op}", [x])
        dim = _dims(rng, x.ndim)
        for keepdim in (False, True):
            check_op(f"aten::{op}.dim", [x, dim[0], keepdim])
            for dims in (dim, None, []):
                check_op(f"aten::{op}.dims", [x, dims, keepdim])


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all_count_nan_as_true_and_reduce_empty_tensors(op: str) -> None:
    check_op(f"aten::{op}", [np.array([math.nan, 0.0])])
    check_op(f"aten::{op}", [np.array([math.nan])])
    check_op(f"aten::{op}", [np.zeros((0,))])
    check_op(f"aten::{op}.dim", [np.zeros((0, 3)), 0, False])


@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize(
    ("overload", "values"),
    [("int", [[], [0, 0], [0, 3], [1, 2]]), ("float", [[], [0.0], [0.0, 0.5]]), ("bool", [[], [True], [False, True]])],
)
def test_any_all_of_lists(op: str, overload: str, values: list) -> None:
    element = {"int": IntType(), "float": FloatType(), "bool": BoolType()}[overload]
    for value in values:
        check_op(f"aten::{op}.{overload}", [value if value else Typed(value, ListType(element))])


def test_any_of_strings() -> None:
    for value in ([], [""], ["", "a"]):
        check_op("aten::any.str", [value if value else Typed(value, ListType(StringType()))])


# -- _safe_softmax ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_safe_softmax(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = random_array(rng, shape, np.float64)
        check_op("aten::_safe_softmax", [x, _dims(rng, x.ndim)[0], None])
    x = random_array(rng, (3, 4), np.float32)
    check_op("aten::_safe_softmax", [x, 1, Typed(7, IntType())])


def test_safe_softmax_of_masked_rows_is_zero() -> None:
    inf = math.inf
    x = np.array([[-inf, -inf, -inf], [0.0, -inf, 1.0], [-inf, 2.0, -inf]])
    for dim in (0, 1, -1):
        check_op("aten::_safe_softmax", [x, dim, None])
    check_op("aten::_safe_softmax", [np.array(-inf), 0, None])
    check_op("aten::_safe_softmax", [np.zeros((0, 3)), 1, None])
