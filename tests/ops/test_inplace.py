"""The gradient formulas of the in-place ops (gradview.ops.inplace and the
result-reading elu_/leaky_relu_/hardtanh_ in gradview.ops.activations).

* Shared formulas: every in-place overload in SAME_AS has exactly its
  out-of-place overload's forward and backward (the same math, which the
  out-of-place tests check against torch).
* Numbers: graphs where an in-place op writes an intermediate value
  (``t = x * 2; t.relu_()``) are differentiated in extended mode and run
  with gradview's interpreter; f's outputs and the vjps must equal
  ``torch.autograd.grad`` on the same graph (torch runs the in-place op under
  its own autograd) and finite differences. That is exact for the formulas
  that do not read the overwritten ``self``.
* READS_SELF lists exactly the in-place formulas whose backward reads
  ``self`` (they need its value from before the op, which the executor keeps):
  a graph differentiated with each one captures the written value if and
  only if the formula is listed.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import constant_value, parse_ir
from gradview.ops import FORMULAS
from gradview.ops.inplace import READS_SELF, SAME_AS
from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, tensor_type

T34 = tensor_type(3, 4)
T4 = tensor_type(4)


def test_shared_formulas_are_the_out_of_place_ones() -> None:
    for inplace, outplace in SAME_AS.items():
        ours, theirs = FORMULAS[inplace], FORMULAS[outplace]
        assert (ours.forward, ours.backward, ours.supports) == (theirs.forward, theirs.backward, theirs.supports)
    assert set(SAME_AS) >= READS_SELF


def _written(call: str, consts: str = "", extra: str = "") -> str:
    """``t = x * 2`` (an intermediate that may be written), then ``y = call`` on it, then ``y * x``."""
    return (
        f"graph(%x : {T34}{extra}):\n  %two : float = prim::Constant[value=2.]()\n{consts}"
        f"  %t : {T34} = aten::mul(%x, %two)\n  %y : {T34} = {call}\n"
        f"  %z : {T34} = aten::mul(%y, %x)\n  return (%z)\n"
    )


def _c(name: str, kind: str, value: str | None) -> str:
    text = f"[value={value}]" if value is not None else ""
    return f"  %{name} : {kind} = prim::Constant{text}()\n"


ONE = _c("one", "int", "1")
CALLS = {
    "add_.Tensor": ("aten::add_(%t, %w, %a)", _c("a", "float", "2.5"), f", %w : {T4}"),
    "add_.Scalar": ("aten::add_(%t, %s, %one)", _c("s", "float", "1.5") + ONE, ""),
    "sub_.Tensor": ("aten::sub_(%t, %w, %one)", ONE, f", %w : {T4}"),
    "sub_.Scalar": ("aten::sub_(%t, %s, %a)", _c("s", "int", "3") + _c("a", "int", "2"), ""),
    "mul_.Scalar": ("aten::mul_(%t, %s)", _c("s", "float", "-1.5"), ""),
    "div_.Scalar": ("aten::div_(%t, %s)", _c("s", "float", "0.75"), ""),
    "div_.Scalar_mode": ("aten::div_(%t, %s, %m)", _c("s", "float", "0.75") + _c("m", "NoneType", None), ""),
    "relu_": ("aten::relu_(%t)", "", ""),
    "sigmoid_": ("aten::sigmoid_(%t)", "", ""),
    "tanh_": ("aten::tanh_(%t)", "", ""),
    "exp_": ("aten::exp_(%t)", "", ""),
    "neg_": ("aten::neg_(%t)", "", ""),
    "elu_": ("aten::elu_(%t, %a, %b, %c)", _c("a", "float", "1.5") + _c("b", "float", "2.") + _c("c", "float", "0.5"), ""),
    "leaky_relu_": ("aten::leaky_relu_(%t, %a)", _c("a", "float", "0.2"), ""),
    "hardtanh_": ("aten::hardtanh_(%t, %a, %b)", _c("a", "float", "-1.") + _c("b", "float", "2."), ""),
    "masked_fill_.Scalar": ("aten::masked_fill_(%t, %m, %v)", _c("v", "float", "3.") + _c("k", "float", "0.")
                            + f"  %m : {tensor_type(3, 4, dtype='Bool', grad=False)} = aten::gt(%x, %k)\n", ""),
    "zero_": ("aten::zero_(%t)", "", ""),
    "fill_.Scalar": ("aten::fill_(%t, %v)", _c("v", "float", "3."), ""),
    "fill_.Tensor": ("aten::fill_(%t, %v)", "", f", %v : {tensor_type()}"),
    "copy_": ("aten::copy_(%t, %w, %f)", _c("f", "bool", "0"), f", %w : {T4}"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_in_place_gradient_matches_torch_autograd(name: str) -> None:
    call, consts, extra = CALLS[name]
    text = _written(call, consts, extra)
    # x in [-1.5, 1.5] away from the kinks: t = 2x crosses 0, -1 and 2 (elu_, relu_, hardtanh_).
    grad = check_formula(text, low=-1.5, high=1.5, away_from=[-0.5, 0.0, 1.0], torch_lists=False)
    kinds = [node.kind() for node in grad.f.nodes()]
    assert f"aten::{name.split('.')[0]}" in kinds


def test_dropout_in_place_draws_one_mask_and_applies_it_to_self() -> None:
    text = (
        f"graph(%x : {T34}, %w : {T4}):\n  %two : float = prim::Constant[value=2.]()\n"
        "  %p : float = prim::Constant[value=0.5]()\n  %train : bool = prim::Constant[value=1]()\n"
        f"  %t : {T34} = aten::mul(%x, %two)\n  %d : {T34} = aten::dropout_(%t, %p, %train)\n"
        f"  %y : {T34} = aten::mul(%d, %w)\n  return (%y, %d)\n"
    )
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (4,))]
    grad = check_finite_differences(text, inputs, seed=0, reseed=7)
    assert grad.df_output_vjps == [0, 1]
    draws = [n for n in grad.f.nodes() if n.kind() in ("aten::dropout", "aten::dropout_")]
    assert sorted(n.kind() for n in draws) == ["aten::dropout", "aten::dropout_"]
    in_place = next(n for n in draws if n.kind() == "aten::dropout_")
    assert constant_value(in_place.inputs()[2]) is False  # now the identity: one random draw per run


SELF_READERS = {
    "mul_.Tensor": ("aten::mul_(%t, %w)", "", f", %w : {T4}"),
    "div_.Tensor": ("aten::div_(%t, %w)", "", f", %w : {T4}"),
    "div_.Tensor_mode": ("aten::div_(%t, %w, %m)", _c("m", "NoneType", None), f", %w : {T4}"),
    "silu_": ("aten::silu_(%t)", "", ""),
    "hardswish_": ("aten::hardswish_(%t)", "", ""),
    "clamp_": ("aten::clamp_(%t, %a, %b)", _c("a", "float", "-1.") + _c("b", "float", "1."), ""),
    "clamp_.Tensor": ("aten::clamp_(%t, %w, %n)", _c("n", "NoneType", None), f", %w : {T4}"),
}


@pytest.mark.parametrize("name", sorted({**CALLS, **SELF_READERS}))
def test_reads_self_lists_the_formulas_that_capture_the_written_value(name: str) -> None:
    call, consts, extra = {**CALLS, **SELF_READERS}[name]
    # Without the trailing multiply by x, so only the in-place formula can capture %t.
    text = _written(call, consts, extra).replace("aten::mul(%y, %x)", "aten::neg(%y)")
    grad = differentiate(parse_ir(text), mode="extended")
    written = next(n for n in grad.f.nodes() if n.kind() == "aten::mul" and n.inputs()[0] is grad.f.inputs()[0])
    captured = {grad.f.outputs()[i] for i in grad.df_input_captured_outputs}
    assert (written.output() in captured) == (f"aten::{name}" in READS_SELF), sorted(captured, key=str)
