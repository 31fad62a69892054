"""Gradient formulas of lstm_cell, gru_cell and the lstm / gru layers (gradview.ops.recurrent).

Each graph is differentiated with gradview's formulas, and f's outputs and df's vjps (for the
input, the initial states and every weight and bias) are compared with torch.autograd.grad on the
same graph to 1e-7 in float64, and with central finite differences. PyTorch's JIT does not
differentiate these ops symbolically (its autograd does, by their decomposition), so there are
no torch Gradient lists to compare.
"""

from __future__ import annotations

import itertools

import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph

IN, H, B, SEQ = 2, 3, 2, 3


def _check(text: str, finite_differences: bool = True) -> None:
    """torch.autograd on two seeds; finite differences (one run of the graph per input element,
    slow for two-layer networks) on the first."""
    for seed in (0, 1):
        check_formula(
            text,
            torch_lists=False,
            low=-1.0,
            high=1.0,
            seeds=(seed,),
            finite_differences=finite_differences and seed == 0,
        )


def _weights(
    prefix: str, rows: int, width: int, out: int, bias: bool, proj: int = 0
) -> dict[str, str]:
    """Graph inputs of one layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    types = {f"{prefix}wi": T(rows, width), f"{prefix}wh": T(rows, out)}
    if bias:
        types |= {f"{prefix}bi": T(rows), f"{prefix}bh": T(rows)}
    if proj:
        types[f"{prefix}wr"] = T(proj, rows // 4)
    return types


# -- cells -------------------------------------------------------------------------------------
@pytest.mark.parametrize("returned", ["hy, cy", "hy", "cy"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [1, 3])
def test_lstm_cell(batch: int, bias: bool, returned: str) -> None:
    inputs = {
        "x": T(batch, IN),
        "h": T(batch, H),
        "c": T(batch, H),
        **_weights("", 4 * H, IN, H, bias),
    }
    biases = "%bi, %bh" if bias else "%none, %none"
    body = [
        const("none", None),
        "%hx : Tensor[] = prim::ListConstruct(%h, %c)",
        f"%hy : {T(batch, H)}, %cy : {T(batch, H)} = aten::lstm_cell(%x, %hx, %wi, %wh, {biases})",
    ]
    _check(graph(inputs, body, returned.split(", ")))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [1, 3])
def test_gru_cell(batch: int, bias: bool) -> None:
    inputs = {"x": T(batch, IN), "h": T(batch, H), **_weights("", 3 * H, IN, H, bias)}
    biases = "%bi, %bh" if bias else "%none, %none"
    body = [
        const("none", None),
        f"%hy : {T(batch, H)} = aten::gru_cell(%x, %h, %wi, %wh, {biases})",
    ]
    _check(graph(inputs, body, ["hy"]))


def test_cell_inputs_that_need_no_gradient_get_none() -> None:
    """Constant initial states (nn.LSTMCell's zeros): no vjp for them, the weights still get theirs."""
    inputs = {
        "x": T(B, IN),
        "h": T(B, H, grad=False),
        "c": T(B, H, grad=False),
        **_weights("", 4 * H, IN, H, True),
    }
    body = [
        "%hx : Tensor[] = prim::ListConstruct(%h, %c)",
        f"%hy : {T(B, H)}, %cy : {T(B, H)} = aten::lstm_cell(%x, %hx, %wi, %wh, %bi, %bh)",
    ]
    text = graph(inputs, body, ["hy", "cy"])
    _check(text)
    assert differentiate(parse_ir(text), mode="extended").df_output_vjps == [0, 3, 4, 5, 6]


# -- layers ------------------------------------------------------------------------------------
def _layer_graph(
    op: str,
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    bias: bool,
    proj: int,
    returned: list[int],
    packed: tuple[int, ...] | None = None,
) -> str:
    """An lstm/gru layer op on graph inputs; ``packed``: batch sizes (arange(n, 0, -1)) for .data."""
    gates = 4 if op == "lstm" else 3
    directions = 2 if bidirectional else 1
    out = proj or H
    batch = packed[0] if packed else B
    inputs: dict[str, str] = {}
    if packed:
        inputs["x"] = T(sum(packed), IN)
    else:
        inputs["x"] = T(batch, SEQ, IN) if batch_first else T(SEQ, batch, IN)
    inputs["h0"] = T(layers * directions, batch, out)
    if op == "lstm":
        inputs["c0"] = T(layers * directions, batch, H)
    names = []
    for layer, direction in itertools.product(range(layers), range(directions)):
        group = _weights(
            f"l{layer}d{direction}",
            gates * H,
            IN if layer == 0 else out * directions,
            out,
            bias,
            proj,
        )
        inputs |= group
        names += group
    params = ", ".join(f"%{n}" for n in names)
    body = [
        const("bias", bias),
        const("layers", layers),
        const("dropout", 0.0),
        const("train", True),
        const("bidir", bidirectional),
        const("bf", batch_first),
        f"%params : Tensor[] = prim::ListConstruct({params})",
    ]
    hx = "%h0"
    if op == "lstm":
        body.append("%hx : Tensor[] = prim::ListConstruct(%h0, %c0)")
        hx = "%hx"
    results = ["%out : Tensor", "%hy : Tensor"] + (["%cy : Tensor"] if op == "lstm" else [])
    if packed:
        body += [
            const("start", packed[0]),
            const("stop", 0),
            const("step", -1),
            const("long", 4),
            const("none", None),
            f"%bs : {T(len(packed), dtype='Long', grad=False)} = "
            "aten::arange(%start, %stop, %step, %long, %none, %none, %none)",
        ]
        call = f"aten::{op}(%x, %bs, {hx}, %params, %bias, %layers, %dropout, %train, %bidir)"
    else:
        call = f"aten::{op}(%x, {hx}, %params, %bias, %layers, %dropout, %train, %bidir, %bf)"
    body.append(f"{', '.join(results)} = {call}")
    outputs = ["out", "hy", "cy"]
    return graph(inputs, body, [outputs[i] for i in returned])


LAYER_CASES = list(itertools.product([1, 2], [False, True], [False, True], [True, False]))


def _id(case: tuple) -> str:
    return "L{}-bi{:d}-bf{:d}-bias{:d}".format(*case)


@pytest.mark.parametrize("case", LAYER_CASES, ids=_id)
def test_lstm(case: tuple) -> None:
    layers, bidirectional, batch_first, bias = case
    _check(
        _layer_graph("lstm", layers, bidirectional, batch_first, bias, 0, [0, 1, 2]), layers == 1
    )


@pytest.mark.parametrize("case", LAYER_CASES, ids=_id)
def test_gru(case: tuple) -> None:
    layers, bidirectional, batch_first, bias = case
    _check(_layer_graph("gru", layers, bidirectional, batch_first, bias, 0, [0, 1]), layers == 1)


@pytest.mark.parametrize("returned", [[0], [1], [2], [1, 2]], ids=str)
def test_lstm_with_unused_outputs(returned: list[int]) -> None:
    """Outputs without a gradient reach the backward kernel as None (counted as zeros)."""
    _check(
        _layer_graph("lstm", 2, True, False, True, 0, returned),
        finite_differences=len(returned) == 1,
    )


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_with_projections(layers: int) -> None:
    _check(_layer_graph("lstm", layers, layers == 2, False, True, 2, [0, 1, 2]))
    _check(_layer_graph("lstm", layers, False, True, False, 2, [0, 2]))


@pytest.mark.parametrize("sizes", [(2, 1), (3, 2, 1)], ids=str)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("op", ["lstm", "gru"])
def test_packed_sequences(op: str, bidirectional: bool, sizes: tuple[int, ...]) -> None:
    """The .data overloads: gradients for the packed data, the states and weights, none for batch_sizes."""
    returned = [0, 1, 2] if op == "lstm" else [0, 1]
    _check(
        _layer_graph(op, 2, bidirectional, False, True, 0, returned, packed=sizes), len(sizes) == 2
    )


def test_gru_vjps_follow_the_params_list() -> None:
    """df returns one vjp per graph input that requires grad: x, h0, then every weight."""
    text = _layer_graph("gru", 2, False, False, True, 0, [0])
    grad = differentiate(parse_ir(text), mode="extended")
    assert grad.df_output_vjps == list(range(2 + 8))
