"""Acceptance 2 for the softmax formulas (softmax, log_softmax and their ``_softmax``
forms, gradview.ops.softmax): each
graph is checked against torch (torch's Gradient lists and capture count where torch 2.13
differentiates the op: all but the _softmax forms, and torch.autograd's numbers) and
against finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph
from tests.autodiff.oracle import check_gradient, run_gradient

X = (2, 3, 4)


# -- softmax, log_softmax -------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(op: str, dim: int) -> None:
    text = graph({"x": T(*X)}, [const("d", dim), const("n", None), f"%y : {T(*X)} = aten::{op}(%x, %d, %n)"], ["y"])
    grad = check_formula(text, low=-2.0, high=2.0)
    assert grad.df_input_captured_outputs == [0] and not grad.df_input_captured_inputs  # the result only


@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
@pytest.mark.parametrize("dim", [0, -1])
def test_underscore_softmax(op: str, dim: int) -> None:
    text = graph({"x": T(*X)}, [const("d", dim), const("h", False), f"%y : {T(*X)} = aten::{op}(%x, %d, %h)"], ["y"])
    assert check_formula(text, torch_lists=False).captured_count == 1


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_with_dtype_casts_back(op: str) -> None:
    text = graph({"x": T(*X, dtype="Float")}, [const("d", 1), const("t", 7), f"%y : {T(*X)} = aten::{op}(%x, %d, %t)"], ["y"])
    x = np.random.default_rng(0).standard_normal(X).astype(np.float32)
    check_gradient(text, [x], rtol=1e-6, compare_torch_lists=False)
    _, (vjp,) = run_gradient(differentiate(parse_ir(text), mode="extended"), [x], [np.ones(X)])
    assert vjp.dtype == np.float32


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_an_untyped_tensor(op: str) -> None:
    """The input's dtype is read from the result at run time: still one capture."""
    text = graph({"x": "Tensor"}, [const("d", 1), const("n", None), f"%y : Tensor = aten::{op}(%x, %d, %n)"], ["y"])
    grad = check_formula(text, inputs=[np.random.default_rng(0).standard_normal(X)])
    assert grad.captured_count == 1


@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
def test_underscore_softmax_of_an_untyped_tensor(op: str) -> None:
    text = graph({"x": "Tensor"}, [const("d", 0), const("h", False), f"%y : Tensor = aten::{op}(%x, %d, %h)"], ["y"])
    grad = check_formula(text, torch_lists=False, inputs=[np.random.default_rng(1).standard_normal(X)])
    assert grad.captured_count == 1

