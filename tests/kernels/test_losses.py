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


# -- issue 22's losses: what the op_db sweep does not reach --------------------------------------
def test_binary_cross_entropy_clamps_each_log_at_minus_100() -> None:
    # Probabilities of exactly 0 and 1 make a log infinite; ATen clamps it at -100, so the loss
    # is finite and equals torch's bit for bit (and its gradient is finite through the 1e-12 floor).
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-300])
    t = np.array([1.0, 0.0, 0.0, 1.0, 0.25, 1.0])
    (ours,) = check_op("aten::binary_cross_entropy", [x, t, None, 0], rtol=0, atol=0)
    assert ours[0] == 100.0 and ours[1] == 100.0
    grad = np.ones(6)
    ours_grad, _ = KERNELS["gradview::binary_cross_entropy_backward"](np, grad, x, t, None, 0)
    expected = torch.ops.aten.binary_cross_entropy_backward(
        torch.from_numpy(grad), torch.from_numpy(x), torch.from_numpy(t), None, 0
    ).numpy()
    np.testing.assert_array_equal(ours_grad, expected)


def test_binary_cross_entropy_refuses_probabilities_outside_zero_one() -> None:
    _raises("aten::binary_cross_entropy", [np.array([0.5, 1.5]), np.array([0.0, 1.0]), None, 1],
            "between 0 and 1")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss_sums_in_atens_loop_order(reduction: int) -> None:
    # Many classes with large, cancelling terms: a pairwise sum would round differently.
    x = random_array(RNG, (3, 40), np.float64) * 1e3
    t = np.array([0, 17, 39], dtype=np.int64)
    for p in (1, 2):
        check_op("aten::multi_margin_loss", [x, t, p, 1.0, None, reduction], rtol=1e-15, atol=0)


def test_cosine_embedding_loss_adds_atens_float32_epsilon() -> None:
    # Loss.cpp's EPSILON is float32's 1e-12; for short vectors it decides the cosine (an exact
    # 1e-12 is 3e-11 off here).
    x1 = np.array([[1e-7, 2e-7, 0.0], [0.0, 0.0, 0.0]])
    x2 = np.array([[3e-7, -1e-7, 2e-7], [1e-7, 0.0, 0.0]])
    check_op("aten::cosine_embedding_loss", [x1, x2, np.array([1.0, -1.0]), -0.5, 0], rtol=1e-15, atol=0)
