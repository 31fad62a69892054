"""Convolution kernels (kernels/convolution.py) against PyTorch: every convolution
schema on seeded random inputs through gradview's interpreter, over strides,
paddings (numbers, 'same', 'valid'), dilations, groups, transposed forms with
output_padding, 1-d to 3-d, odd sizes, with and without bias; the backward
kernels with every output_mask. Values to 1e-10 relative in float64 (1e-5 in
float32), dtypes and shapes exactly; where PyTorch raises, gradview raises.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call

SPATIAL = {1: (9,), 2: (7, 6), 3: (5, 4, 5)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-10, atol=1e-5 if f32 else 1e-10)


def _refuses(op: str, args: list) -> None:
    """PyTorch raises on these arguments, and so does gradview (naming the node)."""
    with pytest.raises((RuntimeError, IndexError, ValueError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError):
        _run_graph(graph, inputs, backend=oracle.BACKEND)


def _check_or_refuse(op: str, args: list) -> None:
    """Agree with PyTorch where it computes, refuse where it raises."""
    try:
        torch_call(op, args)
    except RuntimeError:
        _refuses(op, args)
        return
    _check(op, args)


def _case(seed: int, dims: int, groups: int, transposed: bool, dtype: type = np.float64, batch: int = 2):
    rng = np.random.default_rng(seed)
    cin, cout = 2 * groups, 3 * groups
    x = rng.standard_normal((batch, cin, *SPATIAL[dims])).astype(dtype)
    shape = (cin, cout // groups) if transposed else (cout, cin // groups)
    w = rng.standard_normal((*shape, *KERNEL[dims])).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    return x, w, b


GEOMETRIES = [
    # stride, padding, dilation
    (1, 0, 1), (2, 0, 1), (1, 1, 1), (2, 1, 2), (3, 2, 1), (1, 2, 2), (2, 2, 3),
]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution(dims: int, geometry: tuple[int, int, int], groups: int, transposed: bool) -> None:
    stride, padding, dilation = geometry
    x, w, b = _case(dims * 10 + stride, dims, groups, transposed)
    # output_padding must stay below max(stride, dilation).
    out_pad = [max(stride, dilation) - 1] * dims if transposed else [0] * dims
    for bias in (b, None):
        # Some geometries give a kernel wider than the padded input: both refuse.
        args = [x, w, bias, [stride] * dims, [padding] * dims, [dilation] * dims, transposed, out_pad, groups]
        _check_or_refuse("aten::convolution", args)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_float32_and_mixed_geometry(dims: int, transposed: bool) -> None:
    x, w, b = _case(7, dims, 2, transposed, np.float32)
    strides, pads, dilations = [2, 1, 3][:dims], [1, 1, 0][:dims], [1, 2, 1][:dims]
    out_pad = [1, 0, 2][:dims] if transposed else [0] * dims
    _check("aten::convolution", [x, w, b, strides, pads, dilations, transposed, out_pad, 2])


def test_convolution_one_element_lists_apply_to_every_dim() -> None:
    x, w, b = _case(3, 2, 1, False)
    _check("aten::convolution", [x, w, b, [2], [1], [2], False, [0], 1])


@pytest.mark.parametrize("dtype", [np.int64, np.float16])
def test_convolution_other_dtypes(dtype: type) -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((1, 2, 6, 5)) * 4).astype(dtype)
    w = (rng.standard_normal((3, 2, 3, 3)) * 4).astype(dtype)
    rtol = 1e-2 if dtype == np.float16 else 0
    check_op("aten::convolution", [x, w, None, [1, 2], [1, 0], [1, 1], False, [0, 0], 1], rtol=rtol, atol=1e-2)


def test_convolution_empty_batch() -> None:
    x, w, b = _case(1, 2, 1, False, batch=0)
    _check("aten::convolution", [x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1])


@pytest.mark.parametrize("overload", ["aten::_convolution", "aten::_convolution.deprecated"])
@pytest.mark.parametrize("transposed", [False, True])
def test_underscore_convolution(overload: str, transposed: bool) -> None:
    """What tracing records for nn.Conv*d: convolution plus backend flags."""
    x, w, b = _case(2, 2, 2, transposed)
    flags = [False, False, True] + ([True] if overload == "aten::_convolution" else [])
    out_pad = [1, 1] if transposed else [0, 0]
    _check(overload, [x, w, b, [2, 2], [1, 1], [1, 1], transposed, out_pad, 2, *flags])


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv1d_conv2d(dims: int, padding: int, unbatched: bool, dtype: type) -> None:
    x, w, b = _case(padding, dims, 1, False, dtype)
    x = x[0] if unbatched else x
    op = f"aten::conv{dims}d"
    _check(op, [x, w, b, [1 + padding % 2] * dims, [padding] * dims, [1 + padding // 2] * dims, 1])
    _check(op, [x, w, None, [2], [padding], [1], 1])  # one value for every dim


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("mode", ["same", "valid"])
@pytest.mark.parametrize("dilation", [1, 2, 3])
@pytest.mark.parametrize("unbatched", [False, True])
def test_string_padding(dims: int, mode: str, dilation: int, unbatched: bool) -> None:
    """'same' pads dilation * (k - 1) in total, the odd one on the high side (even kernels)."""
    rng = np.random.default_rng(dilation)
    x = rng.standard_normal((2, 2, *SPATIAL[dims]))
    x = x[0] if unbatched else x
    for kernel in ((2,) * dims, KERNEL[dims], (4,) * dims):
        w = rng.standard_normal((4, 1, *kernel))
        args = [x, w, rng.standard_normal(4), [1] * dims, mode, [dilation] * dims, 2]
        _check_or_refuse(f"aten::conv{dims}d.padding", args)
        _check_or_refuse("aten::_convolution_mode", args)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_slow_conv2d_forward(geometry: tuple[int, int, int], bias: bool) -> None:
    stride, padding, _ = geometry
    x, w, b = _case(stride + padding, 2, 1, False)
    _check("aten::_slow_conv2d_forward", [x, w, list(w.shape[2:]), b if bias else None, [stride] * 2, [padding] * 2])


# -- backward ----------------------------------------------------------------------------------
MASKS = [[True, True, True], [True, False, False], [False, True, False], [False, False, True]]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_backward(dims: int, geometry: tuple[int, int, int], groups: int, transposed: bool) -> None:
    stride, padding, dilation = geometry
    x, w, _ = _case(dims + stride * 7, dims, groups, transposed)
    out_pad = [max(stride, dilation) - 1] * dims if transposed else [0] * dims
    params = [[stride] * dims, [padding] * dims, [dilation] * dims, transposed, out_pad, groups]
    try:
        out = torch_call("aten::convolution", [x, w, None, *params])[0]
    except RuntimeError:
        return  # the forward is refused (test_convolution checks gradview refuses it too)
    grad = np.random.default_rng(dims).standard_normal(tuple(out.shape))
    for mask in MASKS:
        _check("aten::convolution_backward", [grad, x, w, [w.shape[1] * groups if transposed else w.shape[0]], *params, mask])


def test_convolution_backward_float32_without_bias_sizes() -> None:
    x, w, _ = _case(4, 2, 2, False, np.float32)
    grad = np.random.default_rng(0).standard_normal((2, 6, 4, 3)).astype(np.float32)
    _check("aten::convolution_backward", [grad, x, w, None, [2, 2], [1, 1], [1, 2], False, [0, 0], 2, [True] * 3])


@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1), (3, 2), (2, 0)])
@pytest.mark.parametrize("mask", MASKS, ids=str)
def test_slow_conv2d_backward(stride: int, padding: int, mask: list[bool]) -> None:
    x, w, _ = _case(stride, 2, 1, False)
    out = torch_call("aten::_slow_conv2d_forward", [x, w, [3, 2], None, [stride] * 2, [padding] * 2])[0]
    grad = np.random.default_rng(stride).standard_normal(tuple(out.shape))
    _check("aten::_slow_conv2d_backward.output_mask", [grad, x, w, [3, 2], [stride] * 2, [padding] * 2, mask])


# -- what PyTorch refuses ------------------------------------------------------------------------
def test_refusals() -> None:
    x, w, b = _case(0, 2, 1, False)
    base = [[1, 1], [0, 0], [1, 1], False, [0, 0], 1]
    for params in (
        [[0, 1], *base[1:]],  # non-positive stride
        [base[0], [-1, 0], *base[2:]],  # negative padding
        [*base[:2], [0, 1], *base[3:]],  # dilation 0
        [*base[:5], 2],  # groups do not divide the weight
        [[1, 1], [0, 0], [5, 5], *base[3:]],  # dilated kernel wider than the input
    ):
        _refuses("aten::convolution", [x, w, b, *params])
    _refuses("aten::convolution", [x, w, b[:2], *base])  # bias of the wrong size
    _refuses("aten::convolution", [x[0], w, b, *base])  # convolution wants a batch
    _refuses("aten::convolution", [x.astype(np.float32), w, None, *base])  # mixed dtypes
    _refuses("aten::convolution", [x, w[:, :1], b, *base])  # input channels
    xt, wt, _ = _case(0, 2, 1, True)
    _refuses("aten::convolution", [xt, wt, None, [2, 2], [0, 0], [1, 1], True, [2, 2], 1])  # output_padding
    _refuses("aten::conv2d.padding", [x, w, b, [2, 2], "same", [1, 1], 1])  # 'same' with stride
    _refuses("aten::conv2d.padding", [x, w, b, [1, 1], "full", [1, 1], 1])
    _refuses("aten::_slow_conv2d_forward", [x[0], w, [3, 2], None, [1, 1], [0, 0]])
    _refuses("aten::_slow_conv2d_forward", [x, w, [2, 2], None, [1, 1], [0, 0]])


def test_every_kernel_tap_and_window_once() -> None:
    """An impulse input through a ones kernel counts how often each output reads each tap:
    every combination of stride/dilation/padding in 2-d, against torch."""
    for stride, dilation, padding in itertools.product([1, 2, 3], [1, 2], [0, 1]):
        x = np.zeros((1, 1, 7, 7))
        x[0, 0, 3, 4] = 1.0
        w = np.arange(6, dtype=np.float64).reshape(1, 1, 3, 2)
        _check("aten::convolution", [x, w, None, [stride] * 2, [padding] * 2, [dilation] * 2, False, [0, 0], 1])


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("padding", [[1], "same", "valid"], ids=str)
@pytest.mark.parametrize("unbatched", [False, True])
def test_gradview_conv_helpers(dims: int, padding: list | str, unbatched: bool) -> None:
    """gradview::conv and gradview::conv_backward (what the conv1d/conv2d gradients emit)
    against conv1d/conv2d and torch.autograd, even kernels with 'same' included."""
    rng = np.random.default_rng(dims)
    x = rng.standard_normal((2, 4, *SPATIAL[dims]))
    x = x[0] if unbatched else x
    w, b = rng.standard_normal((6, 2, *(2, 3)[:dims])), rng.standard_normal(6)
    overload = ".padding" if isinstance(padding, str) else ""
    params = [[1], padding, [2], 2]
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    conv = torch.conv1d if dims == 1 else torch.conv2d
    expected = conv(tx, tw, tb, 1, padding if isinstance(padding, str) else padding * dims, 2, 2)
    graph, inputs = op_graph("gradview::conv" + overload, [x, w, b, *params])
    (ours,) = _run_graph(graph, inputs, backend=oracle.BACKEND)
    np.testing.assert_allclose(ours, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(expected.shape))
    theirs = torch.autograd.grad(expected, [tx, tw, tb], torch.tensor(g))
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        graph, inputs = op_graph("gradview::conv_backward" + overload, [g, x, w, *params, mask])
        results = _run_graph(graph, inputs, backend=oracle.BACKEND)
        for wanted, mine, reference in zip(mask, results, theirs, strict=True):
            if wanted:
                np.testing.assert_allclose(mine, reference.numpy(), rtol=1e-10, atol=1e-12)
            else:
                assert mine is None
