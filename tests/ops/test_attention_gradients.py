"""Gradient formula of scaled_dot_product_attention (gradview.ops.attention), and the
explicit no-gradient of the fused fast paths.

Each graph is differentiated with gradview's formulas; f's output and df's vjps for query, key,
value and a float mask are compared with torch.autograd.grad on the same graph to 1e-7 in
float64, and with central finite differences. PyTorch's JIT does not differentiate the op
symbolically, so there are no torch Gradient lists to compare.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from gradview.ops import NO_GRADIENT, no_gradient_reason
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph
from tests.autodiff.oracle import run_gradient

Q, K, V = (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)
OUT = (2, 2, 3, 6)


def _sdpa_graph(
    inputs: dict[str, str],
    mask: str = "%none",
    causal: bool = False,
    scale: float | None = None,
    gqa: bool = False,
    out: tuple[int, ...] = OUT,
    extra: list[str] | None = None,
) -> str:
    body = [
        const("none", None),
        const("p", 0.0),
        const("causal", causal),
        const("scale", scale),
        const("gqa", gqa),
        *(extra or []),
        f"%y : {T(*out)} = aten::scaled_dot_product_attention(%q, %k, %v, {mask}, %p, %causal, %scale, %gqa)",
    ]
    return graph(inputs, body, ["y"])


def _check(text: str) -> None:
    check_formula(text, torch_lists=False, low=-1.0, high=1.0)


QKV = {"q": T(*Q), "k": T(*K), "v": T(*V)}


def test_plain() -> None:
    _check(_sdpa_graph(QKV))


@pytest.mark.parametrize("shape", [(3, 5), (2, 1, 3, 5), (2, 2, 3, 5), (5,)], ids=str)
def test_float_mask_gets_the_scores_gradient(shape: tuple[int, ...]) -> None:
    """A float mask is added to the scores: its vjp is theirs, summed over the broadcast dims."""
    _check(_sdpa_graph({**QKV, "m": T(*shape)}, mask="%m"))


def test_bool_mask_gets_no_gradient() -> None:
    """A boolean mask (computed in the graph) selects positions; it has no gradient."""
    extra = [const("zero", 0.0), f"%m : {T(3, 5, dtype='Bool', grad=False)} = aten::gt(%mf, %zero)"]
    text = _sdpa_graph({**QKV, "mf": T(3, 5, grad=False)}, mask="%m", extra=extra)
    _check(text)
    assert differentiate(parse_ir(text), mode="extended").df_output_vjps == [0, 1, 2]


@pytest.mark.parametrize("tall", [False, True])
def test_causal(tall: bool) -> None:
    if tall:  # more queries than keys
        inputs = {"q": T(2, 2, 5, 4), "k": T(2, 2, 3, 4), "v": T(2, 2, 3, 6)}
        _check(_sdpa_graph(inputs, causal=True, out=(2, 2, 5, 6)))
    else:
        _check(_sdpa_graph(QKV, causal=True))


@pytest.mark.parametrize("scale", [0.7, -0.3])
def test_scale(scale: float) -> None:
    _check(_sdpa_graph({**QKV, "m": T(3, 5)}, mask="%m", scale=scale))


def test_grouped_query_heads() -> None:
    """enable_gqa: 4 query heads share 2 key/value heads; their gradients sum over each group."""
    _check(_sdpa_graph({**QKV, "q": T(2, 4, 3, 4)}, gqa=True, out=(2, 4, 3, 6)))


def test_broadcast_batch_dims() -> None:
    """Key and value shared by every batch entry: their vjps sum over the batch."""
    inputs = {"q": T(2, 3, 4), "k": T(1, 5, 4), "v": T(1, 5, 6)}
    _check(_sdpa_graph(inputs, out=(2, 3, 6)))


def test_inputs_that_need_no_gradient() -> None:
    text = _sdpa_graph(
        {"q": T(*Q), "k": T(*K, grad=False), "v": T(*V), "m": T(3, 5, grad=False)}, mask="%m"
    )
    _check(text)
    assert differentiate(parse_ir(text), mode="extended").df_output_vjps == [0, 2]


def test_trailing_defaults_left_out() -> None:
    """Hand-written IR may stop after dropout_p (torch's parser cannot): is_causal, scale and
    enable_gqa take their defaults, giving the vjps of the full call (checked against torch)."""
    body = [
        const("none", None),
        const("p", 0.0),
        f"%y : {T(*OUT)} = aten::scaled_dot_product_attention(%q, %k, %v, %none, %p)",
    ]
    short, full = graph(QKV, body, ["y"]), _sdpa_graph(QKV)
    _check(full)
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal(s) for s in (Q, K, V)]
    grad_out = [rng.standard_normal(OUT)]
    ours = run_gradient(differentiate(parse_ir(short), mode="extended"), inputs, grad_out)
    expected = run_gradient(differentiate(parse_ir(full), mode="extended"), inputs, grad_out)
    for a, b in zip(ours[0] + ours[1], expected[0] + expected[1], strict=True):
        np.testing.assert_array_equal(a, b)


# -- the fused fast paths: no gradient, as in PyTorch ------------------------------------------------
def test_fused_fast_paths_have_no_gradient_in_torch_either() -> None:
    e, heads = 4, 2
    x = torch.randn(2, 3, e, dtype=torch.float64, requires_grad=True)
    weights = [
        torch.randn(3 * e, e, dtype=torch.float64),
        torch.randn(3 * e, dtype=torch.float64),
        torch.randn(e, e, dtype=torch.float64),
        torch.randn(e, dtype=torch.float64),
    ]
    out, _ = torch.ops.aten._native_multi_head_attention(
        x, x, x, e, heads, *weights, None, False, True, None
    )
    with pytest.raises(
        RuntimeError, match="derivative for aten::_native_multi_head_attention is not implemented"
    ):
        out.sum().backward()
    norms = [torch.ones(e, dtype=torch.float64), torch.zeros(e, dtype=torch.float64)] * 2
    ffn = [
        torch.randn(8, e, dtype=torch.float64),
        torch.randn(8, dtype=torch.float64),
        torch.randn(e, 8, dtype=torch.float64),
        torch.randn(e, dtype=torch.float64),
    ]
    y = torch.ops.aten._transformer_encoder_layer_fwd(
        x, e, heads, *weights, False, False, 1e-5, *norms, *ffn, None, None
    )
    with pytest.raises(
        RuntimeError, match="derivative for aten::_transformer_encoder_layer_fwd is not implemented"
    ):
        y.sum().backward()
    for name in ("aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd"):
        assert "no derivative" in NO_GRADIENT[name]


def test_fused_node_names_its_reason() -> None:
    text = graph(
        {"x": T(2, 3, 4), "w": T(12, 4), "b": T(12), "pw": T(4, 4), "pb": T(4)},
        [
            const("e", 4),
            const("h", 2),
            const("none", None),
            const("t", True),
            "%y : Tensor, %a : Tensor = aten::_native_multi_head_attention(%x, %x, %x, %e, %h, %w, %b, %pw, %pb, "
            "%none, %t, %t, %none)",
        ],
        ["y"],
    )
    node = next(
        n for n in parse_ir(text).nodes() if n.kind() == "aten::_native_multi_head_attention"
    )
    reason = no_gradient_reason(node)
    assert reason is not None and "fused fast path" in reason
