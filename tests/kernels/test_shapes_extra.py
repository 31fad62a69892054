"""The *_copy views, unflatten, unsafe_chunk/unsafe_split, meshgrid, pad and
_dim_arange against ``torch.ops.aten``; the meshgrid and pad backward helpers
against torch.autograd; and the errors PyTorch raises, raised too."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels.oracle import check_op, op_graph, random_array

RNG = np.random.default_rng(7)
X = random_array(RNG, (2, 3, 4), np.float64)


def _raises(qualified: str, args: list, match: str) -> None:
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError, match=match):
        run_graph(graph, inputs)
    with pytest.raises(RuntimeError):
        from tests.kernels.oracle import torch_call

        torch_call(qualified, args)


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
    _raises("aten::unflatten.int", args, match)


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
    _raises("aten::meshgrid", [[np.arange(2.0), np.arange(3)]], "same dtype")
    _raises("aten::meshgrid", [[np.ones((2, 2))]], "0-d or 1-d")


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
    _raises("aten::pad", args, match)


# -- _dim_arange -------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_dim_arange(dim: int) -> None:
    check_op("aten::_dim_arange", [X, dim])
