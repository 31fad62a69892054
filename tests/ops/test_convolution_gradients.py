"""Gradient formulas of the convolutions (gradview.ops.convolution): each graph is checked
against torch.autograd (and torch's Gradient lists for _slow_conv2d_forward, the form PyTorch's
JIT differentiates) and against finite differences in float64, over strides, paddings
('same'/'valid' too), dilations, groups, transposed forms, unbatched inputs, with and without
bias, and with only some inputs requiring grad. The backward kernels' own gradients (double
backward) are checked the same way.
"""

from __future__ import annotations

import pytest
import torch

from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph

# output_mask [True, True, True] (torch's parser reads a bool list constant as a generic list).
_ALL = [const("tr", True), "%m : bool[] = prim::ListConstruct(%tr, %tr, %tr)"]


def _str(name: str, value: str) -> str:
    return f'%{name} : str = prim::Constant[value="{value}"]()'


def _out_shape(fn: object, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(fn(*(torch.zeros(s, dtype=torch.float64) for s in shapes)).shape)  # type: ignore[operator]


def _inputs(x: tuple[int, ...], w: tuple[int, ...], bias: bool, grads: str = "xwb") -> dict[str, str]:
    types = {"x": T(*x, grad="x" in grads), "w": T(*w, grad="w" in grads)}
    if bias:
        types["b"] = T(w[0], grad="b" in grads)
    return types


# -- _slow_conv2d_forward: PyTorch's JIT form ------------------------------------------------------
@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1), (3, 2), (1, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_slow_conv2d_forward(stride: int, padding: int, bias: bool) -> None:
    x, w = (2, 3, 6, 5), (4, 3, 3, 2)
    out = _out_shape(lambda a, b: torch.ops.aten._slow_conv2d_forward(a, b, [3, 2], None, [stride] * 2, [padding] * 2), x, w)
    body = [const("k", [3, 2]), const("s", [stride] * 2), const("p", [padding] * 2), const("n", None)]
    body.append(f"%y : {T(*out)} = aten::_slow_conv2d_forward(%x, %w, %k, {'%b' if bias else '%n'}, %s, %p)")
    grad = check_formula(graph(_inputs(x, w, bias), body, ["y"]), low=-1.0, high=1.0)
    assert grad.captured_count == 2  # input and weight, as TorchScript's formula


@pytest.mark.parametrize("grads", ["x", "w", "b", "xb"])
def test_slow_conv2d_forward_some_inputs(grads: str) -> None:
    x, w = (1, 2, 5, 5), (3, 2, 2, 2)
    body = [const("k", [2, 2]), const("s", [1, 1]), const("p", [0, 0])]
    body.append(f"%y : {T(1, 3, 4, 4)} = aten::_slow_conv2d_forward(%x, %w, %k, %b, %s, %p)")
    check_formula(graph(_inputs(x, w, True, grads), body, ["y"]), low=-1.0, high=1.0)


# -- convolution, _convolution ------------------------------------------------------------------------
CONVOLUTIONS = [
    # dims, stride, padding, dilation, groups, transposed, output_padding
    (1, 2, 1, 1, 1, False, 0),
    (2, 1, 0, 1, 2, False, 0),
    (2, 2, 1, 2, 1, False, 0),
    (2, 3, 2, 1, 2, False, 0),
    (3, 1, 1, 1, 1, False, 0),
    (2, 2, 1, 1, 1, True, 1),
    (1, 1, 0, 2, 2, True, 1),
    (2, 3, 1, 1, 2, True, 2),
]


def _convolution_case(case: tuple, op: str, bias: bool) -> str:
    dims, stride, padding, dilation, groups, transposed, out_pad = case
    spatial = (7, 6, 5)[:dims]
    cin, cout = 2 * groups, 2 * groups if transposed else 3 * groups
    x = (2, cin, *spatial)
    w = ((cin, cout // groups) if transposed else (cout, cin // groups)) + (3, 2, 2)[:dims]
    params = [[stride] * dims, [padding] * dims, [dilation] * dims, transposed, [out_pad] * dims, groups]
    out = _out_shape(lambda a, b: torch.ops.aten.convolution(a, b, None, *params), x, w)
    body = [const("s", params[0]), const("p", params[1]), const("d", params[2]), const("t", transposed),
            const("o", params[4]), const("g", groups), const("n", None), const("f", False)]
    flags = ", %f, %f, %f, %f" if op == "_convolution" else ""
    b = "%b" if bias else "%n"
    body.append(f"%y : {T(*out)} = aten::{op}(%x, %w, {b}, %s, %p, %d, %t, %o, %g{flags})")
    types = _inputs(x, w, False)
    if bias:
        types["b"] = T(cout)
    return graph(types, body, ["y"])


@pytest.mark.parametrize("case", CONVOLUTIONS, ids=str)
@pytest.mark.parametrize("op", ["convolution", "_convolution"])
@pytest.mark.parametrize("bias", [True, False])
def test_convolution(case: tuple, op: str, bias: bool) -> None:
    check_formula(_convolution_case(case, op, bias), torch_lists=False, low=-1.0, high=1.0, seeds=(0,))


# -- conv1d, conv2d, _convolution_mode --------------------------------------------------------------
@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("padding", [0, 2, "same", "valid"])
@pytest.mark.parametrize("unbatched", [False, True])
def test_conv1d_conv2d(dims: int, padding: int | str, unbatched: bool) -> None:
    kernel = (2, 3)[:dims]  # even along the first dim: 'same' pads one side more there
    x = ((3,) if unbatched else (2, 3)) + (6, 5)[:dims]
    w = (4, 3) + kernel
    stride, dilation = [1] * dims, [2] * dims
    fn = torch.conv1d if dims == 1 else torch.conv2d
    out = _out_shape(lambda a, b: fn(a, b, None, stride, padding if isinstance(padding, str) else [padding] * dims, dilation), x, w)
    pad = _str("p", padding) if isinstance(padding, str) else const("p", [padding] * dims)
    body = [const("s", stride), pad, const("d", dilation), const("g", 1)]
    body.append(f"%y : {T(*out)} = aten::conv{dims}d(%x, %w, %b, %s, %p, %d, %g)")
    check_formula(graph(_inputs(x, w, True), body, ["y"]), torch_lists=False, low=-1.0, high=1.0, seeds=(0,))


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("grads", ["xwb", "x", "w"])
def test_convolution_mode(padding: str, grads: str) -> None:
    """What tracing records for string padding; grouped, dilated, even kernel."""
    x, w = (2, 4, 7, 6), (4, 2, 2, 3)
    out = _out_shape(lambda a, b: torch.ops.aten._convolution_mode(a, b, None, [1, 1], padding, [1, 2], 2), x, w)
    body = [const("s", [1, 1]), _str("p", padding), const("d", [1, 2]), const("g", 2)]
    body.append(f"%y : {T(*out)} = aten::_convolution_mode(%x, %w, %b, %s, %p, %d, %g)")
    check_formula(graph(_inputs(x, w, True, grads), body, ["y"]), torch_lists=False, low=-1.0, high=1.0, seeds=(0,))


# -- double backward ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [CONVOLUTIONS[2], CONVOLUTIONS[3], CONVOLUTIONS[5]], ids=str)
@pytest.mark.parametrize("outputs", [["gi", "gw", "gb"], ["gi"], ["gw"], ["gb"], ["gi", "gb"]], ids=str)
def test_convolution_backward(case: tuple, outputs: list[str]) -> None:
    dims, stride, padding, dilation, groups, transposed, out_pad = case
    spatial = (7, 6)[:dims]
    cin, cout = 2 * groups, 2 * groups if transposed else 3 * groups
    x = (2, cin, *spatial)
    w = ((cin, cout // groups) if transposed else (cout, cin // groups)) + (3, 2)[:dims]
    params = [[stride] * dims, [padding] * dims, [dilation] * dims, transposed, [out_pad] * dims, groups]
    out = _out_shape(lambda a, b: torch.ops.aten.convolution(a, b, None, *params), x, w)
    body = [const("s", params[0]), const("p", params[1]), const("d", params[2]), const("t", transposed),
            const("o", params[4]), const("g", groups), const("n", None),
            *_ALL]
    body.append(f"%gi : {T(*x)}, %gw : {T(*w)}, %gb : {T(cout)} = aten::convolution_backward(%go, %x, %w, %n, %s, %p, %d, %t, %o, %g, %m)")
    text = graph({"go": T(*out), "x": T(*x), "w": T(*w)}, body, outputs)
    check_formula(text, torch_lists=False, low=-1.0, high=1.0, seeds=(0,))


def test_slow_conv2d_backward() -> None:
    x, w = (1, 2, 5, 4), (3, 2, 2, 2)
    body = [const("k", [2, 2]), const("s", [2, 1]), const("p", [1, 0]),
            *_ALL]
    body.append(f"%gi : {T(*x)}, %gw : {T(*w)}, %gb : {T(3)} = aten::_slow_conv2d_backward(%go, %x, %w, %k, %s, %p, %m)")
    text = graph({"go": T(1, 3, 3, 3), "x": T(*x), "w": T(*w)}, body, ["gi", "gw", "gb"])
    check_formula(text, torch_lists=False, low=-1.0, high=1.0, seeds=(0,))
