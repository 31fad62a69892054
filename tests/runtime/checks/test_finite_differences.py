"""Gradients against finite differences as torch.autograd.gradcheck compares them
(runtime/checks/finite_differences.py): fast mode (one random direction per input) and elementwise."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from gradview.runtime.checks import CheckCancelled
from gradview.runtime.checks.finite_differences import (
    GRADCHECK,
    SINGLE_PRECISION,
    NotFinite,
    Tolerance,
    check_inputs,
    compare_gradients,
    direction,
)

RNG = np.random.default_rng(7)
X, W = RNG.standard_normal((6, 5)), RNG.standard_normal((5, 4))


def tanh_matmul(args: list[Any]) -> list[Any]:
    return [np.tanh(args[0] @ args[1])]


def weights_and_gradients(scale_w: float = 1.0) -> tuple[list[tuple[int, np.ndarray]], dict[int, np.ndarray]]:
    """Output weights v (gradcheck's: uniform, unit norm) and the vjp of tanh(x @ w) by hand."""
    v = direction((6, 4), np.random.default_rng(0))
    upstream = v * (1 - np.tanh(X @ W) ** 2)
    return [(0, v)], {0: upstream @ W.T, 1: scale_w * (X.T @ upstream)}


@pytest.mark.parametrize("mode", ["fast", "elementwise"])
def test_a_right_gradient_passes_in_both_modes(mode: str) -> None:
    weights, analytic = weights_and_gradients()
    checked = check_inputs(tanh_matmul, [X, W], [(0, "x"), (1, "w")], analytic, weights, mode=mode)
    assert [row.name for row in checked.rows] == ["x", "w"]
    assert all(row.passed for row in checked.rows), checked.rows
    assert checked.tol == GRADCHECK
    assert all(row.max_abs_error < 1e-8 for row in checked.rows)


@pytest.mark.parametrize("mode", ["fast", "elementwise"])
def test_a_wrong_gradient_fails_its_own_input_only(mode: str) -> None:
    weights, analytic = weights_and_gradients(scale_w=1.01)  # w's gradient 1% too large
    x_row, w_row = check_inputs(tanh_matmul, [X, W], [(0, "x"), (1, "w")], analytic, weights, mode=mode).rows
    assert x_row.passed and not w_row.passed
    assert w_row.max_rel_error > GRADCHECK.rtol
    if mode == "fast":
        assert w_row.note.startswith("v·J·u: backward ")


def test_fast_mode_runs_the_function_twice_per_input_whatever_its_size() -> None:
    big = RNG.standard_normal((200, 5))
    calls: list[int] = []

    def counted(args: list[Any]) -> list[Any]:
        calls.append(1)
        return tanh_matmul(args)

    v = direction((200, 4), np.random.default_rng(0))
    grads = {0: (v * (1 - np.tanh(big @ W) ** 2)) @ W.T, 1: big.T @ (v * (1 - np.tanh(big @ W) ** 2))}
    fast = check_inputs(counted, [big, W], [(0, "x"), (1, "w")], grads, [(0, v)])
    assert all(row.passed for row in fast.rows) and [row.checked for row in fast.rows] == [1000, 20]
    assert len(calls) == 1 + 2 * 2  # one base run, then two per input
    calls.clear()
    sampled = check_inputs(counted, [big, W], [(0, "x"), (1, "w")], grads, [(0, v)], mode="elementwise", samples=16)
    assert all(row.passed for row in sampled.rows) and [row.checked for row in sampled.rows] == [16, 16]
    assert len(calls) == 1 + 2 * (16 + 16)  # two per element checked


def test_a_function_computing_in_single_precision_gets_float32_tolerances() -> None:
    weights, analytic = weights_and_gradients()

    def single(args: list[Any]) -> list[Any]:
        return [np.tanh((args[0] @ args[1]).astype(np.float32))]

    checked = check_inputs(single, [X, W], [(0, "x"), (1, "w")], analytic, weights)
    assert checked.tol == SINGLE_PRECISION and "float32" in checked.tol.describe()
    assert all(row.passed for row in checked.rows), checked.rows
    # At eps 1e-6, float32's rounding swamps the difference: the tolerance change is what makes it pass.
    strict = check_inputs(single, [X, W], [(0, "x"), (1, "w")], analytic, weights, tol=Tolerance(precision="forced"))
    assert not all(row.passed for row in strict.rows)


def test_an_input_no_gradient_reached_is_compared_as_zeros() -> None:
    weights, analytic = weights_and_gradients()
    del analytic[1]
    x_row, w_row = check_inputs(tanh_matmul, [X, W], [(0, "x"), (1, "w")], analytic, weights).rows
    assert x_row.passed and not w_row.passed and "no gradient reached" in w_row.note


def test_report_hears_each_input_and_may_stop_the_check() -> None:
    weights, analytic = weights_and_gradients()
    heard: list[str] = []

    def report(text: str) -> None:
        heard.append(text)
        if len(heard) == 2:
            raise CheckCancelled(text)

    with pytest.raises(CheckCancelled):
        check_inputs(tanh_matmul, [X, W], [(0, "x"), (1, "w")], analytic, weights, report=report)
    assert heard == ["input 1 of 2: %x", "input 2 of 2: %w"]


def test_the_defaults_are_torch_gradchecks() -> None:
    torch = pytest.importorskip("torch")
    defaults = inspect.signature(torch.autograd.gradcheck).parameters
    assert (GRADCHECK.eps, GRADCHECK.atol, GRADCHECK.rtol) == tuple(defaults[k].default for k in ("eps", "atol", "rtol"))


def test_the_directions_are_torch_gradchecks_unit_vectors() -> None:
    u = direction((3, 4), np.random.default_rng(1))
    assert u.shape == (3, 4) and np.linalg.norm(u) == pytest.approx(1.0) and (u >= 0).all()


def test_outputs_that_are_not_finite_leave_nothing_to_compare() -> None:
    weights, analytic = weights_and_gradients()
    with pytest.raises(NotFinite, match="output 0 is not finite"), np.errstate(invalid="ignore"):
        check_inputs(lambda args: [np.log(args[0] @ args[1])], [X, W], [(0, "x")], analytic, weights)


def test_compare_gradients_passes_equal_and_fails_perturbed() -> None:
    rng = np.random.default_rng(0)
    numeric = rng.standard_normal(50)
    same = compare_gradients(numeric + 1e-9, numeric)
    assert same.passed and same.max_abs_error == pytest.approx(1e-9)
    perturbed = numeric.copy()
    perturbed[7] += 0.01
    wrong = compare_gradients(perturbed, numeric)
    assert not wrong.passed
    assert wrong.max_abs_error == pytest.approx(0.01)
    assert wrong.max_rel_error > 1e-4
    assert not compare_gradients(np.array([np.nan]), np.array([1.0])).passed
    assert not compare_gradients(np.ones(3), np.ones(4)).passed
