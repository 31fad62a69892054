"""Shape rules of the normalization ops (gradview.ops.normalization) against PyTorch: the
traced group_norm, and the internal forms (native_*, _native_batch_norm_legit*, the backward
kernels) as one-node graphs (see tests/ops/layer_shapes.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # PyTorch's own spelling

from .layer_shapes import A, check_op, check_traced, randn


@pytest.mark.parametrize("shape", [(2, 6, 5), (3, 6, 2, 3), (2, 6)], ids=str)
def test_group_norm(shape: tuple[int, ...]) -> None:
    x, w = randn(*shape), randn(6)
    check_traced(lambda x, w: F.group_norm(x, 3, w), (x, w), "aten::group_norm")
    hxw = int(np.prod(shape[2:]))
    xn, wn = x.numpy(), w.numpy()
    check_op("aten::native_group_norm", [xn, wn, None, shape[0], 6, hxw, 3, 1e-5])
    _, mean, rstd = A.native_group_norm(x, w, None, shape[0], 6, hxw, 3, 1e-5)
    for mask in ([True, True, True], [True, False, False]):
        args = [xn, xn, mean.numpy(), rstd.numpy(), wn, shape[0], 6, hxw, 3, mask]
        check_op("aten::native_group_norm_backward", args)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_internal_forms(training: bool) -> None:
    x, w, rm, rv = randn(4, 3, 5).numpy(), randn(3).numpy(), randn(3).numpy(), randn(3).abs().numpy()
    check_op("aten::_native_batch_norm_legit", [x, w, None, rm, rv, training, 0.1, 1e-5])
    check_op("aten::_native_batch_norm_legit.no_stats", [x, w, None, True, 0.1, 1e-5])
    check_op("aten::_native_batch_norm_legit_functional", [x, w, None, rm, rv, training, 0.1, 1e-5])
    check_op("aten::_native_batch_norm_legit_no_training", [x, w, None, rm, rv, 0.1, 1e-5])
    check_op("aten::native_batch_norm", [x, w, None, rm, rv, training, 0.1, 1e-5])
    _, mean, invstd = A.native_batch_norm(*(torch.from_numpy(a) for a in (x, w)), None, None, None, True, 0.1, 1e-5)
    args = [x, x, w, rm, rv, mean.numpy(), invstd.numpy(), training, 1e-5, [True, True, True]]
    check_op("aten::native_batch_norm_backward", args)


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, True]], ids=str)
def test_native_layer_norm_backward(mask: list[bool]) -> None:
    x, w, b = randn(2, 3, 4), randn(3, 4), randn(3, 4)
    _, mean, rstd = A.native_layer_norm(x, [3, 4], w, b, 1e-5)
    args = [x.numpy(), x.numpy(), [3, 4], mean.numpy(), rstd.numpy(), w.numpy(), b.numpy(), mask]
    check_op("aten::native_layer_norm_backward", args)
