"""Shape rules of the convolutions (gradview.ops.convolution) against PyTorch: traced conv1d,
conv2d and conv_transpose2d graphs, and the ops the tracer records by their decomposition
(conv1d/conv2d, convolution, the _slow_conv2d pair, convolution_backward and gradview's conv
helpers) as one-node graphs (see tests/ops/layer_shapes.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # PyTorch's own spelling

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from tests.kernels.oracle import op_graph

from .layer_shapes import check_op, check_traced, randn

CONVS = [
    # stride, padding, dilation, groups
    (1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1), (1, "same", 2, 2), (2, "valid", 1, 1),
]


@pytest.mark.parametrize(("stride", "padding", "dilation", "groups"), CONVS, ids=str)
@pytest.mark.parametrize("dims", [1, 2])
def test_conv(stride: int, padding: int | str, dilation: int, groups: int, dims: int) -> None:
    spatial = (9, 8)[:dims]
    x, w, b = randn(2, 4, *spatial), randn(6, 4 // groups, *(3, 2)[:dims]), randn(6)
    conv = F.conv1d if dims == 1 else F.conv2d
    kind = "aten::_convolution_mode" if isinstance(padding, str) else "aten::_convolution"
    check_traced(lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups), (x, w, b), kind)
    overload = f"aten::conv{dims}d" + (".padding" if isinstance(padding, str) else "")
    pad = padding if isinstance(padding, str) else [padding] * dims
    for batch in (x.numpy(), x.numpy()[0]):  # batched and unbatched
        check_op(overload, [batch, w.numpy(), b.numpy(), [stride] * dims, pad, [dilation] * dims, groups])


def test_conv_channels_last() -> None:
    w = randn(6, 4, 3, 3)
    xl = randn(2, 4, 9, 8).contiguous(memory_format=torch.channels_last)
    check_traced(lambda x, w: F.conv2d(x, w, None, 2, 1), (xl, w), "aten::_convolution")


@pytest.mark.parametrize(("stride", "padding", "output_padding", "dilation"), [(2, 1, 1, 1), (1, 0, 0, 2), (3, 2, 2, 1)])
def test_conv_transpose(stride: int, padding: int, output_padding: int, dilation: int) -> None:
    x, w = randn(2, 4, 5, 6), randn(4, 3, 3, 2)
    fn = lambda x, w: F.conv_transpose2d(x, w, None, stride, padding, output_padding, 1, dilation)  # noqa: E731
    check_traced(fn, (x, w), "aten::_convolution")
    params = [[stride] * 2, [padding] * 2, [dilation] * 2, True, [output_padding] * 2, 1]
    check_op("aten::convolution", [x.numpy(), w.numpy(), None, *params])


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, True], [False, True, False]], ids=str)
def test_slow_conv2d_and_backward(mask: list[bool]) -> None:
    x, w = randn(2, 3, 7, 6).numpy(), randn(4, 3, 3, 2).numpy()
    check_op("aten::_slow_conv2d_forward", [x, w, [3, 2], None, [2, 1], [1, 1]])
    g = randn(2, 4, 4, 7).numpy()
    check_op("aten::_slow_conv2d_backward.output_mask", [g, x, w, [3, 2], [2, 1], [1, 1], mask])
    g = randn(2, 4, 5, 5).numpy()
    check_op("aten::convolution_backward", [g, x, w, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask])


@pytest.mark.parametrize("padding", [[1], "same"], ids=str)
@pytest.mark.parametrize("unbatched", [False, True])
def test_gradview_conv_helpers(padding: list | str, unbatched: bool) -> None:
    """The helpers the conv1d/conv2d gradients emit, against conv2d and its autograd."""
    x, w, b = randn(2, 4, 7, 6), randn(6, 2, 3, 2), randn(6)
    x = x[0] if unbatched else x
    overload = "gradview::conv" + (".padding" if isinstance(padding, str) else "")
    graph, _ = op_graph(overload, [x.numpy(), w.numpy(), b.numpy(), [1], padding, [2], 2])
    propagate_input_shapes(graph)
    expected = torch.conv2d(x, w, b, 1, padding if isinstance(padding, str) else padding * 2, 2, 2)
    (out,) = [n for n in graph.nodes() if n.kind() == "gradview::conv"][0].outputs()
    assert out.type().sizes == tuple(expected.shape) and out.type().strides == expected.stride()
    backward = "gradview::conv_backward" + (".padding" if isinstance(padding, str) else "")
    g = randn(*expected.shape).numpy()
    graph, _ = op_graph(backward, [g, x.numpy(), w.numpy(), [1], padding, [2], 2, [True, True, True]])
    propagate_input_shapes(graph)
    node = [n for n in graph.nodes() if n.kind() == "gradview::conv_backward"][0]
    sizes = [v.type().sizes for v in node.outputs()]
    assert sizes == [tuple(x.shape), tuple(w.shape), (6,)]
