"""Gradient formulas of average pooling (gradview.ops.pooling): avg_pool2d and the adaptive
pools (forms PyTorch's JIT differentiates, so torch's Gradient lists are compared too) and their
backward kernels (double backward), against torch.autograd and finite differences in float64,
over kernel sizes, strides, paddings, ceil_mode, count_include_pad and divisor_override.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, make_inputs
from tests.autodiff.ir_builder import T, const, graph

A = torch.ops.aten


def _shape(fn: object, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(fn(torch.zeros(shape, dtype=torch.float64)).shape)  # type: ignore[operator]


POOLS = [
    # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor
    ((1, 2, 5, 5), [2, 2], [2, 2], [0, 0], False, True, None),
    ((2, 4, 6), [3, 3], [1, 1], [1, 1], False, False, None),
    ((1, 1, 7, 6), [3, 2], [2, 2], [1, 1], True, True, None),
    ((1, 2, 7, 7), [3, 3], [], [1, 1], True, False, None),
    ((1, 2, 6, 5), [2, 3], [1, 2], [1, 0], False, True, 4),
]


def _avg_body(kernel: list, stride: list, padding: list, ceil: bool, cip: bool, divisor: int | None) -> list[str]:
    return [
        const("ks", kernel),
        const("st", stride) if stride else "%st : int[] = prim::ListConstruct()",
        const("pd", padding), const("cm", ceil), const("ci", cip), const("dv", divisor),
    ]


@pytest.mark.parametrize(("shape", "kernel", "stride", "padding", "ceil", "cip", "divisor"), POOLS, ids=str)
def test_avg_pool2d(shape: tuple, kernel: list, stride: list, padding: list, ceil: bool, cip: bool,
                    divisor: int | None) -> None:
    out = _shape(lambda x: A.avg_pool2d(x, kernel, stride, padding, ceil, cip, divisor), shape)
    body = _avg_body(kernel, stride, padding, ceil, cip, divisor)
    body.append(f"%y : {T(*out)} = aten::avg_pool2d(%x, %ks, %st, %pd, %cm, %ci, %dv)")
    grad = check_formula(graph({"x": T(*shape)}, body, ["y"]))
    assert grad.captured_count == 1  # the input, for its shape


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (3, 6, 4)], ids=str)
@pytest.mark.parametrize("out", [[1, 1], [2, 3], [5, 7], [4, 9]], ids=str)
@pytest.mark.parametrize("op", ["adaptive_avg_pool2d", "_adaptive_avg_pool2d"])
def test_adaptive_avg_pool2d(shape: tuple, out: list, op: str) -> None:
    result = _shape(lambda x: A.adaptive_avg_pool2d(x, out), shape)
    body = [const("o", out), f"%y : {T(*result)} = aten::{op}(%x, %o)"]
    check_formula(graph({"x": T(*shape)}, body, ["y"]), torch_lists=op == "adaptive_avg_pool2d")


@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 5)], ids=str)
@pytest.mark.parametrize("out", [1, 3, 7, 10])
def test_adaptive_avg_pool1d(shape: tuple, out: int) -> None:
    result = _shape(lambda x: A.adaptive_avg_pool1d(x, [out]), shape)
    body = [const("o", [out]), f"%y : {T(*result)} = aten::adaptive_avg_pool1d(%x, %o)"]
    check_formula(graph({"x": T(*shape)}, body, ["y"]))


# -- double backward -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "kernel", "stride", "padding", "ceil", "cip", "divisor"), POOLS[1:4], ids=str)
def test_avg_pool2d_backward(shape: tuple, kernel: list, stride: list, padding: list, ceil: bool, cip: bool,
                             divisor: int | None) -> None:
    out = _shape(lambda x: A.avg_pool2d(x, kernel, stride, padding, ceil, cip, divisor), shape)
    body = _avg_body(kernel, stride, padding, ceil, cip, divisor)
    body.append(f"%gx : {T(*shape)} = aten::avg_pool2d_backward(%g, %x, %ks, %st, %pd, %cm, %ci, %dv)")
    check_formula(graph({"g": T(*out), "x": T(*shape)}, body, ["gx"]), torch_lists=False)


@pytest.mark.parametrize("out", [[2, 3], [4, 9]], ids=str)
@pytest.mark.parametrize("grad_type", ["known", "unknown"])
def test_adaptive_avg_pool2d_backward(out: list, grad_type: str) -> None:
    """The output size comes from grad_output: its type, or its size at run time."""
    shape = (2, 3, 5, 7)
    g_type = T(2, 3, *out) if grad_type == "known" else "Tensor"
    body = [f"%gx : {T(*shape)} = aten::_adaptive_avg_pool2d_backward(%g, %x)"]
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.5, 1.5, (2, 3, *out)), rng.uniform(0.5, 1.5, shape)]
    check_formula(graph({"g": g_type, "x": T(*shape)}, body, ["gx"]), torch_lists=False, inputs=inputs)


@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation", "ceil"), [
    ([2, 2], [2, 2], [0, 0], [1, 1], False), ([3, 3], [2, 1], [1, 1], [1, 2], True),
], ids=str)
def test_max_pool2d_with_indices_backward(kernel: list, stride: list, padding: list, dilation: list, ceil: bool) -> None:
    """The max-pool backward's gradient with respect to grad_output (and zeros for self)."""
    shape = (1, 2, 6, 5)
    out = _shape(lambda x: A.max_pool2d(x, kernel, stride, padding, dilation, ceil), shape)
    body = [const("ks", kernel), const("st", stride), const("pd", padding), const("dl", dilation), const("cm", ceil)]
    body.append(f"%v : {T(*out)}, %i : {T(*out, grad=False, dtype='Long')} = aten::max_pool2d_with_indices(%x, %ks, %st, %pd, %dl, %cm)")
    body.append(f"%gx : {T(*shape)} = aten::max_pool2d_with_indices_backward(%g, %x, %ks, %st, %pd, %dl, %cm, %i)")
    text = graph({"g": T(*out), "x": T(*shape)}, body, ["gx"])
    check_formula(text, torch_lists=False)
    # gradview's helper (the double backward) is differentiated by the backward again.
    helper = text.replace("aten::max_pool2d_with_indices_backward(%g", "gradview::max_pool2d_double_backward(%h")
    helper = helper.replace(f"%gx : {T(*shape)}", f"%gx : {T(*out)}").replace(f"%g : {T(*out)}", f"%h : {T(*shape)}")
    check_finite_differences(helper, make_inputs(helper, 0))
