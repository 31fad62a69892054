"""Attention kernels (kernels/attention.py) against PyTorch: scaled_dot_product_attention
(boolean and float masks, is_causal, scale, grouped-query heads, broadcast batch dims, fully
masked rows) and its backward kernel against torch.autograd; the fused fast paths
_native_multi_head_attention (every mask_type, need_weights, average_attn_weights; fully masked
rows give NaN) and _transformer_encoder_layer_fwd (norm_first, relu and gelu, masks).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import node_summary
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call

SDPA = "aten::scaled_dot_product_attention"


def _rand(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _run(op: str, args: list) -> list:
    graph, inputs = op_graph(op, args)
    return run_graph(graph, inputs, backend=oracle.BACKEND)


def _expect_error(op: str, args: list, message: str) -> None:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)


def _row_masked_everywhere(shape: tuple[int, ...], row: int) -> np.ndarray:
    mask = np.ones(shape, dtype=bool)
    mask[..., row, :] = False
    return mask


def _sdpa_cases(rng: np.random.Generator) -> dict[str, list]:
    """(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) prefixes."""
    q, k, v = _rand(rng, 2, 2, 3, 4), _rand(rng, 2, 2, 5, 4), _rand(rng, 2, 2, 5, 6)
    return {
        "plain": [q, k, v],
        "float mask": [q, k, v, _rand(rng, 3, 5)],
        "float mask per head": [q, k, v, _rand(rng, 2, 2, 3, 5)],
        "float mask -inf row": [q, k, v, np.where(_row_masked_everywhere((3, 5), 1), 0.0, -np.inf)],
        "bool mask": [q, k, v, rng.random((3, 5)) > 0.3],
        "bool mask broadcast": [q, k, v, rng.random((2, 1, 1, 5)) > 0.3],
        "bool mask empty row": [q, k, v, _row_masked_everywhere((3, 5), 1)],
        "causal": [q, k, v, None, 0.0, True],
        "causal tall": [
            _rand(rng, 2, 2, 5, 4),
            _rand(rng, 2, 2, 3, 4),
            _rand(rng, 2, 2, 3, 6),
            None,
            0.0,
            True,
        ],
        "scale": [q, k, v, None, 0.0, False, 0.7],
        "negative scale": [q, k, v, None, 0.0, False, -0.3],
        "gqa": [_rand(rng, 2, 4, 3, 4), k, v, None, 0.0, False, None, True],
        "gqa same heads": [q, k, v, _rand(rng, 3, 5), 0.0, False, None, True],
        "broadcast batch": [_rand(rng, 2, 3, 4), _rand(rng, 1, 5, 4), _rand(rng, 1, 5, 6)],
        "2-D": [_rand(rng, 3, 4), _rand(rng, 5, 4), _rand(rng, 5, 6), _rand(rng, 1, 5)],
        "one key": [_rand(rng, 2, 3, 4), _rand(rng, 2, 1, 4), _rand(rng, 2, 1, 2)],
        "empty": [_rand(rng, 2, 0, 4), _rand(rng, 2, 5, 4), _rand(rng, 2, 5, 6)],
    }


CASE_NAMES = list(_sdpa_cases(np.random.default_rng(0)))


@pytest.mark.parametrize("name", CASE_NAMES)
def test_scaled_dot_product_attention(name: str) -> None:
    args = _sdpa_cases(np.random.default_rng(CASE_NAMES.index(name)))[name]
    check_op(SDPA, args)


def test_scaled_dot_product_attention_float32() -> None:
    rng = np.random.default_rng(1)
    f32 = np.float32
    args = [
        _rand(rng, 2, 3, 4, dtype=f32),
        _rand(rng, 2, 5, 4, dtype=f32),
        _rand(rng, 2, 5, 4, dtype=f32),
        _rand(rng, 3, 5, dtype=f32),
    ]
    check_op(SDPA, args, rtol=1e-5, atol=1e-6)


def test_scaled_dot_product_attention_refusals() -> None:
    rng = np.random.default_rng(2)
    q, k, v = _rand(rng, 2, 3, 4), _rand(rng, 2, 5, 4), _rand(rng, 2, 5, 6)
    _expect_error(SDPA, [q, k, v, None, 1.5], "dropout probability has to be between 0 and 1")
    _expect_error(
        SDPA, [q, k, v, rng.random((3, 5)) > 0.5, 0.0, True], "should not be set when is_causal"
    )
    _expect_error(SDPA, [q, k, v, _rand(rng, 3, 5).astype(np.float32)], "attn_mask dtype")
    _expect_error(SDPA, [q, k, v[:, :4]], "do not fit")
    # PyTorch adds the mask in place: a mask with more dims than the scores is refused.
    _expect_error(SDPA, [q[0], k[0], v[0], _rand(rng, 2, 3, 5)], "cannot be expanded")
    _expect_error(
        SDPA,
        [
            _rand(rng, 2, 3, 3, 4),
            _rand(rng, 2, 2, 5, 4),
            _rand(rng, 2, 2, 5, 6),
            None,
            0.0,
            False,
            None,
            True,
        ],
        "enable_gqa",
    )


@pytest.mark.parametrize("name", CASE_NAMES)
def test_scaled_dot_product_attention_backward(name: str) -> None:
    args = _sdpa_cases(np.random.default_rng(CASE_NAMES.index(name) + 50))[name]
    q, k, v, mask, _, causal, scale, gqa = args + [None, 0.0, False, None, False][len(args) - 3 :]
    float_mask = mask is not None and mask.dtype != bool
    leaves = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    t_mask = None if mask is None else torch.tensor(mask, requires_grad=float_mask)
    out = torch.ops.aten.scaled_dot_product_attention(
        *leaves, t_mask, 0.0, causal, scale=scale, enable_gqa=gqa
    )
    grad = np.random.default_rng(3).standard_normal(tuple(out.shape))
    wrt = leaves + ([t_mask] if float_mask else [])
    theirs = torch.autograd.grad(out, wrt, torch.from_numpy(grad))
    for output_mask in ([True] * 4, [False, True, False, True], [True, False, True, False]):
        ours = _run(
            "gradview::scaled_dot_product_attention_backward",
            [grad, q, k, v, mask, causal, scale, gqa, output_mask],
        )
        for index, want in enumerate(output_mask):
            if not want or (index == 3 and not float_mask):
                assert ours[index] is None, f"gradient {index} was not asked for"
                continue
            np.testing.assert_allclose(
                ours[index],
                theirs[index].numpy(),
                rtol=1e-9,
                atol=1e-12,
                err_msg=f"gradient {index}",
            )


# -- the fused fast paths ----------------------------------------------------------------------------
E, HEADS, BATCH, LENGTH = 8, 2, 2, 3
MHA = "aten::_native_multi_head_attention"


def _mha_weights(rng: np.random.Generator, embed: int = E) -> list[np.ndarray]:
    return [
        _rand(rng, 3 * embed, embed),
        _rand(rng, 3 * embed),
        _rand(rng, embed, embed),
        _rand(rng, embed),
    ]


def _masks(rng: np.random.Generator) -> dict[str, tuple[np.ndarray | None, int | None]]:
    full = rng.random((BATCH, HEADS, LENGTH, LENGTH)) > 0.6
    full[0, 1, 2] = True  # a row masked everywhere: NaN, as PyTorch's _masked_softmax gives
    return {
        "none": (None, None),
        "attention mask": (rng.random((LENGTH, LENGTH)) > 0.5, 0),
        "padding mask": (np.array([[False, False, True], [False, True, True]]), 1),
        "full mask": (full, 2),
        "full mask, no type": (full, None),
        "float -inf mask": (np.where(full, -np.inf, 0.0), 2),
        "float mask": (_rand(rng, BATCH, HEADS, LENGTH, LENGTH), 2),
    }


MASK_NAMES = list(_masks(np.random.default_rng(0)))


def _compare_fused(op: str, args: list) -> None:
    """Like check_op, with NaNs equal and an undefined output (None) matched."""
    ours = _run(op, args)
    theirs = torch_call(op, args)
    for a, b in zip(ours, theirs, strict=True):
        if b is None:
            assert a is None
            continue
        assert a.dtype == b.numpy().dtype and a.shape == tuple(b.shape)
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_name", MASK_NAMES)
def test_native_multi_head_attention(mask_name: str, need_weights: bool, average: bool) -> None:
    rng = np.random.default_rng(MASK_NAMES.index(mask_name))
    mask, mask_type = _masks(rng)[mask_name]
    x = _rand(rng, BATCH, LENGTH, E)
    for key in (x, _rand(rng, BATCH, LENGTH, E)):  # self-attention, and distinct key/value
        args = [x, key, key, E, HEADS, *_mha_weights(rng), mask, need_weights, average, mask_type]
        _compare_fused(MHA, args)


def test_native_multi_head_attention_fast_path_sizes() -> None:
    """head dim 8 without weights and mask: PyTorch's own sdpa path; empty input: empty output."""
    rng = np.random.default_rng(5)
    x = _rand(rng, BATCH, LENGTH, 16)
    _compare_fused(MHA, [x, x, x, 16, 2, *_mha_weights(rng, 16), None, False, True, None])
    empty = _rand(rng, 0, LENGTH, E)
    _compare_fused(MHA, [empty, empty, empty, E, HEADS, *_mha_weights(rng), None, True, True, None])


def test_native_multi_head_attention_refusals() -> None:
    rng = np.random.default_rng(6)
    x, weights = _rand(rng, BATCH, LENGTH, E), _mha_weights(rng)
    mask = rng.random((LENGTH, LENGTH)) > 0.5
    _expect_error(MHA, [x, x, x, E, HEADS, *weights, mask, True, True, None], "needs a mask_type")
    _expect_error(MHA, [x, x, x, E, HEADS, *weights, mask, True, True, 2], "for mask_type 2")
    _expect_error(MHA, [x, x, x, E, HEADS, *weights, mask, True, True, 1], "for mask_type 1")
    other = _rand(rng, BATCH, LENGTH + 1, E)
    _expect_error(
        MHA, [x, other, other, E, HEADS, *weights, None, True, True, None], "shapes to match"
    )
    _expect_error(MHA, [x, x, x, E, 3, *weights, None, True, True, None], "divide evenly")


ENCODER = "aten::_transformer_encoder_layer_fwd"


@pytest.mark.parametrize("mask_name", ["none", "padding mask", "full mask"])
@pytest.mark.parametrize("use_gelu", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_fwd(norm_first: bool, use_gelu: bool, mask_name: str) -> None:
    rng = np.random.default_rng(int(norm_first) * 2 + int(use_gelu))
    mask, mask_type = _masks(rng)[mask_name]
    if mask is not None and mask.ndim == 4:
        mask = mask.copy()
        mask[..., 0] = False  # no row masked everywhere: the NaN would spread through the norms
    norms = [
        1.0 + 0.1 * _rand(rng, E),
        0.1 * _rand(rng, E),
        1.0 + 0.1 * _rand(rng, E),
        0.1 * _rand(rng, E),
    ]
    ffn = [_rand(rng, 16, E), _rand(rng, 16), _rand(rng, E, 16), _rand(rng, E)]
    args = [
        _rand(rng, BATCH, LENGTH, E),
        E,
        HEADS,
        *_mha_weights(rng),
        use_gelu,
        norm_first,
        1e-5,
        *norms,
        *ffn,
        mask,
        mask_type,
    ]
    check_op(ENCODER, args, rtol=1e-9)


def test_transformer_encoder_layer_fwd_empty_input() -> None:
    rng = np.random.default_rng(9)
    norms = [_rand(rng, E) for _ in range(4)]
    ffn = [_rand(rng, 16, E), _rand(rng, 16), _rand(rng, E, 16), _rand(rng, E)]
    args = [
        _rand(rng, 0, LENGTH, E),
        E,
        HEADS,
        *_mha_weights(rng),
        True,
        False,
        1e-5,
        *norms,
        *ffn,
        None,
        None,
    ]
    check_op(ENCODER, args)
