"""Shape rules of the embedding ops (gradview.ops.embedding) against PyTorch: traced graphs, and the
internal forms as one-node graphs (see tests/ops/layer_shapes.py)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # PyTorch's own spelling

from .layer_shapes import A, check_traced, randn


def test_embedding() -> None:
    w, indices = randn(10, 3), torch.tensor([[1, 2, 4], [9, 0, 2]])
    check_traced(lambda w, i: F.embedding(i, w, padding_idx=2), (w, indices), "aten::embedding")
    g = randn(2, 3, 3)
    check_traced(lambda g, i: A.embedding_dense_backward(g, i, 10, -1, False), (g, indices), "aten::embedding_dense_backward")
    check_traced(lambda g, i: A.embedding_backward(g, i, 10, -1, False, False), (g, indices), "aten::embedding_backward")


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag(mode: str, dtype: torch.dtype, last: bool, padding_idx: int | None) -> None:
    w, indices = randn(10, 3, dtype=dtype), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6] + ([8] if last else []))

    def fn(w: torch.Tensor, i: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        return F.embedding_bag(i, w, o, mode=mode, include_last_offset=last, padding_idx=padding_idx)

    check_traced(fn, (w, indices, offsets), "aten::embedding_bag")
    code = {"sum": 0, "mean": 1, "max": 2}[mode]
    fn = lambda w, i, o: A._embedding_bag(w, i, o, False, code, False, None, last, -1 if padding_idx is None else padding_idx)  # noqa: E731
    check_traced(fn, (w, indices, offsets), "aten::_embedding_bag")
