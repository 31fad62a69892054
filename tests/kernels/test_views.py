"""View kernels (kernels/views.py): the *_copy views and unflatten against ``torch.ops.aten``,
select_backward and slice_backward too, gradview::invert_permutation, and where the op_db
sweep cannot see the difference.

``as_strided`` reads a tensor's storage: gradview reads an array that owns its
row-major memory, which is PyTorch's storage for a graph input or a fresh
contiguous result, and refuses a view (whose storage is its base tensor's) or
another layout (a transposed input's elementwise result keeps the transposed
order in both, which the backward, given only sizes, could not undo).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import views
from gradview.kernels.protocol import KernelError
from gradview.kernels.views import INT64_MAX
from gradview.ops import KERNELS
from tests.kernels.oracle import backend_xp, check_op, check_refused, random_array

RNG = np.random.default_rng(7)
X = random_array(RNG, (2, 3, 4), np.float64)
BACKWARD_RNG = np.random.default_rng(0)


def test_as_strided_reads_a_fresh_results_storage_as_pytorch_does() -> None:
    x = np.arange(12.0).reshape(3, 4)
    ours = views.as_strided(np, x * 2, [2, 3], [1, 2], 1)
    theirs = (torch.from_numpy(x) * 2).as_strided([2, 3], [1, 2], 1)
    np.testing.assert_array_equal(ours, theirs.numpy())


@pytest.mark.parametrize("make", [lambda x: x[1:], lambda x: x.T, lambda x: x.T * 2])
def test_as_strided_of_a_view_or_another_layout_is_refused_in_one_line(make) -> None:
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(KernelError, match="view of another tensor or not laid out row-major"):
        views.as_strided(np, make(x), [2, 2], [1, 2], 0)


def test_as_strided_backward_adds_up_overlapping_reads() -> None:
    x = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    grad = torch.arange(6.0, dtype=torch.float64).reshape(2, 3)
    (theirs,) = torch.autograd.grad(x.as_strided([2, 3], [1, 1]), x, grad)
    ours = views.as_strided_backward(np, grad.numpy(), [5], [2, 3], [1, 1], 0)
    np.testing.assert_array_equal(ours, theirs.numpy())


# -- copies of views ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_copies_of_views(dtype: type) -> None:
    x = random_array(RNG, (2, 1, 3, 1), dtype)
    check_op("aten::permute_copy", [x, [3, 0, -2, 1]])
    check_op("aten::squeeze_copy", [x])
    check_op("aten::squeeze_copy.dim", [x, -1])
    check_op("aten::squeeze_copy.dims", [x, [1, 3, 0]])
    check_op("aten::unsqueeze_copy", [x, 4])
    check_op("aten::unsqueeze_copy", [x, -2])
    for shape in [(), (3,), (2, 3)]:
        check_op("aten::t_copy", [random_array(RNG, shape, dtype)])
    check_op("aten::squeeze_copy", [np.array(2.0)])
    check_op("aten::permute_copy", [np.array(2.0), []])


def test_copies_are_fresh_arrays() -> None:
    x = random_array(RNG, (2, 3), np.float64)
    out = KERNELS["aten::t_copy"](np, x)
    assert not np.shares_memory(out, x)


# -- unflatten, unsafe splits ------------------------------------------------------------------
@pytest.mark.parametrize(("dim", "sizes"), [(1, [3, 1]), (-1, [-1, 2]), (0, [1, 2]), (2, [2, 1, 2]), (-3, [2])])
def test_unflatten(dim: int, sizes: list[int]) -> None:
    check_op("aten::unflatten.int", [X, dim, sizes])


@pytest.mark.parametrize(
    ("args", "match"),
    [([X, 1, [2, 2]], "multiply"), ([X, 1, []], "non-empty"), ([np.array(1.0), 0, [1]], "rank 0")],
)
def test_unflatten_errors(args: list, match: str) -> None:
    check_refused("aten::unflatten.int", args, match)


# -- backward kernels ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sizes,dim,index", [((3, 4), 0, 1), ((3, 4), -1, -2), ((2, 3, 4), 1, 2), ((5,), 0, -1)]
)
def test_select_backward(sizes: tuple, dim: int, index: int) -> None:
    out_shape = sizes[: dim % len(sizes)] + sizes[dim % len(sizes) + 1:]
    check_op("aten::select_backward", [BACKWARD_RNG.standard_normal(out_shape), list(sizes), dim, index])


@pytest.mark.parametrize(
    "sizes,dim,start,end,step",
    [((5, 4), 0, 1, INT64_MAX, 2), ((3, 5), -1, -3, -1, 1), ((3, 4), 1, 0, 4, 3), ((4, 2), 0, 2, 2, 1)],
)
def test_slice_backward(sizes: tuple, dim: int, start: int, end: int, step: int) -> None:
    shape = tuple(torch.ops.aten.slice.Tensor(torch.zeros(sizes), dim, start, end, step).shape)
    check_op("aten::slice_backward", [BACKWARD_RNG.standard_normal(shape), list(sizes), dim, start, end, step])


def test_invert_permutation() -> None:
    xp = backend_xp()
    dims = [2, 0, -2]
    inverse = KERNELS["gradview::invert_permutation"](xp, dims)
    x = torch.arange(24).reshape(2, 3, 4)
    assert torch.equal(x.permute(dims).permute(inverse), x)
    with pytest.raises(KernelError, match="not a permutation"):
        KERNELS["gradview::invert_permutation"](xp, [0, 0])
