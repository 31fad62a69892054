"""Loss kernels against ``torch.ops.aten``: mse_loss (+ backward), nll_loss,
nll_loss2d, nll_loss_nd, nll_loss_forward (+ backward kernels) and
cross_entropy_loss (class indices with weights, ignore_index, label smoothing;
class probabilities), every reduction; gradview::cross_entropy_loss_backward
against torch.autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels.oracle import check_op, op_graph, random_array, torch_call

RNG = np.random.default_rng(5)
REDUCTIONS = [0, 1, 2]


def _log_probs(*shape: int) -> np.ndarray:
    x = random_array(RNG, shape, np.float64)
    d = 0 if len(shape) == 1 else 1
    return x - np.log(np.exp(x).sum(axis=d, keepdims=True))


def _targets(shape: tuple[int, ...], classes: int, ignored: int | None = None) -> np.ndarray:
    t = RNG.integers(0, classes, shape)
    if ignored is not None and t.size:
        t.reshape(-1)[:: 3] = ignored
    return t.astype(np.int64)


def _raises(qualified: str, args: list, match: str) -> None:
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError, match=match):
        run_graph(graph, inputs)
    with pytest.raises((RuntimeError, IndexError)):
        torch_call(qualified, args)


# -- mse_loss -----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("a", "b"), [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((2, 1, 3), (4, 1))])
def test_mse_loss(reduction: int, a: tuple, b: tuple) -> None:
    x, y = random_array(RNG, a, np.float64), random_array(RNG, b, np.float64)
    check_op("aten::mse_loss", [x, y, reduction])
    out = torch.ops.aten.mse_loss(torch.from_numpy(x), torch.from_numpy(y), reduction)
    check_op("aten::mse_loss_backward", [random_array(RNG, tuple(out.shape), np.float64), x, y, reduction])


def test_mse_loss_of_empty_tensors() -> None:
    for reduction in REDUCTIONS:
        check_op("aten::mse_loss", [np.zeros((0, 3)), np.zeros((0, 3)), reduction])


# -- nll_loss family ------------------------------------------------------------------------------
NLL_CASES = [
    ("aten::nll_loss", (5, 4)), ("aten::nll_loss", (4,)), ("aten::nll_loss2d", (2, 3, 4, 5)),
    ("aten::nll_loss_nd", (2, 3, 4)), ("aten::nll_loss_nd", (2, 3, 2, 2, 2)), ("aten::nll_loss_nd", (5, 4)),
    ("aten::nll_loss", (0, 3)),
]


@pytest.mark.parametrize(("op", "shape"), NLL_CASES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss(op: str, shape: tuple, reduction: int, weighted: bool, ignore_index: int) -> None:
    d = 0 if len(shape) == 1 else 1
    classes = shape[d]
    x = _log_probs(*shape)
    t = _targets(tuple(s for i, s in enumerate(shape) if i != d), classes, ignored=ignore_index if ignore_index >= 0 else None)
    w = RNG.uniform(0.5, 2.0, classes) if weighted else None
    check_op(op, [x, t, w, reduction, ignore_index])
    if op == "aten::nll_loss_nd":
        return
    forward = "aten::nll_loss_forward" if op == "aten::nll_loss" else "aten::nll_loss2d_forward"
    _, total_weight = check_op(forward, [x, t, w, reduction, ignore_index])
    out = torch.ops.aten.nll_loss_nd(torch.from_numpy(x), torch.from_numpy(t), None, reduction, ignore_index)
    grad = random_array(RNG, tuple(out.shape), np.float64)
    backward = op + "_backward"
    check_op(backward, [grad, x, t, w, reduction, ignore_index, np.asarray(total_weight)])


def test_nll_loss_mean_of_only_ignored_targets_is_nan() -> None:
    x = _log_probs(3, 4)
    check_op("aten::nll_loss", [x, np.full(3, -100), None, 1, -100])
    check_op("aten::nll_loss_forward", [x, np.full(3, 2), None, 1, 2])


def test_nll_loss_takes_uint8_targets() -> None:
    check_op("aten::nll_loss", [_log_probs(3, 4), np.array([0, 3, 1], dtype=np.uint8), None, 1, -100])


@pytest.mark.parametrize(
    ("op", "args", "match"),
    [
        ("aten::nll_loss", [_log_probs(3, 4), np.array([0, 5, 1]), None, 1, -100], "out of bounds"),
        ("aten::nll_loss", [_log_probs(3, 4), np.array([0, 1, 1], dtype=np.int32), None, 1, -100], "Long or Byte"),
        ("aten::nll_loss", [_log_probs(2, 3, 4), np.zeros((2, 4), dtype=np.int64), None, 1, -100], "1D or 2D"),
        ("aten::nll_loss2d", [_log_probs(2, 3, 4), np.zeros((2, 4), dtype=np.int64), None, 1, -100], "4D"),
        ("aten::nll_loss", [_log_probs(3, 4), np.array([0, 1]), None, 1, -100], "target of shape"),
    ],
)
def test_nll_loss_errors(op: str, args: list, match: str) -> None:
    _raises(op, args, match)


# -- cross_entropy_loss ------------------------------------------------------------------------------
CE_SHAPES = [(5, 4), (4,), (2, 3, 4), (2, 3, 2, 2)]


def _ce_args(shape: tuple, probabilities: bool, weighted: bool, ignore_index: int) -> list:
    d = 0 if len(shape) == 1 else 1
    x = random_array(RNG, shape, np.float64)
    if probabilities:
        t = RNG.uniform(size=shape)
        t = t / t.sum(axis=d, keepdims=True)
    else:
        ignored = ignore_index if ignore_index >= 0 else None
        t = _targets(tuple(s for i, s in enumerate(shape) if i != d), shape[d], ignored)
    w = RNG.uniform(0.5, 2.0, shape[d]) if weighted else None
    return [x, t, w]


@pytest.mark.parametrize("shape", CE_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize(("probabilities", "ignore_index"), [(False, -100), (False, 1), (True, -100)])
def test_cross_entropy_loss(shape: tuple, reduction: int, weighted: bool, smoothing: float,
                            probabilities: bool, ignore_index: int) -> None:
    x, t, w = _ce_args(shape, probabilities, weighted, ignore_index)
    check_op("aten::cross_entropy_loss", [x, t, w, reduction, ignore_index, smoothing], rtol=1e-10)


@pytest.mark.parametrize("shape", CE_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize(("probabilities", "ignore_index"), [(False, -100), (False, 1), (True, -100)])
def test_cross_entropy_loss_backward(shape: tuple, reduction: int, weighted: bool, smoothing: float,
                                     probabilities: bool, ignore_index: int) -> None:
    x, t, w = _ce_args(shape, probabilities, weighted, ignore_index)
    leaves = [torch.tensor(x, requires_grad=True), torch.tensor(t, requires_grad=probabilities)]
    weight = None if w is None else torch.tensor(w)
    out = torch.ops.aten.cross_entropy_loss(leaves[0], leaves[1], weight, reduction, ignore_index, smoothing)
    grad = torch.randn(out.shape, dtype=torch.float64)
    wanted = leaves if probabilities else leaves[:1]
    expected = torch.autograd.grad(out, wanted, grad)
    ours = KERNELS["gradview::cross_entropy_loss_backward"](
        np, grad.numpy(), x, t, w, reduction, ignore_index, smoothing, [True, probabilities]
    )
    for got, theirs in zip(ours, expected, strict=False):
        np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-10, atol=1e-14)
    if not probabilities:
        assert ours[1] is None


def test_cross_entropy_loss_errors() -> None:
    x = random_array(RNG, (2, 3), np.float64)
    probabilities = np.full((2, 3), 1 / 3)
    _raises("aten::cross_entropy_loss", [x, probabilities, None, 1, 2, 0.0], "ignore_index")
    _raises("aten::cross_entropy_loss", [x, np.array([0, 3]), None, 1, -100, 0.0], "out of bounds")
    check_op("aten::cross_entropy_loss", [np.zeros((0, 3)), np.zeros((0, 3)), None, 1, -100, 0.0])
    check_op("aten::cross_entropy_loss", [np.zeros((0, 3)), np.zeros(0, dtype=np.int64), None, 1, -100, 0.1])
