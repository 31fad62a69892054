"""Shape rules of the recurrent and attention ops (gradview.ops.recurrent and
gradview.ops.attention) against PyTorch.

Traced graphs carry the types PyTorch observed (sizes and strides): the pass forgets them and
works them out again (lstm, gru, scaled_dot_product_attention, _native_multi_head_attention).
The tracer records lstm_cell and gru_cell by their decomposition, so those (and the encoder
layer) are scripted, and their inferred types are compared with eager results.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
import torch

from gradview.ir import ListType, TensorType, parse_ir
from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from gradview.runtime import run_graph
from tests.ir.passes.shape_oracle import reset_copy, traced_text, type_mismatches
from tests.kernels.oracle import op_graph

D = torch.float64


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=D)


def _params(
    gates: int, layers: int, directions: int, bias: bool, proj: int, hidden: int = 5
) -> list:
    out = proj or hidden
    params = []
    for layer in range(layers):
        for _ in range(directions):
            params += [
                _r(gates * hidden, 4 if layer == 0 else out * directions),
                _r(gates * hidden, out),
            ]
            params += [_r(gates * hidden), _r(gates * hidden)] if bias else []
            params += [_r(proj, hidden)] if proj else []
    return params


def _check_traced(fn: Callable, args: tuple, kind: str) -> None:
    reference, graph = reset_copy(traced_text(fn, args))
    assert any(node.kind() == kind for node in graph.nodes()), f"the trace has no {kind}"
    propagate_input_shapes(graph)
    assert type_mismatches(reference, graph) == []


LAYERS = list(itertools.product([1, 2], [False, True], [False, True], [0, 3]))


@pytest.mark.parametrize("case", LAYERS, ids=lambda c: "L{}-bi{:d}-bf{:d}-proj{}".format(*c))
def test_lstm(case: tuple) -> None:
    layers, bidirectional, batch_first, proj = case
    directions = 2 if bidirectional else 1
    params = _params(4, layers, directions, True, proj)
    x = _r(3, 6, 4) if batch_first else _r(6, 3, 4)
    h, c = _r(layers * directions, 3, proj or 5), _r(layers * directions, 3, 5)

    def fn(x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, *params: torch.Tensor) -> tuple:
        return torch.lstm(
            x, [h, c], list(params), True, layers, 0.0, False, bidirectional, batch_first
        )

    _check_traced(fn, (x, h, c, *params), "aten::lstm")


@pytest.mark.parametrize(
    "case", [c for c in LAYERS if not c[3]], ids=lambda c: "L{}-bi{:d}-bf{:d}".format(*c[:3])
)
def test_gru(case: tuple) -> None:
    layers, bidirectional, batch_first, _ = case
    directions = 2 if bidirectional else 1
    params = _params(3, layers, directions, False, 0)
    x = _r(3, 6, 4) if batch_first else _r(6, 3, 4)

    def fn(x: torch.Tensor, h: torch.Tensor, *params: torch.Tensor) -> tuple:
        return torch.gru(x, h, list(params), False, layers, 0.0, False, bidirectional, batch_first)

    _check_traced(fn, (x, _r(layers * directions, 3, 5), *params), "aten::gru")


@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed(bidirectional: bool) -> None:
    directions = 2 if bidirectional else 1
    sizes = torch.tensor([3, 2, 2, 1])
    lstm_params, gru_params = _params(4, 2, directions, True, 0), _params(3, 2, directions, True, 0)

    def lstm(
        x: torch.Tensor, bs: torch.Tensor, h: torch.Tensor, c: torch.Tensor, *params: torch.Tensor
    ) -> tuple:
        return torch.lstm(x, bs, [h, c], list(params), True, 2, 0.0, False, bidirectional)

    def gru(x: torch.Tensor, bs: torch.Tensor, h: torch.Tensor, *params: torch.Tensor) -> tuple:
        return torch.gru(x, bs, h, list(params), True, 2, 0.0, False, bidirectional)

    h = _r(2 * directions, 3, 5)
    _check_traced(lstm, (_r(8, 4), sizes, h, _r(2 * directions, 3, 5), *lstm_params), "aten::lstm")
    _check_traced(gru, (_r(8, 4), sizes, h, *gru_params), "aten::gru")


SDPA_CASES = {
    "4-D": ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), {}),
    "broadcast batch": ((2, 3, 4), (1, 5, 4), (1, 5, 6), {}),
    "2-D": ((3, 4), (5, 4), (5, 6), {}),
    "gqa": ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), {"enable_gqa": True}),
    "causal": ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), {"is_causal": True}),
}


@pytest.mark.parametrize("name", list(SDPA_CASES))
def test_scaled_dot_product_attention(name: str) -> None:
    q, k, v, kwargs = SDPA_CASES[name]

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)

    _check_traced(fn, (_r(*q), _r(*k), _r(*v)), "aten::scaled_dot_product_attention")


@pytest.mark.parametrize(("need_weights", "average"), [(True, True), (True, False), (False, True)])
def test_native_multi_head_attention(need_weights: bool, average: bool) -> None:
    def fn(
        x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, pw: torch.Tensor, pb: torch.Tensor
    ) -> torch.Tensor:
        out, weights = torch._native_multi_head_attention(
            x, x, x, 4, 2, w, b, pw, pb, None, need_weights, average
        )
        return (out, weights) if need_weights else out

    _check_traced(
        fn, (_r(2, 3, 4), _r(12, 4), _r(12), _r(4, 4), _r(4)), "aten::_native_multi_head_attention"
    )


# -- scripted: the cells and the encoder layer ------------------------------------------------------
@torch.jit.script
def _cells(x, h, c, w_ih, w_hh, b_ih, b_hh, g_ih, g_hh):  # TorchScript infers them
    hy, cy = torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
    return hy, cy, torch.gru_cell(x, h, g_ih, g_hh, None, None)


@torch.jit.script
def _encoder(x, w, b, pw, pb, n1, n2, f1, fb1, f2, fb2, m):
    return torch._transformer_encoder_layer_fwd(
        x, 4, 2, w, b, pw, pb, True, False, 1e-5, n1, n2, n1, n2, f1, fb1, f2, fb2, m, 1
    )


def _check_scripted(fn: torch.jit.ScriptFunction, args: tuple, kinds: set[str]) -> None:
    torch_graph = fn.graph.copy()
    for value, arg in zip(torch_graph.inputs(), args, strict=True):
        value.setType(torch._C.TensorType.create_from_tensor(arg))
    graph = parse_ir(str(torch_graph))
    propagate_input_shapes(graph)
    results = fn(*args)
    results = results if isinstance(results, tuple) else (results,)
    nodes = [n for n in graph.nodes() if n.kind() in kinds]
    outputs = [v for n in nodes for v in n.outputs()]
    assert len(outputs) == len(results) and {n.kind() for n in nodes} == kinds
    for value, result in zip(outputs, results, strict=True):
        t = value.type()
        assert isinstance(t, TensorType), value
        assert t.sizes == tuple(result.shape) and t.strides == tuple(result.stride()), (
            t,
            result.shape,
        )
        assert t.scalar_type == "Double"


def test_cells() -> None:
    args = (
        _r(3, 4),
        _r(3, 5),
        _r(3, 5),
        _r(20, 4),
        _r(20, 5),
        _r(20),
        _r(20),
        _r(15, 4),
        _r(15, 5),
    )
    _check_scripted(_cells, args, {"aten::lstm_cell", "aten::gru_cell"})


def test_encoder_layer() -> None:
    mask = torch.tensor([[False, False, True], [False, True, True]])
    args = (
        _r(2, 3, 4),
        _r(12, 4),
        _r(12),
        _r(4, 4),
        _r(4),
        _r(4),
        _r(4),
        _r(8, 4),
        _r(8),
        _r(4, 8),
        _r(4),
        mask,
    )
    _check_scripted(_encoder, args, {"aten::_transformer_encoder_layer_fwd"})


# -- the backward kernels: types against the arrays they return --------------------------------------
def _backward_cases() -> dict[str, tuple[str, list]]:
    rng = np.random.default_rng(0)

    def a(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape)

    w4, w3 = [a(20, 4), a(20, 5), a(20), a(20)], [a(15, 4), a(15, 5), a(15), a(15)]
    lstm_params = [a(20, 4), a(20, 5), a(20), a(20), a(20, 4), a(20, 5), a(20), a(20)]
    return {
        "lstm_cell": (
            "gradview::lstm_cell_backward",
            [a(3, 5), None, a(3, 4), [a(3, 5), a(3, 5)], *w4],
        ),
        "gru_cell": (
            "gradview::gru_cell_backward",
            [a(3, 5), a(3, 4), a(3, 5), w3[0], w3[1], None, None],
        ),
        "lstm batch_first bidirectional": (
            "gradview::lstm_backward",
            [
                a(3, 6, 10),
                None,
                None,
                a(3, 6, 4),
                None,
                [a(2, 3, 5), a(2, 3, 5)],
                lstm_params,
                True,
                1,
                True,
                True,
            ],
        ),
        "gru packed": (
            "gradview::gru_backward",
            [
                a(6, 5),
                a(1, 3, 5),
                a(6, 4),
                np.array([3, 2, 1]),
                a(1, 3, 5),
                w3,
                True,
                1,
                False,
                False,
            ],
        ),
    }


@pytest.mark.parametrize("name", list(_backward_cases()))
def test_backward_kernels(name: str) -> None:
    op, args = _backward_cases()[name]
    graph, inputs = op_graph(op, args)
    propagate_input_shapes(graph)
    node = next(n for n in graph.nodes() if n.kind() == op)
    results = run_graph(graph, inputs)
    checked = 0
    for value, result in zip(node.outputs(), results, strict=True):
        # A list's type joins its elements' (sizes that differ become unknown).
        type_ = value.type().elem if isinstance(value.type(), ListType) else value.type()
        for array in result if isinstance(result, list) else [result]:
            if array is None or not isinstance(type_, TensorType) or type_.sizes is None:
                continue
            assert len(type_.sizes) == array.ndim, (type_, array.shape)
            assert all(t in (None, a) for t, a in zip(type_.sizes, array.shape, strict=True)), (
                type_,
                array.shape,
            )
            if type_.strides is not None:
                strides = tuple(s // array.itemsize for s in array.strides)
                assert all(t in (None, a) for t, a in zip(type_.strides, strides, strict=True)), (
                    type_,
                    strides,
                )
            checked += 1
    assert checked >= 2
