"""The var, std, logsumexp and nanmean formulas against torch.autograd, torch's
Gradient lists (var, std and logsumexp are in PyTorch's JIT autodiff) and finite
differences, in float64: every overload, constant and run-time dims, keepdim,
corrections 0, 1, 2 and too large, an empty dim list, zero std, infinities, NaNs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradview.autodiff import DifferentiationError, differentiate
from gradview.ir import parse_ir
from gradview.ops import NO_GRADIENT
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, graph
from tests.autodiff.ir_builder import const as _const
from tests.autodiff.oracle import check_gradient

X = (2, 3, 4)


def const(name: str, value: object) -> str:
    """ir_builder's constant, with ``[]`` built by ListConstruct (torch's parser
    cannot read an empty int[] constant)."""
    return f"%{name} : int[] = prim::ListConstruct()" if value == [] else _const(name, value)


def _shape_of(op: str, **kwargs: object) -> tuple[int, ...]:
    return tuple(getattr(torch.zeros(X), op)(**kwargs).shape)


def _var_graph(op: str, overload: str, dims: list[int] | None, correction: object, keepdim: bool) -> str:
    kwargs: dict[str, object] = {"dim": dims, "keepdim": keepdim}
    if overload == "":
        body = [const("u", bool(correction)), f"%y : {T()} = aten::{op}(%x, %u)"]
        return graph({"x": T(*X)}, body, ["y"])
    if overload == "dim":
        out = _shape_of(op, unbiased=bool(correction), **kwargs)
        body = [const("d", dims), const("u", bool(correction)), const("k", keepdim)]
        return graph({"x": T(*X)}, body + [f"%y : {T(*out)} = aten::{op}(%x, %d, %u, %k)"], ["y"])
    out = _shape_of(op, correction=correction, **kwargs)
    body = [const("d", dims), const("c", correction), const("k", keepdim)]
    return graph({"x": T(*X)}, body + [f"%y : {T(*out)} = aten::{op}(%x, %d, %c, %k)"], ["y"])


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std_of_everything(op: str, unbiased: bool) -> None:
    check_formula(_var_graph(op, "", None, unbiased, False))


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dims", [[1], [-1, 0], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std_dim(op: str, dims: list[int], keepdim: bool, unbiased: bool) -> None:
    grad = check_formula(_var_graph(op, "dim", dims, unbiased, keepdim))
    assert grad.captured_count <= (2 if op == "std" else 1)  # the input (and std's result)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dims", [None, [2], [0, -1]], ids=str)
@pytest.mark.parametrize("correction", [None, 0, 2, 1.5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_correction(op: str, dims: list[int] | None, correction: object, keepdim: bool) -> None:
    check_formula(_var_graph(op, "correction", dims, correction, keepdim))


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(("dims", "correction"), [(None, 24), (None, 30), ([1], 3), ([1], 5), ([], 1), ([], 0)])
def test_var_std_with_too_few_elements_follow_eager(op: str, dims: list[int] | None, correction: int) -> None:
    """N - correction <= 0 over everything gives NaN/inf; with dims 2/(N - c) is inf or
    negative; an empty dim list counts N = 1 in PyTorch's backward (inf gradients)."""
    x = np.random.default_rng(3).uniform(0.5, 1.5, X)
    check_gradient(_var_graph(op, "correction", dims, correction, False), [x], compare_torch_lists=False)


@pytest.mark.parametrize("op", ["var", "std"])
def test_std_of_a_constant_slice_has_zero_gradient(op: str) -> None:
    x = np.ones(X)
    x[1] = np.random.default_rng(0).uniform(0.5, 1.5, X[1:])
    check_gradient(_var_graph(op, "dim", [1, 2], True, False), [x])


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_of_a_0d_tensor(op: str) -> None:
    body = [const("d", [0]), const("c", 0), const("k", False), f"%y : {T()} = aten::{op}(%x, %d, %c, %k)"]
    check_gradient(graph({"x": T()}, body, ["y"]), [np.array(1.5)], compare_torch_lists=False)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dims", [[1], [0, -1]], ids=str)
def test_var_std_with_run_time_dims(op: str, dims: list[int]) -> None:
    body = [const("c", 1), const("k", False), f"%y : Tensor = aten::{op}(%x, %d, %c, %k)"]
    text = graph({"x": T(*X), "d": "int[]"}, body, ["y"])
    check_formula(text, scalars={"d": dims})


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_of_an_untyped_input(op: str) -> None:
    """Sizes known only at run time: N - correction is tested by a prim::If."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, X)
    for correction in (1, 30):
        body = [const("d", None), const("c", correction), const("k", False)]
        text = graph({"x": "Tensor"}, body + [f"%y : Tensor = aten::{op}(%x, %d, %c, %k)"], ["y"])
        check_gradient(text, [x], compare_torch_lists=False)
    body = [const("d", [1]), const("c", 3), const("k", True), f"%y : Tensor = aten::{op}(%x, %d, %c, %k)"]
    check_gradient(graph({"x": "Tensor"}, body, ["y"]), [x], compare_torch_lists=False)


def test_a_run_time_correction_is_refused_naming_the_node() -> None:
    body = [const("d", [1]), const("k", False), f"%y : {T(2, 4)} = aten::var(%x, %d, %c, %k)"]
    text = graph({"x": T(*X), "c": "Scalar"}, body, ["y"])
    with pytest.raises(DifferentiationError, match="constant unbiased/correction.*aten::var"):
        differentiate(parse_ir(text))


# -- logsumexp -----------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [[1], [-1, 0], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dims: list[int], keepdim: bool) -> None:
    out = tuple(torch.zeros(X).logsumexp(dims, keepdim).shape)
    body = [const("d", dims), const("k", keepdim), f"%y : {T(*out)} = aten::logsumexp(%x, %d, %k)"]
    grad = check_formula(graph({"x": T(*X)}, body, ["y"]), low=-3.0, high=3.0)
    assert grad.captured_count == 2  # the input and the result, as torch


def test_logsumexp_with_run_time_dims_and_infinities() -> None:
    body = [const("k", False), "%y : Tensor = aten::logsumexp(%x, %d, %k)"]
    text = graph({"x": T(3, 3), "d": "int[]"}, body, ["y"])
    x = np.array([[-math.inf, 0.5, 1.0], [2.0, -math.inf, -math.inf], [0.1, 0.2, 0.3]])
    check_gradient(text, [x, [1]])
    check_formula(text, scalars={"d": [0]})


def test_logsumexp_of_a_0d_tensor() -> None:
    body = [const("d", [0]), const("k", False), f"%y : {T()} = aten::logsumexp(%x, %d, %k)"]
    check_formula(graph({"x": T()}, body, ["y"]))


# -- nanmean --------------------------------------------------------------------------------
def _nanmean_graph(dims: list[int] | None, keepdim: bool, x: str = T(*X)) -> str:
    out = "Tensor" if dims is None and keepdim else T(*_shape_of("nanmean", dim=dims, keepdim=keepdim))
    body = [const("d", dims), const("k", keepdim), const("n", None), f"%y : {out} = aten::nanmean(%x, %d, %k, %n)"]
    return graph({"x": x}, body, ["y"])


@pytest.mark.parametrize("dims", [None, [1], [-1, 0], []], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_nanmean(dims: list[int] | None, keepdim: bool) -> None:
    text = _nanmean_graph(dims, keepdim)
    check_formula(text, torch_lists=False)
    x = np.random.default_rng(2).uniform(0.5, 1.5, X)
    x[0, 1, :] = np.nan  # a slice of NaNs only: NaN gradient there, as in PyTorch
    x[1, 2, 3] = np.nan
    check_gradient(text, [x], compare_torch_lists=False)


def test_nanmean_with_a_dtype_casts_the_gradient_back() -> None:
    body = [const("d", [1]), const("k", False), const("t", 7), "%y : Tensor = aten::nanmean(%x, %d, %k, %t)"]
    text = graph({"x": T(2, 3, dtype="Float")}, body, ["y"])
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    check_gradient(text, [x], rtol=1e-6, compare_torch_lists=False)


def test_any_all_have_explicit_no_gradient_entries() -> None:
    for op in ("any", "all"):
        for overload in ("", ".dim", ".dims", ".int", ".float", ".bool"):
            assert "boolean" in NO_GRADIENT[f"aten::{op}{overload}"]
