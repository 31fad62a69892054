"""Join and split kernels (kernels/concat_split.py): unsafe_chunk/unsafe_split, meshgrid,
pad against ``torch.ops.aten``; the meshgrid and pad backward helpers
against torch.autograd; the gradview:: join kernels of split, chunk and unbind (an
undefined piece counts as zeros) against torch.cat/stack of the pieces; and the errors
PyTorch raises, raised too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.kernels import KernelError
from gradview.ops import KERNELS
from tests.kernels.oracle import backend_xp, check_op, check_refused, random_array, to_host

RNG = np.random.default_rng(7)
JOIN_RNG = np.random.default_rng(0)
X = random_array(RNG, (2, 3, 4), np.float64)



# -- unsafe splits ------------------------------------------------------------------------------
@pytest.mark.parametrize(("chunks", "dim"), [(2, 1), (3, -1), (5, 0), (1, 2)])
def test_unsafe_chunk(chunks: int, dim: int) -> None:
    check_op("aten::unsafe_chunk", [X, chunks, dim])


@pytest.mark.parametrize(("size", "dim"), [(3, 2), (1, 0), (2, -2), (10, 1)])
def test_unsafe_split(size: int, dim: int) -> None:
    check_op("aten::unsafe_split.Tensor", [X, size, dim])


# -- meshgrid ------------------------------------------------------------------------------------
GRIDS = [
    [np.arange(2.0), np.array(3.0), np.arange(4.0)],
    [np.arange(3.0)],
    [np.arange(3), np.arange(2)],
    [np.array(1.0), np.array(2.0)],
    [np.zeros(0), np.arange(2.0)],
]


@pytest.mark.parametrize("tensors", GRIDS, ids=range(len(GRIDS)))
def test_meshgrid(tensors: list[np.ndarray]) -> None:
    check_op("aten::meshgrid", [tensors])
    for indexing in ("ij", "xy"):
        check_op("aten::meshgrid.indexing", [tensors, indexing])


def test_meshgrid_errors() -> None:
    check_refused("aten::meshgrid", [[np.arange(2.0), np.arange(3)]], "same dtype")
    check_refused("aten::meshgrid", [[np.ones((2, 2))]], "0-d or 1-d")


@pytest.mark.parametrize("tensors", GRIDS[:2] + GRIDS[3:], ids=range(4))
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_backward(tensors: list[np.ndarray], indexing: str) -> None:
    leaves = [torch.tensor(t, requires_grad=True) for t in tensors]
    grids = torch.meshgrid(*leaves, indexing=indexing)
    grads = [torch.randn(g.shape, dtype=torch.float64) for g in grids]
    used = list(range(0, len(grids), 2))  # every other grid gets a gradient
    expected = torch.autograd.grad([grids[i] for i in used], leaves, [grads[i] for i in used], allow_unused=True)
    ours = KERNELS["gradview::meshgrid_backward"](
        np, [grads[i].numpy() if i in used else None for i in range(len(grids))], tensors, indexing
    )
    for index, (a, b) in enumerate(zip(ours, expected, strict=True)):
        if index in used:
            np.testing.assert_allclose(a, b.numpy(), rtol=1e-12)
            assert a.shape == tensors[index].shape
        else:
            assert a is None


# -- pad ----------------------------------------------------------------------------------------
PADS = [
    ("constant", [1, 2], None), ("constant", [1, 2, 0, 1, 1, 0], 3.5), ("constant", [-1, 2], None),
    ("constant", [0, 0, -1, -1, 1, 1], -2.0), ("reflect", [1, 2], None), ("reflect", [1, 2, 2, 1], None),
    ("reflect", [3, 3], None), ("reflect", [-1, 1], None), ("replicate", [2, 3], None),
    ("replicate", [2, 3, 1, 1], None), ("replicate", [-1, 3, 1, -1], None), ("circular", [1, 2], None),
    ("circular", [4, 4], None), ("circular", [2, 1, 1, 2], None), ("circular", [-1, 1], None),
    ("circular", [1, -2], None),
]


@pytest.mark.parametrize(("mode", "pad", "value"), PADS)
def test_pad(mode: str, pad: list[int], value: float | None) -> None:
    check_op("aten::pad", [X, pad, mode, value])


@pytest.mark.parametrize(("mode", "pad", "value"), PADS)
def test_pad_backward(mode: str, pad: list[int], value: float | None) -> None:
    x = torch.tensor(X, requires_grad=True)
    y = torch.ops.aten.pad(x, pad, mode, value)
    grad = torch.randn(y.shape, dtype=torch.float64)
    (expected,) = torch.autograd.grad(y, x, grad)
    ours = KERNELS["gradview::pad_backward"](np, grad.numpy(), list(X.shape), pad, mode)
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-12)


def test_pad_of_other_ranks_and_dtypes() -> None:
    check_op("aten::pad", [np.arange(4).reshape(2, 2), [1, 1], "constant", 2.7])
    check_op("aten::pad", [np.arange(4).reshape(2, 2), [1, 1], "reflect", None])
    check_op("aten::pad", [random_array(RNG, (1, 2, 3, 3, 3), np.float32), [1, 1, 2, 0, 0, 2], "replicate", None])
    check_op("aten::pad", [np.ones((2, 3), dtype=bool), [1, 0, 0, 1], "constant", None])
    check_op("aten::pad", [np.zeros((0, 3)), [1, 1, 1, 1], "constant", 1.0])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ([X, [1], "constant", None], "divisible by 2"),
        ([X, [1] * 8, "constant", None], "twice"),
        ([X, [4, 0], "reflect", None], "less than"),
        ([X, [5, 0], "circular", None], "more than once"),
        ([X, [1, 1], "reflect", 2.0], "value"),
        ([np.arange(4.0), [1, 1], "replicate", None], "not supported"),
        ([X, [1, 1, 1, 1, 1, 1], "replicate", None], "not supported"),
    ],
)
def test_pad_errors(args: list, match: str) -> None:
    check_refused("aten::pad", args, match)


# -- the join kernels of split, chunk and unbind's gradients ----------------------------------
def _pieces(sizes: tuple, lengths: list[int], dim: int, missing: set[int]) -> tuple[list[Any], np.ndarray]:
    """Random piece gradients (None where missing) and their expected concatenation."""
    grads, parts = [], []
    for index, length in enumerate(lengths):
        shape = list(sizes)
        shape[dim] = length
        part = np.zeros(shape) if index in missing else JOIN_RNG.standard_normal(shape)
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
    xp = backend_xp()
    grads, expected = _pieces(sizes, lengths, dim % len(sizes), missing)
    result = KERNELS[kernel](xp, [None if g is None else xp.asarray(g) for g in grads], arg, dim, list(sizes))
    np.testing.assert_array_equal(to_host(result), expected)


def test_unbind_backward() -> None:
    xp = backend_xp()
    pieces = [JOIN_RNG.standard_normal(3), None, JOIN_RNG.standard_normal(3), None]
    result = KERNELS["gradview::unbind_backward"](xp, [None if p is None else xp.asarray(p) for p in pieces], -1, [3, 4])
    expected = torch.stack([torch.tensor(p) if p is not None else torch.zeros(3, dtype=torch.float64) for p in pieces], -1)
    np.testing.assert_array_equal(to_host(result), expected.numpy())


@pytest.mark.parametrize("kernel,arg", [("gradview::chunk_backward", 2), ("gradview::split_with_sizes_backward", [1, 2])])
def test_all_pieces_undefined_gives_undefined(kernel: str, arg: Any) -> None:
    assert KERNELS[kernel](backend_xp(), [None, None], arg, 0, [3, 2]) is None


def test_join_backward_checks_shapes() -> None:
    xp = backend_xp()
    with pytest.raises(KernelError, match="expected"):
        KERNELS["gradview::split_with_sizes_backward"](xp, [xp.zeros((2, 2)), None], [1, 2], 0, [3, 2])
    with pytest.raises(KernelError, match="gradients for"):
        KERNELS["gradview::unbind_backward"](xp, [None], 0, [3, 2])


def test_sizes_along() -> None:
    xp = backend_xp()
    assert KERNELS["gradview::sizes_along"](xp, [xp.zeros((2, 3)), xp.zeros((2, 5))], -1) == [3, 5]
