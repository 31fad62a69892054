"""Statistics kernels against PyTorch: std/var, logsumexp, nanmean and any/all (tensors and
lists) against ``torch.ops.aten`` on seeded inputs (dims negative, several, empty and None,
keepdim both ways, 0-d and empty tensors, infinities and NaNs); and where PyTorch's CPU
kernels' rules decide the numbers: searchsorted's NaNs, mode's tie rule, median's NaN,
histc's bins, cov's float32 weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.ir import BoolType, FloatType, IntType, ListType, StringType
from gradview.kernels import statistics as kernels
from gradview.runtime import GraphRuntimeError
from tests.kernels.oracle import Typed, check_op, op_graph, random_array, torch_call
from tests.kernels.reduction_cases import (
    SEEDS,
    SHAPES,
    check_close,
    dim_lists,
    rand_values,
    random_shape,
    run_graph,
    some_dims,
)


def test_searchsorted_puts_nan_values_past_the_end_as_atens_binary_search() -> None:
    seq = np.array([[0.0, 1.0, np.nan, 3.0], [-1.0, 0.5, 0.5, 2.0]])
    values = np.array([[np.nan, 1.0, 2.5], [0.5, np.nan, -3.0]])
    for right in (False, True):
        ours = kernels.searchsorted(np, seq, values, False, right)
        theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_mode_is_the_smallest_most_frequent_value_at_its_last_occurrence() -> None:
    x = np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 6.0], [3.0, 1.0, 3.0, 1.0, 1.0]])
    values, indices = kernels_mode(x)
    t = torch.mode(torch.tensor(x), 1)
    np.testing.assert_array_equal(values, t.values.numpy())
    np.testing.assert_array_equal(indices, t.indices.numpy())


def kernels_mode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from gradview.kernels import reductions

    return reductions.mode(np, x, 1, False)


def test_median_of_a_slice_with_nan_is_its_first_nan_and_nanmedian_skips_them() -> None:
    from gradview.kernels import reductions

    x = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, np.nan, 1.0, np.nan], [np.nan, 4.0, np.nan, -1.0]])
    for ours, theirs in ((reductions.median_dim(np, x, 1), torch.median(torch.tensor(x), 1)),
                         (reductions.nanmedian_dim(np, x, 1), torch.nanmedian(torch.tensor(x), 1))):
        np.testing.assert_array_equal(ours[0], theirs.values.numpy())
        np.testing.assert_array_equal(ours[1], theirs.indices.numpy())


def test_histc_bins_values_on_the_edges_as_atens_linear_interpolation() -> None:
    x = np.concatenate([np.linspace(-1, 1, 41), [np.nan, 2.0, -1.5, 1.0]])
    ours = kernels.histc(np, x, 7, -1, 1)
    np.testing.assert_array_equal(ours, torch.histc(torch.tensor(x), 7, -1, 1).numpy())


def test_cov_float32_aweights_with_fweights_gradient_equals_eager_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 6))
    aweights = rng.uniform(0.1, 1.0, 6).astype(np.float32)
    fweights = np.array([1, 3, 2, 1, 4, 2], dtype=np.int32)
    grad = rng.standard_normal((3, 3))
    for fw in (fweights,):
        for correction in (0, 1):
            leaf = torch.tensor(aweights, requires_grad=True)
            out = torch.cov(torch.tensor(x), correction=correction,
                            fweights=None if fw is None else torch.tensor(fw), aweights=leaf)
            (theirs,) = torch.autograd.grad(out, leaf, torch.tensor(grad))
            ours = kernels.cov_backward(np, grad, x, correction, fw, aweights)[1]
            np.testing.assert_array_equal(ours, theirs.numpy())


def test_mode_follows_std_sort_for_long_slices_with_ties_and_nans() -> None:
    from gradview.kernels import reductions

    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, (6, 40)).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    values, indices = reductions.mode(np, x, 1, False)
    t = torch.mode(torch.tensor(x), 1)
    np.testing.assert_array_equal(values, t.values.numpy())
    np.testing.assert_array_equal(indices, t.indices.numpy())


def test_nanmedian_of_only_nans_points_where_std_nth_element_leaves_them() -> None:
    from gradview.kernels import reductions

    for n in range(1, 20):
        x = np.full((1, n), np.nan)
        np.testing.assert_array_equal(reductions.nanmedian_dim(np, x, 1)[1],
                                      torch.nanmedian(torch.tensor(x), 1).indices.numpy())


def test_a_float_scalar_searched_in_integer_boundaries_is_not_truncated() -> None:
    boundaries = np.array([1, 3, 5, 7])
    assert kernels.bucketize_scalar(np, 3.5, boundaries) == torch.bucketize(3.5, torch.tensor(boundaries)).item()
    assert kernels.searchsorted_scalar(np, boundaries, 3.5) == torch.searchsorted(torch.tensor(boundaries), 3.5).item()


# -- std, var ---------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_std_var(seed: int, dtype: type, name: str) -> None:
    rng = np.random.default_rng(seed)
    x = rand_values(rng, random_shape(rng), dtype) * 3 + 1
    for unbiased in (True, False):
        check_close(f"aten::{name}", [x, unbiased])
        for dims in dim_lists(rng, x.ndim):
            for keepdim in (False, True):
                check_close(f"aten::{name}.dim", [x, dims, unbiased, keepdim])
    for correction in (None, 0, 1, 2, 0.5):
        for dims in (None, some_dims(rng, x.ndim), [-1]):
            check_close(f"aten::{name}.correction", [x, dims, correction, bool(rng.integers(2))])


@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_with_too_few_elements_give_inf_or_nan(name: str) -> None:
    check_close(f"aten::{name}", [np.array(2.5), True])  # one element, correction 1: 0 / 0
    check_close(f"aten::{name}", [np.zeros(0), False])
    check_close(f"aten::{name}.correction", [np.array([1.0, 3.0]), None, 3, False])  # m2 / 0: inf
    check_close(f"aten::{name}.dim", [np.ones((3, 1)), [1], True, True])
    check_close(f"aten::{name}.dim", [np.array(1.5, dtype=np.float32), [0], True, True])


@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_refuse_integers(name: str) -> None:
    args = [np.arange(4), True]
    with pytest.raises(RuntimeError):
        torch_call(f"aten::{name}", args)
    graph, inputs = op_graph(f"aten::{name}", args)
    with pytest.raises(GraphRuntimeError, match="floating point"):
        run_graph(graph, inputs)


# -- logsumexp ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_logsumexp(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        x = random_array(rng, shape, dtype, -3, 4, scale=4.0)
        for keepdim in (False, True):
            rtol = 1e-5 if dtype is not np.float64 else 1e-7
            check_op("aten::logsumexp", [x, some_dims(rng, x.ndim), keepdim], rtol=rtol)


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
        for dim in (None, [], some_dims(rng, x.ndim)):
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
        dim = some_dims(rng, x.ndim)
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
