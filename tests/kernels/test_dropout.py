"""Dropout and random-draw kernels (kernels/dropout.py): PyTorch's where the result is
not random (evaluation, p=0, p=1, argument checks), PyTorch's distributions and
shapes where it is, and gradview's seeded values: the same on every run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.ir import Graph
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call

DROPOUTS = ["aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"]


def run_graph(graph: Graph, inputs: list) -> list:
    return _run_graph(graph, inputs, backend=getattr(oracle, "BACKEND", "numpy"))


def _run(op: str, args: list) -> list:
    return [np.asarray(a) for a in run_graph(*op_graph(op, args))]


def _x(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).random(shape) + 1.0  # no zeros: a dropped element shows


@pytest.mark.parametrize("op", DROPOUTS)
def test_dropout_without_randomness_is_pytorchs(op: str) -> None:
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    x[0, 0, 0] = math.inf  # p=1 multiplies by zero: inf gives NaN, as in PyTorch
    for p, train in ((0.3, False), (0.0, True), (1.0, True)):
        check_op(op, [x, p, train], rtol=0, atol=0)


@pytest.mark.parametrize("op", DROPOUTS)
def test_dropout_refuses_a_probability_outside_0_1(op: str) -> None:
    graph, inputs = op_graph(op, [_x(0, (3, 4)), 1.5, False])
    with pytest.raises(GraphRuntimeError, match="between 0 and 1"):
        run_graph(graph, inputs)


@pytest.mark.parametrize("op", DROPOUTS)
def test_the_mask_is_the_same_on_every_run_and_for_every_input_of_the_shape(op: str) -> None:
    x = _x(1, (4, 6, 5))
    (first,) = _run(op, [x, 0.4, True])
    (again,) = _run(op, [x, 0.4, True])
    np.testing.assert_array_equal(first, again)
    (doubled,) = _run(op, [2 * x, 0.4, True])
    kept = first != _run(op, [np.zeros_like(x), 0.4, True])[0]
    np.testing.assert_array_equal(doubled != _run(op, [np.zeros_like(x), 0.4, True])[0], kept)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_keeps_1_minus_p_and_scales_by_its_inverse(p: float) -> None:
    x = _x(2, (200, 250))
    (out,) = _run("aten::dropout", [x, p, True])
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-12)
    assert abs(kept.mean() - (1 - p)) < 0.01  # 50000 draws: sd < 0.0023
    (native, mask) = _run("aten::native_dropout", [x, p, True])
    np.testing.assert_array_equal(mask, kept)  # one mask for dropout and native_dropout
    np.testing.assert_allclose(native, out, rtol=1e-15)


def test_feature_dropout_drops_whole_channels() -> None:
    x = _x(3, (40, 50, 3, 2))
    (out,) = _run("aten::feature_dropout", [x, 0.5, True])
    channel_kept = (out != 0).reshape(40, 50, -1)
    assert np.all(channel_kept.all(axis=2) | ~channel_kept.any(axis=2))
    assert abs(channel_kept[..., 0].mean() - 0.5) < 0.03
    graph, inputs = op_graph("aten::feature_dropout", [x[0, 0, 0], 0.5, True])
    with pytest.raises(GraphRuntimeError, match="at least 2 dimensions"):
        run_graph(graph, inputs)


@pytest.mark.parametrize("op", ["aten::alpha_dropout", "aten::feature_alpha_dropout"])
def test_alpha_dropout_keeps_zero_mean_and_unit_variance(op: str) -> None:
    """PyTorch's constants: standard normal inputs stay standard (the point of alpha dropout);
    dropped elements all take the one value -alpha * a * (1 - p)."""
    x = np.random.default_rng(4).standard_normal((400, 500, 1))
    (out,) = _run(op, [x, 0.3, True])
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * 0.3 + 1) * 0.7)
    dropped = np.isclose(out, -alpha * a * 0.7, rtol=0, atol=1e-12)
    assert abs(dropped.mean() - 0.3) < 0.01


def test_the_noise_is_the_gradient_factor_of_each_dropout() -> None:
    x = _x(5, (6, 4, 3))
    for op, flags in (("aten::feature_dropout", (True, False)), ("aten::alpha_dropout", (False, True))):
        (out,) = _run(op, [x, 0.4, True])
        (base,) = _run(op, [np.zeros_like(x), 0.4, True])
        (noise,) = _run("gradview::dropout_noise", [x, 0.4, True, *flags])
        np.testing.assert_allclose(out, x * noise + base, rtol=1e-14, atol=1e-15)


def test_bernoulli_draws_ones_with_the_probability_given() -> None:
    probs = np.random.default_rng(6).random((300, 200))
    (drawn,) = _run("aten::bernoulli", [probs])
    assert drawn.dtype == probs.dtype and set(np.unique(drawn)) <= {0.0, 1.0}
    assert abs(drawn.mean() - probs.mean()) < 0.01
    np.testing.assert_array_equal(_run("aten::bernoulli", [probs])[0], drawn)
    (fixed,) = _run("aten::bernoulli.p", [probs, 0.25])
    assert abs(fixed.mean() - 0.25) < 0.01
    graph, inputs = op_graph("aten::bernoulli.p", [probs, 1.5])
    with pytest.raises(GraphRuntimeError, match=r"expects p to be in \[0, 1\]"):
        run_graph(graph, inputs)


def test_normal_has_the_mean_and_std_given_and_pytorchs_shape() -> None:
    mean, std = np.full((200, 300), 2.0), np.full((300,), 0.5)
    (drawn,) = _run("aten::normal.Tensor_Tensor", [mean, std])
    (theirs,) = torch_call("aten::normal.Tensor_Tensor", [mean, std])
    assert drawn.shape == tuple(theirs.shape) and drawn.dtype == theirs.numpy().dtype
    assert abs(drawn.mean() - 2.0) < 0.01 and abs(drawn.std() - 0.5) < 0.01
    graph, inputs = op_graph("aten::normal.Tensor_float", [mean, -1.0])
    with pytest.raises(GraphRuntimeError, match="normal expects std >= 0.0"):
        run_graph(graph, inputs)


@pytest.mark.parametrize(
    ("op", "args", "check"),
    [
        ("aten::normal_", [3.0, 2.0], lambda v: abs(v.mean() - 3) < 0.05 and abs(v.std() - 2) < 0.05),
        ("aten::uniform_", [-1.0, 3.0], lambda v: v.min() >= -1 and v.max() < 3 and abs(v.mean() - 1) < 0.05),
        ("aten::exponential_", [2.0], lambda v: v.min() >= 0 and abs(v.mean() - 0.5) < 0.02),
        ("aten::geometric_", [0.25], lambda v: v.min() >= 1 and abs(v.mean() - 4) < 0.1),
        ("aten::log_normal_", [0.0, 0.5], lambda v: abs(np.log(v).std() - 0.5) < 0.02),
        ("aten::cauchy_", [1.0, 2.0], lambda v: abs(np.median(v) - 1) < 0.1),
        ("aten::bernoulli_.float", [0.3], lambda v: abs(v.mean() - 0.3) < 0.02),
    ],
)
def test_in_place_fills_overwrite_self_with_the_distribution(op: str, args: list, check: object) -> None:
    x = np.zeros((100, 100))
    (filled,) = _run(op, [x, *args])
    assert filled.shape == x.shape and check(filled)  # type: ignore[operator]
    np.testing.assert_array_equal(_run(op, [np.zeros((100, 100)), *args])[0], filled)


def test_randint_like_and_multinomial_draw_in_range() -> None:
    x = np.zeros((50, 40))
    (ints,) = _run("aten::randint_like.low_dtype", [x, 3, 7, None, None, None, None, None])
    assert ints.dtype == x.dtype and ints.min() >= 3 and ints.max() <= 6
    weights = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 0.0]])
    (picked,) = _run("aten::multinomial", [weights, 2, True])
    assert picked.dtype == np.int64 and picked.shape == (2, 2)
    assert set(picked[0]) <= {1, 2} and set(picked[1]) == {0}
    graph, inputs = op_graph("aten::multinomial", [weights, 4, False])
    with pytest.raises(GraphRuntimeError, match="without replacement"):
        run_graph(graph, inputs)
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.from_numpy(weights), 4, False)
