"""gradient_check: one graph's gradient through the executor against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.loaders.targets import Session
from gradview.runtime.checks import gradient_check

from ..test_executor_trace import LOOP_AND_IF

# relu, sigmoid, tanh, mean and two broadcasts ([5, 4] + [4], [5, 4] * [5, 1]).
ACTIVATIONS = """graph(%x : Tensor, %b : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%x, %b, %one)
  %r : Tensor = aten::relu(%s)
  %g : Tensor = aten::sigmoid(%r)
  %t : Tensor = aten::tanh(%x)
  %p : Tensor = aten::mul(%g, %t)
  %q : Tensor = aten::mul(%p, %w)
  %m : Tensor = aten::mean(%q)
  return (%m, %q)
"""

# Two DifferentiableGraphs around a loop whose body holds more (after unrolling).


def test_the_example_passes_the_gradient_check(mlp_session: Session) -> None:
    rows = gradient_check(mlp_session.graph, mlp_session.inputs)
    assert [r.name for r in rows] == mlp_session.input_names
    for row, value in zip(rows, mlp_session.inputs, strict=True):
        assert row.passed, row
        assert row.shape == value.shape and row.checked == value.size  # fast mode: one direction over all elements
        assert row.max_abs_error < 1e-6


def test_loops_branches_and_non_tensor_inputs() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4))
    for flag in (True, False):
        rows = gradient_check(parse_ir(LOOP_AND_IF), [x, 3, flag])
        assert rows[0].name == "x" and rows[0].passed, rows[0]
        for row in rows[1:]:
            assert not row.passed and row.skipped is not None and row.checked == 0
        assert "int" in rows[1].skipped and "bool" in rows[2].skipped


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_activations_and_broadcasting(dtype) -> None:
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in ((5, 4), (4,), (5, 1))]
    rows = gradient_check(parse_ir(ACTIVATIONS), inputs)
    assert [r.name for r in rows] == ["x", "b", "w"]
    assert all(r.passed for r in rows), rows


def test_the_elementwise_check_samples_big_inputs() -> None:
    text = """graph(%x : Tensor):
  %t : Tensor = aten::tanh(%x)
  %s : Tensor = aten::sigmoid(%t)
  %u : Tensor = aten::mul(%s, %x)
  %v : Tensor = aten::tanh(%u)
  %w : Tensor = aten::mul(%v, %s)
  return (%w)
"""
    (row,) = gradient_check(parse_ir(text), [np.random.default_rng(4).standard_normal((40, 50))], mode="elementwise", samples=16)
    assert row.passed and row.checked == 16


def test_failures_are_rows_not_exceptions(mlp_session: Session) -> None:
    inputs = list(mlp_session.inputs)
    inputs[1] = np.ones((5, 16))  # w1 must be 4x16
    rows = gradient_check(mlp_session.graph, inputs)
    assert len(rows) == 5 and all(r.error and not r.passed for r in rows)
    assert all(r.error for r in gradient_check(mlp_session.graph, None))
    assert "inputs given" in gradient_check(mlp_session.graph, inputs[:2])[0].error


def test_a_small_group_inlined_back_still_differentiates() -> None:
    text = """graph(%x : Tensor):
  %t : Tensor = aten::tanh(%x)
  %u : Tensor = aten::sigmoid(%t)
  return (%u)
"""
    (row,) = gradient_check(parse_ir(text), [np.random.default_rng(5).standard_normal((2, 3))])
    assert row.passed, row


def test_an_input_no_gradient_reaches_is_noted_and_compared_as_zero() -> None:
    text = """graph(%x : Tensor, %unused : Tensor):
  %t : Tensor = aten::tanh(%x)
  %s : Tensor = aten::sigmoid(%t)
  %u : Tensor = aten::mul(%s, %x)
  %v : Tensor = aten::tanh(%u)
  %w : Tensor = aten::mul(%v, %s)
  return (%w)
"""
    rng = np.random.default_rng(6)
    x_row, unused_row = gradient_check(parse_ir(text), [rng.standard_normal(3), rng.standard_normal(2)])
    assert x_row.passed and x_row.note == ""
    assert unused_row.passed and "no gradient reached" in unused_row.note
    assert unused_row.max_abs_error == 0.0
