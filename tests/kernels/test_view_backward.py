"""The backward kernels of view and split ops (kernels/view_backward.py):
select_backward and slice_backward against torch.ops.aten, the gradview::
join kernels (an undefined piece counts as zeros) against torch.cat/stack
of the pieces, and AutogradAdd of gradient lists."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.kernels import KernelError
from gradview.kernels.backend import get_backend
from gradview.kernels.view_backward import INT64_MAX
from gradview.ops import KERNELS
from tests.kernels import oracle
from tests.kernels.oracle import check_op

RNG = np.random.default_rng(0)


def _xp() -> Any:
    return get_backend(oracle.BACKEND).xp


def _host(value: Any) -> Any:
    return value.get() if hasattr(value, "get") else value


@pytest.mark.parametrize(
    "sizes,dim,index", [((3, 4), 0, 1), ((3, 4), -1, -2), ((2, 3, 4), 1, 2), ((5,), 0, -1)]
)
def test_select_backward(sizes: tuple, dim: int, index: int) -> None:
    out_shape = sizes[: dim % len(sizes)] + sizes[dim % len(sizes) + 1:]
    check_op("aten::select_backward", [RNG.standard_normal(out_shape), list(sizes), dim, index])


@pytest.mark.parametrize(
    "sizes,dim,start,end,step",
    [((5, 4), 0, 1, INT64_MAX, 2), ((3, 5), -1, -3, -1, 1), ((3, 4), 1, 0, 4, 3), ((4, 2), 0, 2, 2, 1)],
)
def test_slice_backward(sizes: tuple, dim: int, start: int, end: int, step: int) -> None:
    shape = tuple(torch.ops.aten.slice.Tensor(torch.zeros(sizes), dim, start, end, step).shape)
    check_op("aten::slice_backward", [RNG.standard_normal(shape), list(sizes), dim, start, end, step])


def _pieces(sizes: tuple, lengths: list[int], dim: int, missing: set[int]) -> tuple[list[Any], np.ndarray]:
    """Random piece gradients (None where missing) and their expected concatenation."""
    grads, parts = [], []
    for index, length in enumerate(lengths):
        shape = list(sizes)
        shape[dim] = length
        part = np.zeros(shape) if index in missing else RNG.standard_normal(shape)
        parts.append(part)
        grads.append(None if index in missing else part)
    return grads, torch.cat([torch.tensor(p) for p in parts], dim).numpy()


@pytest.mark.parametrize(
    "kernel,arg,sizes,lengths,dim,missing",
    [
        ("gradview::chunk_backward", 3, (5, 4), [2, 2, 1], 0, {1}),
        ("gradview::chunk_backward", 4, (3, 5), [2, 2, 1], -1, {0, 2}),
        ("gradview::split_backward", 2, (5, 4), [2, 2, 1], 0, {2}),
        ("gradview::split_with_sizes_backward", [1, 3], (3, 4), [1, 3], 1, {0}),
        ("gradview::split_with_sizes_backward", [2, 0, 3], (5, 2), [2, 0, 3], 0, set()),
    ],
)
def test_join_backward(kernel: str, arg: Any, sizes: tuple, lengths: list[int], dim: int, missing: set[int]) -> None:
    xp = _xp()
    grads, expected = _pieces(sizes, lengths, dim % len(sizes), missing)
    result = KERNELS[kernel](xp, [None if g is None else xp.asarray(g) for g in grads], arg, dim, list(sizes))
    np.testing.assert_array_equal(_host(result), expected)


def test_unbind_backward() -> None:
    xp = _xp()
    pieces = [RNG.standard_normal(3), None, RNG.standard_normal(3), None]
    result = KERNELS["gradview::unbind_backward"](xp, [None if p is None else xp.asarray(p) for p in pieces], -1, [3, 4])
    expected = torch.stack([torch.tensor(p) if p is not None else torch.zeros(3, dtype=torch.float64) for p in pieces], -1)
    np.testing.assert_array_equal(_host(result), expected.numpy())


@pytest.mark.parametrize("kernel,arg", [("gradview::chunk_backward", 2), ("gradview::split_with_sizes_backward", [1, 2])])
def test_all_pieces_undefined_gives_undefined(kernel: str, arg: Any) -> None:
    assert KERNELS[kernel](_xp(), [None, None], arg, 0, [3, 2]) is None


def test_join_backward_checks_shapes() -> None:
    xp = _xp()
    with pytest.raises(KernelError, match="expected"):
        KERNELS["gradview::split_with_sizes_backward"](xp, [xp.zeros((2, 2)), None], [1, 2], 0, [3, 2])
    with pytest.raises(KernelError, match="gradients for"):
        KERNELS["gradview::unbind_backward"](xp, [None], 0, [3, 2])


def test_sizes_along_and_invert_permutation() -> None:
    xp = _xp()
    assert KERNELS["gradview::sizes_along"](xp, [xp.zeros((2, 3)), xp.zeros((2, 5))], -1) == [3, 5]
    dims = [2, 0, -2]
    inverse = KERNELS["gradview::invert_permutation"](xp, dims)
    x = torch.arange(24).reshape(2, 3, 4)
    assert torch.equal(x.permute(dims).permute(inverse), x)
    with pytest.raises(KernelError, match="not a permutation"):
        KERNELS["gradview::invert_permutation"](xp, [0, 0])


def test_autograd_add_of_gradient_lists() -> None:
    xp = _xp()
    a = [xp.ones((2, 3)), None, xp.ones(4)]
    b = [None, xp.ones(1), xp.ones(4)]
    total = KERNELS["prim::AutogradAdd"](xp, a, b)
    assert isinstance(total, list) and len(total) == 3
    np.testing.assert_array_equal(_host(total[0]), np.ones((2, 3)))
    np.testing.assert_array_equal(_host(total[1]), np.ones(1))
    np.testing.assert_array_equal(_host(total[2]), 2 * np.ones(4))
    assert isinstance(KERNELS["prim::AutogradAdd"](xp, (a[0],), (a[0],)), tuple)
