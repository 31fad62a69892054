"""Embedding kernels (kernels/embedding.py) against PyTorch: embedding and its
dense backward (padding_idx, scale_grad_by_freq, repeated indices, 0-d and
empty index tensors), and embedding_bag in its three overloads over the modes
sum/mean/max, offsets with empty bags, include_last_offset, padding_idx,
per_sample_weights, int32/int64 indices, with all four outputs compared, and
the backward kernels (dense weight gradient, per-sample-weights gradient).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call

ROWS, DIM = 10, 3


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-12, atol=1e-6 if f32 else 1e-12)


def _refuses(op: str, args: list) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError):
        _run_graph(graph, inputs, backend=oracle.BACKEND)


def _weight(seed: int = 0, dtype: type = np.float64) -> np.ndarray:
    w = np.random.default_rng(seed).standard_normal((ROWS, DIM)).astype(dtype)
    w[3, 1] = w[4, 1]  # a tie for max mode: the first maximal index wins
    return w


# -- embedding --------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4,), (2, 3), (), (2, 0), (3, 1, 2)], ids=str)
@pytest.mark.parametrize("padding_idx", [-1, 2])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding(shape: tuple[int, ...], padding_idx: int, scale_grad_by_freq: bool, index_dtype: type) -> None:
    rng = np.random.default_rng(len(shape))
    indices = rng.integers(0, 4, shape).astype(index_dtype)  # few distinct values: repeats
    out = _check("aten::embedding", [_weight(), indices, padding_idx, scale_grad_by_freq, False])[0]
    grad = rng.standard_normal(out.shape)
    _check("aten::embedding_dense_backward", [grad, indices, ROWS, padding_idx, scale_grad_by_freq])
    _check("aten::embedding_backward", [grad, indices, ROWS, padding_idx, scale_grad_by_freq, False])


def test_embedding_other_dtypes() -> None:
    indices = np.array([[1, 2], [2, 9]])
    _check("aten::embedding", [_weight(dtype=np.float32), indices, -1, False, False])
    _check("aten::embedding", [np.arange(12).reshape(6, 2), indices % 6, -1, False, False])


def test_embedding_refusals() -> None:
    w = _weight()
    _refuses("aten::embedding", [w, np.array([-1]), -1, False, False])
    _refuses("aten::embedding", [w, np.array([ROWS]), -1, False, False])
    _refuses("aten::embedding", [w[0], np.array([1]), -1, False, False])  # 1-d weight
    _refuses("aten::embedding", [w, np.array([1.0]), -1, False, False])  # float indices


def test_sparse_gradients_are_refused() -> None:
    """PyTorch returns a sparse tensor; gradview has none and says so."""
    graph, inputs = op_graph("aten::embedding_backward", [np.ones((2, DIM)), np.array([1, 2]), ROWS, -1, False, True])
    with pytest.raises(GraphRuntimeError, match="sparse"):
        _run_graph(graph, inputs, backend=oracle.BACKEND)


# -- embedding_bag ------------------------------------------------------------------------------------
INDICES = [1, 2, 4, 5, 4, 3, 2, 9]
OFFSETS = {
    "three bags, one empty": [0, 3, 3, 6],
    "one bag": [0],
    "one index per bag": [0, 1, 2, 3, 4, 5, 6, 7],
    "empty first bag": [0, 0, 5],
}


def _bag_cases() -> list[tuple]:
    cases = []
    for mode, padding_idx, weighted, last, offsets in itertools.product(
        [0, 1, 2], [-1, 2, 4], [False, True], [False, True], OFFSETS
    ):
        if weighted and mode != 0:
            continue
        cases.append((mode, padding_idx, weighted, last, offsets))
    return cases


@pytest.mark.parametrize(("mode", "padding_idx", "weighted", "last", "offsets"), _bag_cases(), ids=str)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding_bag(mode: int, padding_idx: int, weighted: bool, last: bool, offsets: str,
                       index_dtype: type) -> None:
    rng = np.random.default_rng(mode * 10 + padding_idx + 1)
    w = _weight(mode)
    indices = np.array(INDICES, dtype=index_dtype)
    starts = OFFSETS[offsets] + ([len(INDICES)] if last else [])
    offs = np.array(starts, dtype=index_dtype)
    psw = rng.random(len(INDICES)) if weighted else None
    for scale in (False, True):
        args = [w, indices, offs, scale, mode, False, psw, last, padding_idx]
        out, offset2bag, bag_size, max_indices = _check("aten::_embedding_bag", args)
        grad = rng.standard_normal(out.shape)
        saved = [offset2bag, bag_size, max_indices]
        _check("aten::_embedding_bag_dense_backward", [grad, indices, *saved, ROWS, scale, mode, psw, padding_idx])
        _check("aten::_embedding_bag_backward", [grad, indices, offs, *saved, ROWS, scale, mode, False, psw, padding_idx])
        if weighted:
            _check("aten::_embedding_bag_per_sample_weights_backward", [grad, w, indices, offs, offset2bag, mode, padding_idx])
    public = [w, indices, offs, False, mode, False, psw, last]
    _check("aten::embedding_bag", public)
    _check("aten::embedding_bag.padding_idx", [*public, None])
    _check("aten::embedding_bag.padding_idx", [*public, padding_idx])  # -1: the last row
    _check("aten::embedding_bag.padding_idx", [*public, padding_idx - ROWS if padding_idx >= 0 else -ROWS])


def test_embedding_bag_float32_and_nan() -> None:
    """Max mode: a NaN wins only where it comes first in its bag (PyTorch's running `>`)."""
    w = _weight(dtype=np.float32)
    w[5, 0] = np.nan  # second in bag [5, 4, 3] ... first in the bag starting at 3
    w[2, 2] = np.nan
    for mode in (0, 1, 2):
        _check("aten::_embedding_bag", [w, np.array(INDICES), np.array([0, 3, 6]), False, mode, False, None, False, -1])


def test_embedding_bag_empty_indices() -> None:
    _check("aten::_embedding_bag", [_weight(), np.array([], dtype=np.int64), np.array([0, 0]), False, 1, False, None, False, -1])


def test_embedding_bag_refusals() -> None:
    w, indices = _weight(), np.array(INDICES)
    _refuses("aten::_embedding_bag", [w, indices, np.array([1, 3]), False, 0, False, None, False, -1])  # offsets[0]
    _refuses("aten::_embedding_bag", [w, indices, np.array([0, 9]), False, 0, False, None, False, -1])  # offsets[-1]
    _refuses("aten::_embedding_bag", [w, np.array([1, 12]), np.array([0]), False, 0, False, None, False, -1])
    _refuses("aten::_embedding_bag", [w, indices, np.array([0, 3]), False, 1, False, np.ones(8), False, -1])
    for padding_idx in (ROWS, -ROWS - 1):
        _refuses("aten::embedding_bag.padding_idx", [w, indices, np.array([0, 3]), False, 1, False, None, False, padding_idx])


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_bag_float32_fast_path(last: bool, weighted: bool) -> None:
    """Sum mode on a float32 table without padding_idx: PyTorch returns an empty
    offset2bag, and its backward rebuilds it from the offsets."""
    w, indices = _weight(dtype=np.float32), np.array(INDICES)
    offsets = np.array([0, 3, 3, 6] + ([len(INDICES)] if last else []))
    psw = np.random.default_rng(1).random(len(INDICES)).astype(np.float32) if weighted else None
    out, offset2bag, bag_size, max_indices = _check("aten::_embedding_bag", [w, indices, offsets, False, 0, False, psw, last, -1])
    assert offset2bag.size == 0
    grad = np.random.default_rng(0).standard_normal(out.shape).astype(np.float32)
    for scale in (False, True):
        args = [grad, indices, offsets, offset2bag, bag_size, max_indices, ROWS, scale, 0, False, psw, -1]
        _check("aten::_embedding_bag_backward", args)
    _check("aten::embedding_bag", [w, indices, offsets, False, 0, False, psw, last])
    if weighted:
        _check("aten::_embedding_bag_per_sample_weights_backward", [grad, w, indices, offsets, offset2bag, 0, -1])
