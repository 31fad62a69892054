"""Shape rules of the pooling ops (gradview.ops.pooling) against PyTorch: traced graphs, and the
internal forms as one-node graphs (see tests/ops/layer_shapes.py)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # PyTorch's own spelling

from .layer_shapes import A, check_traced, randn


@pytest.mark.parametrize("shape", [(2, 3, 9, 7), (3, 9, 7)], ids=str)
def test_pools(shape: tuple[int, ...]) -> None:
    x = randn(*shape)
    check_traced(lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (x,), "aten::adaptive_avg_pool2d")
    check_traced(lambda x: A._adaptive_avg_pool2d(x, [2, 5]), (x,), "aten::_adaptive_avg_pool2d")
    check_traced(lambda x: F.adaptive_avg_pool1d(x.flatten(-2), 5), (x,), "aten::adaptive_avg_pool1d")
    check_traced(lambda x: F.avg_pool2d(x, 3, 2, 1, True), (x,), "aten::avg_pool2d")
    g = randn(*shape[:-2], 4, 3)
    check_traced(lambda g, x: A._adaptive_avg_pool2d_backward(g, x), (g, x), "aten::_adaptive_avg_pool2d_backward")
    g = randn(*shape[:-2], 5, 4)
    check_traced(lambda g, x: A.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], True, True, None), (g, x), "aten::avg_pool2d_backward")


def test_max_pool2d_backward() -> None:
    x = randn(2, 3, 9, 7)

    def fn(x: torch.Tensor) -> torch.Tensor:
        values, indices = A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
        return A.max_pool2d_with_indices_backward(values, x, [3, 3], [2, 2], [1, 1], [1, 1], False, indices)

    check_traced(fn, (x,), "aten::max_pool2d_with_indices_backward")
