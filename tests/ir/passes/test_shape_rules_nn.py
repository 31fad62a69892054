"""Shape rules of the convolution, pooling, embedding and norm ops (ir/passes/shape_rules_nn.py)
against PyTorch: traced graphs carry the types PyTorch observed (dtype, sizes, strides); the
pass forgets them and works them out again, and must agree on every value. The same graphs
then run through gradview's interpreter, every array checked against its inferred type.
Ops the tracer records by their decomposition (conv2d becomes _convolution) are checked as
one-node graphs with complete input types against the eager result's dtype, sizes and strides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from tests.kernels.oracle import op_graph, torch_call

from .shape_oracle import reset_copy, run_and_compare_types, traced_text, type_mismatches

A = torch.ops.aten
D = torch.float64


def _r(*shape: int, dtype: torch.dtype = D) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype)


def _check(fn: Callable, args: tuple, kind: str) -> None:
    text = traced_text(fn, args)
    reference, graph = reset_copy(text)
    assert any(node.kind() == kind for node in graph.nodes()), f"the trace has no {kind}:\n{text}"
    propagate_input_shapes(graph)
    assert type_mismatches(reference, graph) == []
    inputs = [a.numpy() if isinstance(a, torch.Tensor) else a for a in args]
    assert run_and_compare_types(graph, inputs) > 0


def _check_op(qualified: str, args: list) -> None:
    """The node's inferred output types equal the eager result's dtype, sizes and strides."""
    graph, _ = op_graph(qualified, args)
    propagate_input_shapes(graph)
    node = next(n for n in graph.nodes() if n.kind() == qualified.split(".")[0])
    results = torch_call(qualified, args)
    for value, result in zip(node.outputs(), results, strict=True):
        t = value.type()
        if result is None:
            continue
        expected = (result.dtype, tuple(result.shape), tuple(result.stride()))
        assert (_torch_dtype(t.scalar_type), t.sizes, t.strides) == expected, f"{qualified}: torch {expected}, gradview {t}"


def _torch_dtype(name: str | None) -> torch.dtype | None:
    return {"Double": torch.float64, "Float": torch.float32, "Long": torch.int64, "Int": torch.int32}.get(name or "")


CONVS = [
    # stride, padding, dilation, groups
    (1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1), (1, "same", 2, 2), (2, "valid", 1, 1),
]


@pytest.mark.parametrize(("stride", "padding", "dilation", "groups"), CONVS, ids=str)
@pytest.mark.parametrize("dims", [1, 2])
def test_conv(stride: int, padding: int | str, dilation: int, groups: int, dims: int) -> None:
    spatial = (9, 8)[:dims]
    x, w, b = _r(2, 4, *spatial), _r(6, 4 // groups, *(3, 2)[:dims]), _r(6)
    conv = F.conv1d if dims == 1 else F.conv2d
    kind = "aten::_convolution_mode" if isinstance(padding, str) else "aten::_convolution"
    _check(lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups), (x, w, b), kind)
    overload = f"aten::conv{dims}d" + (".padding" if isinstance(padding, str) else "")
    pad = padding if isinstance(padding, str) else [padding] * dims
    for batch in (x.numpy(), x.numpy()[0]):  # batched and unbatched
        _check_op(overload, [batch, w.numpy(), b.numpy(), [stride] * dims, pad, [dilation] * dims, groups])


def test_conv_channels_last() -> None:
    w = _r(6, 4, 3, 3)
    xl = _r(2, 4, 9, 8).contiguous(memory_format=torch.channels_last)
    _check(lambda x, w: F.conv2d(x, w, None, 2, 1), (xl, w), "aten::_convolution")


@pytest.mark.parametrize(("stride", "padding", "output_padding", "dilation"), [(2, 1, 1, 1), (1, 0, 0, 2), (3, 2, 2, 1)])
def test_conv_transpose(stride: int, padding: int, output_padding: int, dilation: int) -> None:
    x, w = _r(2, 4, 5, 6), _r(4, 3, 3, 2)
    fn = lambda x, w: F.conv_transpose2d(x, w, None, stride, padding, output_padding, 1, dilation)  # noqa: E731
    _check(fn, (x, w), "aten::_convolution")
    params = [[stride] * 2, [padding] * 2, [dilation] * 2, True, [output_padding] * 2, 1]
    _check_op("aten::convolution", [x.numpy(), w.numpy(), None, *params])


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, True], [False, True, False]], ids=str)
def test_slow_conv2d_and_backward(mask: list[bool]) -> None:
    x, w = _r(2, 3, 7, 6).numpy(), _r(4, 3, 3, 2).numpy()
    _check_op("aten::_slow_conv2d_forward", [x, w, [3, 2], None, [2, 1], [1, 1]])
    g = _r(2, 4, 4, 7).numpy()
    _check_op("aten::_slow_conv2d_backward.output_mask", [g, x, w, [3, 2], [2, 1], [1, 1], mask])
    g = _r(2, 4, 5, 5).numpy()
    _check_op("aten::convolution_backward", [g, x, w, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask])


# -- pooling -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 9, 7), (3, 9, 7)], ids=str)
def test_pools(shape: tuple[int, ...]) -> None:
    x = _r(*shape)
    _check(lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (x,), "aten::adaptive_avg_pool2d")
    _check(lambda x: A._adaptive_avg_pool2d(x, [2, 5]), (x,), "aten::_adaptive_avg_pool2d")
    _check(lambda x: F.adaptive_avg_pool1d(x.flatten(-2), 5), (x,), "aten::adaptive_avg_pool1d")
    _check(lambda x: F.avg_pool2d(x, 3, 2, 1, True), (x,), "aten::avg_pool2d")
    g = _r(*shape[:-2], 4, 3)
    _check(lambda g, x: A._adaptive_avg_pool2d_backward(g, x), (g, x), "aten::_adaptive_avg_pool2d_backward")
    g = _r(*shape[:-2], 5, 4)
    _check(lambda g, x: A.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], True, True, None), (g, x), "aten::avg_pool2d_backward")


def test_max_pool2d_backward() -> None:
    x = _r(2, 3, 9, 7)

    def fn(x: torch.Tensor) -> torch.Tensor:
        values, indices = A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
        return A.max_pool2d_with_indices_backward(values, x, [3, 3], [2, 2], [1, 1], [1, 1], False, indices)

    _check(fn, (x,), "aten::max_pool2d_with_indices_backward")


# -- embeddings --------------------------------------------------------------------------------------
def test_embedding() -> None:
    w, indices = _r(10, 3), torch.tensor([[1, 2, 4], [9, 0, 2]])
    _check(lambda w, i: F.embedding(i, w, padding_idx=2), (w, indices), "aten::embedding")
    g = _r(2, 3, 3)
    _check(lambda g, i: A.embedding_dense_backward(g, i, 10, -1, False), (g, indices), "aten::embedding_dense_backward")
    _check(lambda g, i: A.embedding_backward(g, i, 10, -1, False, False), (g, indices), "aten::embedding_backward")


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag(mode: str, dtype: torch.dtype, last: bool, padding_idx: int | None) -> None:
    w, indices = _r(10, 3, dtype=dtype), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6] + ([8] if last else []))

    def fn(w: torch.Tensor, i: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        return F.embedding_bag(i, w, o, mode=mode, include_last_offset=last, padding_idx=padding_idx)

    _check(fn, (w, indices, offsets), "aten::embedding_bag")
    code = {"sum": 0, "mean": 1, "max": 2}[mode]
    fn = lambda w, i, o: A._embedding_bag(w, i, o, False, code, False, None, last, -1 if padding_idx is None else padding_idx)  # noqa: E731
    _check(fn, (w, indices, offsets), "aten::_embedding_bag")


# -- norms -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 6, 5), (3, 6, 2, 3), (2, 6)], ids=str)
def test_group_norm(shape: tuple[int, ...]) -> None:
    x, w = _r(*shape), _r(6)
    _check(lambda x, w: F.group_norm(x, 3, w), (x, w), "aten::group_norm")
    hxw = int(np.prod(shape[2:]))
    xn, wn = x.numpy(), w.numpy()
    _check_op("aten::native_group_norm", [xn, wn, None, shape[0], 6, hxw, 3, 1e-5])
    _, mean, rstd = A.native_group_norm(x, w, None, shape[0], 6, hxw, 3, 1e-5)
    for mask in ([True, True, True], [True, False, False]):
        args = [xn, xn, mean.numpy(), rstd.numpy(), wn, shape[0], 6, hxw, 3, mask]
        _check_op("aten::native_group_norm_backward", args)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_internal_forms(training: bool) -> None:
    x, w, rm, rv = _r(4, 3, 5).numpy(), _r(3).numpy(), _r(3).numpy(), _r(3).abs().numpy()
    _check_op("aten::_native_batch_norm_legit", [x, w, None, rm, rv, training, 0.1, 1e-5])
    _check_op("aten::_native_batch_norm_legit.no_stats", [x, w, None, True, 0.1, 1e-5])
    _check_op("aten::_native_batch_norm_legit_no_training", [x, w, None, rm, rv, 0.1, 1e-5])
    _check_op("aten::native_batch_norm", [x, w, None, rm, rv, training, 0.1, 1e-5])
    _, mean, invstd = A.native_batch_norm(*(torch.from_numpy(a) for a in (x, w)), None, None, None, True, 0.1, 1e-5)
    args = [x, x, w, rm, rv, mean.numpy(), invstd.numpy(), training, 1e-5, [True, True, True]]
    _check_op("aten::native_batch_norm_backward", args)


@pytest.mark.parametrize("padding", [[1], "same"], ids=str)
@pytest.mark.parametrize("unbatched", [False, True])
def test_gradview_conv_helpers(padding: list | str, unbatched: bool) -> None:
    """The helpers the conv1d/conv2d gradients emit, against conv2d and its autograd."""
    x, w, b = _r(2, 4, 7, 6), _r(6, 2, 3, 2), _r(6)
    x = x[0] if unbatched else x
    overload = "gradview::conv" + (".padding" if isinstance(padding, str) else "")
    graph, _ = op_graph(overload, [x.numpy(), w.numpy(), b.numpy(), [1], padding, [2], 2])
    propagate_input_shapes(graph)
    expected = torch.conv2d(x, w, b, 1, padding if isinstance(padding, str) else padding * 2, 2, 2)
    (out,) = [n for n in graph.nodes() if n.kind() == "gradview::conv"][0].outputs()
    assert out.type().sizes == tuple(expected.shape) and out.type().strides == expected.stride()
    backward = "gradview::conv_backward" + (".padding" if isinstance(padding, str) else "")
    g = _r(*expected.shape).numpy()
    graph, _ = op_graph(backward, [g, x.numpy(), w.numpy(), [1], padding, [2], 2, [True, True, True]])
    propagate_input_shapes(graph)
    node = [n for n in graph.nodes() if n.kind() == "gradview::conv_backward"][0]
    sizes = [v.type().sizes for v in node.outputs()]
    assert sizes == [tuple(x.shape), tuple(w.shape), (6,)]


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, True]], ids=str)
def test_native_layer_norm_backward(mask: list[bool]) -> None:
    x, w, b = _r(2, 3, 4), _r(3, 4), _r(3, 4)
    _, mean, rstd = A.native_layer_norm(x, [3, 4], w, b, 1e-5)
    args = [x.numpy(), x.numpy(), [3, 4], mean.numpy(), rstd.numpy(), w.numpy(), b.numpy(), mask]
    _check_op("aten::native_layer_norm_backward", args)
