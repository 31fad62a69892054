"""Attention: ``scaled_dot_product_attention`` and its backward, and the fused fast paths
``_native_multi_head_attention`` and ``_transformer_encoder_layer_fwd``.

**Scaled dot-product attention** (PyTorch's math path,
``_scaled_dot_product_attention_math``) for ``query [..., L, E]``,
``key [..., S, E]`` and ``value [..., S, Ev]`` (batch dims broadcast)::

    scores = query @ key^T * scale + mask        # scale defaults to 1 / sqrt(E)
    probs  = safe_softmax(scores)                # a row masked everywhere gives 0, not NaN
    out    = probs @ value

A boolean mask keeps the positions that are True (the others add -inf); a
float mask is added as it is; ``is_causal`` keeps the lower triangle
(query ``i`` sees keys ``0..i``). ``enable_gqa`` lets several query heads
share one key/value head (dim -3): key and value heads are repeated
(``repeat_interleave``) to the number of query heads. Dropout (``dropout_p >
0``) applies ``dropout`` to ``probs`` as PyTorch's math path does, with
gradview's seeded mask (kernels/dropout.py: the same on every run, so the
backward recomputes it; the values are not PyTorch's).

The backward follows the same lines from the end::

    d_value = probs^T @ g            d_probs = (g @ value^T) * noise    # noise: dropout's, else 1
    d_scores = probs * (d_probs - sum(d_probs * probs, -1))     # softmax's backward
    d_query = d_scores @ key * scale      d_key = d_scores^T @ query * scale
    d_mask  = d_scores (a float mask only), summed down to the mask's shape

**The fused fast paths** are what TorchScript's scripted ``MultiheadAttention``
and ``TransformerEncoderLayer`` call in evaluation without gradients. Their
masks are booleans where True means *masked out* (a float mask is converted:
any non-zero entry masks), a row masked everywhere gives NaN, as PyTorch's
``_masked_softmax`` does, and they have no derivative in PyTorch.

**The CPU flash attention**: ``_scaled_dot_product_flash_attention_for_cpu``
and its backward, the attention
AOTAutograd's graphs call on a CPU (``F.scaled_dot_product_attention`` decomposed).

For 4-D ``query [B, H, L, E]``, ``key [B, H, S, E]`` and ``value [B, H, S, E]``
(one head size for the three, as PyTorch's kernel requires)::

    scores    = query @ key^T * scale + mask          # scale defaults to 1 / sqrt(E)
    logsumexp = log(sum(exp(scores), -1))             # [B, H, L], saved for the backward
    out       = exp(scores - logsumexp) @ value

``is_causal`` keeps the lower triangle (query ``i`` sees keys ``0..i``); an
``attn_mask`` (of the query's dtype, as PyTorch requires) is added.
``logsumexp`` has the accumulation dtype (float32 for a float16 query, else the
query's). A row masked everywhere gives zeros and a ``logsumexp`` of 0, as PyTorch's.
Dropout is refused, as PyTorch's CPU kernel refuses it.

The backward recomputes the probabilities from ``logsumexp`` and reads ``out``::

    d_value = probs^T @ g      d_scores = probs * (g @ value^T - sum(g * out, -1))
    d_query = d_scores @ key * scale      d_key = d_scores^T @ query * scale
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .activations import gelu, relu
from .dropout import dropout, dropout_noise
from .dtypes import to_dtype
from .normalization import native_layer_norm
from .protocol import KernelError
from .shapes import check_expandable

__all__ = [
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward",
    "native_multi_head_attention",
    "transformer_encoder_layer_fwd",
    "flash_attention_for_cpu",
    "flash_attention_for_cpu_backward",
]


def _swap(x: Any) -> Any:
    """The matrix transpose of the last two dims."""
    return x.swapaxes(-1, -2)


def _sum_to(xp: Any, x: Any, shape: tuple[int, ...]) -> Any:
    """Undo broadcasting: sum ``x`` down to ``shape``."""
    lead = x.ndim - len(shape)
    if lead:
        x = x.sum(axis=tuple(range(lead)))
    dims = tuple(d for d, size in enumerate(shape) if size == 1 and x.shape[d] != 1)
    return x.sum(axis=dims, keepdims=True) if dims else x


def _softmax(xp: Any, scores: Any) -> Any:
    """Softmax over the last dim; a row of -inf everywhere gives NaN."""
    with numpy.errstate(invalid="ignore"):
        shifted = scores - scores.max(axis=-1, keepdims=True)
        exp = xp.exp(shifted)
        return exp / exp.sum(axis=-1, keepdims=True)


# -- scaled dot-product attention ------------------------------------------------------------
def _check_sdpa(query: Any, key: Any, value: Any, attn_mask: Any, is_causal: bool) -> None:
    op = "scaled_dot_product_attention"
    if not (query.dtype == key.dtype == value.dtype):
        raise KernelError(
            f"{op}: expected query, key, and value to have the same dtype, got {query.dtype}, "
            f"{key.dtype} and {value.dtype}"
        )
    if query.dtype.kind != "f":
        raise KernelError(f"{op}: expected floating-point tensors, got {query.dtype}")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise KernelError(f"{op}: expected query, key, and value to be at least 2-D")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise KernelError(
            f"{op}: query {list(query.shape)}, key {list(key.shape)} and value {list(value.shape)} "
            "do not fit: query and key share the last dim, key and value the sequence dim"
        )
    if attn_mask is not None:
        if attn_mask.dtype.kind != "b" and attn_mask.dtype != query.dtype:
            raise KernelError(
                f"{op}: expected attn_mask dtype to be bool or to match query dtype, "
                f"got {attn_mask.dtype} "
                f"and {query.dtype}"
            )
        if is_causal:
            raise KernelError(f"{op}: an explicit attn_mask should not be set when is_causal=True")


def _repeat_heads(
    op: str, query: Any, key: Any, value: Any, enable_gqa: bool
) -> tuple[Any, Any, int]:
    """Key and value with their heads (dim -3) repeated to the query's (grouped-query attention)."""
    if not enable_gqa or min(query.ndim, key.ndim, value.ndim) < 3:
        return key, value, 1
    q_heads, k_heads, v_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if k_heads != v_heads or k_heads == 0 or q_heads % k_heads:
        raise KernelError(
            f"{op}: enable_gqa needs key and value with one number of heads dividing the "
            "query's, got "
            f"{q_heads} query, {k_heads} key and {v_heads} value heads"
        )
    repeat = q_heads // k_heads
    if repeat == 1:
        return key, value, 1
    return key.repeat(repeat, axis=-3), value.repeat(repeat, axis=-3), repeat


def _additive_mask(
    xp: Any, attn_mask: Any, is_causal: bool, length: int, source: int, dtype: Any
) -> Any:
    """The mask as something to add to the scores (None when there is none)."""
    if is_causal:
        attn_mask = xp.tril(xp.ones((length, source), dtype=bool))
    if attn_mask is None or attn_mask.dtype.kind != "b":
        return attn_mask
    return xp.where(attn_mask, xp.zeros((), dtype=dtype), xp.full((), -math.inf, dtype=dtype))


def _safe_softmax(xp: Any, scores: Any) -> Any:
    """Softmax, with 0 instead of NaN on rows that are -inf everywhere (PyTorch's _safe_softmax)."""
    probs = _softmax(xp, scores)
    masked_rows = xp.all(scores == -math.inf, axis=-1, keepdims=True)
    return xp.where(masked_rows, xp.zeros((), dtype=probs.dtype), probs)


def _attention(
    xp: Any,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
) -> tuple[Any, Any, Any, int, float]:
    """(probs, key, value, repeat, scale): key and value with repeated heads."""
    _check_sdpa(query, key, value, attn_mask, is_causal)
    key, value, repeat = _repeat_heads(
        "scaled_dot_product_attention", query, key, value, enable_gqa
    )
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = (query @ _swap(key)) * scale
    mask = _additive_mask(xp, attn_mask, is_causal, query.shape[-2], key.shape[-2], query.dtype)
    if mask is not None:
        # PyTorch adds the mask in place: it broadcasts to the scores, never the other way.
        check_expandable("scaled_dot_product_attention: attn_mask", mask.shape, scores.shape)
        scores = scores + mask
    return _safe_softmax(xp, scores), key, value, repeat, scale


def scaled_dot_product_attention(
    xp: Any,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    _check_dropout_p(dropout_p)
    probs, _, value, _, _ = _attention(
        xp, query, key, value, attn_mask, is_causal, scale, enable_gqa
    )
    if dropout_p > 0:
        probs = dropout(xp, probs, dropout_p, True)
    return probs @ value


def _check_dropout_p(dropout_p: float) -> None:
    if not 0.0 <= dropout_p <= 1.0:
        raise KernelError(
            f"scaled_dot_product_attention: dropout probability has to be between 0 and 1, but got {dropout_p}"
        )


def _ungroup(xp: Any, grad: Any, repeat: int) -> Any:
    """The gradient of a head-repeated key or value, summed back over each group of heads."""
    if repeat == 1:
        return grad
    shape = grad.shape
    grouped = grad.reshape(shape[:-3] + (shape[-3] // repeat, repeat) + shape[-2:])
    return grouped.sum(axis=-3)


def scaled_dot_product_attention_backward(
    xp: Any,
    grad: Any,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
    output_mask: Any,
    dropout_p: float = 0.0,
) -> tuple[Any, Any, Any, Any]:
    """(d_query, d_key, d_value, d_attn_mask): None where output_mask says no, and for a
    boolean mask. With ``dropout_p > 0`` the forward's seeded dropout mask is drawn again."""
    _check_dropout_p(dropout_p)
    probs, key_r, value_r, repeat, scale = _attention(
        xp, query, key, value, attn_mask, is_causal, scale, enable_gqa
    )
    dropped, noise = probs, None
    if dropout_p > 0:
        dropped = dropout(xp, probs, dropout_p, True)
        noise = dropout_noise(xp, probs, dropout_p, True, False, False)
    want_q, want_k, want_v, want_mask = (bool(m) for m in output_mask)
    d_value = None
    if want_v:
        d_value = _sum_to(xp, _swap(dropped) @ grad, value_r.shape)
        d_value = _sum_to(xp, _ungroup(xp, d_value, repeat), value.shape)
    d_probs = grad @ _swap(value_r)
    if noise is not None:
        d_probs = d_probs * noise
    d_scores = probs * (d_probs - (d_probs * probs).sum(axis=-1, keepdims=True))
    d_query = _sum_to(xp, (d_scores @ key_r) * scale, query.shape) if want_q else None
    d_key = None
    if want_k:
        d_key = _sum_to(xp, (_swap(d_scores) @ query) * scale, key_r.shape)
        d_key = _sum_to(xp, _ungroup(xp, d_key, repeat), key.shape)
    d_mask = None
    if want_mask and attn_mask is not None and attn_mask.dtype.kind != "b":
        d_mask = _sum_to(xp, d_scores, attn_mask.shape)
    return d_query, d_key, d_value, d_mask


# -- the fused fast paths ------------------------------------------------------------------------
# mask_type: 0 an attention mask [L, L], 1 a padding mask [B, L], 2 a full mask [B, heads, L, L].
_MASK_TYPES = (0, 1, 2)


def _fused_mask(xp: Any, mask: Any, mask_type: int | None, scores_shape: tuple[int, ...]) -> Any:
    """The boolean mask (True: masked out) broadcast to the scores, as _masked_softmax reads it."""
    op = "_native_multi_head_attention"
    mask = mask.astype(bool, copy=False)
    batch, _, length, _ = scores_shape
    kind = 2 if mask.ndim != 2 else mask_type
    if kind is None:
        raise KernelError(f"{op}: a 2-D mask needs a mask_type (0 or 1)")
    if kind == 2 and tuple(mask.shape) != tuple(scores_shape):
        raise KernelError(
            f"{op}: for mask_type 2 the mask must have shape {list(scores_shape)}, got "
            f"{list(mask.shape)}"
        )
    if kind == 1:
        if tuple(mask.shape) != (batch, length):
            raise KernelError(
                f"{op}: for mask_type 1 the mask must have shape {[batch, length]}, got "
                f"{list(mask.shape)}"
            )
        return mask.reshape(batch, 1, 1, length)
    if kind == 0 and tuple(mask.shape) != (length, length):
        raise KernelError(
            f"{op}: for mask_type 0 the mask must have shape {[length, length]}, got "
            f"{list(mask.shape)}"
        )
    if kind not in _MASK_TYPES:
        raise KernelError(f"{op}: mask_type must be 0, 1 or 2, got {kind}")
    return mask


def _check_mha(
    query: Any, key: Any, value: Any, embed_dim: int, num_head: int, qkv_weight: Any, qkv_bias: Any
) -> None:
    op = "_native_multi_head_attention"
    if query.ndim != 3 or key.ndim != 3 or value.ndim != 3:
        raise KernelError(f"{op}: expected 3-D query, key and value [batch, length, embed_dim]")
    if query.shape[2] != embed_dim:
        raise KernelError(
            f"{op}: passed-in embed_dim {embed_dim} didn't match last dim of query {query.shape[2]}"
        )
    if not (query.shape == key.shape == value.shape):
        raise KernelError(
            f"{op}: expected query/key/value shapes to match, got {list(query.shape)}, "
            f"{list(key.shape)} and {list(value.shape)}"
        )
    if tuple(qkv_weight.shape) != (3 * embed_dim, embed_dim) or tuple(qkv_bias.shape) != (
        3 * embed_dim,
    ):
        raise KernelError(
            f"{op}: expected qkv_weight [{3 * embed_dim}, {embed_dim}] and qkv_bias "
            f"[{3 * embed_dim}], got {list(qkv_weight.shape)} and {list(qkv_bias.shape)}"
        )
    if num_head <= 0 or embed_dim % num_head:
        raise KernelError(f"{op}: embed_dim {embed_dim} must divide evenly by num_heads {num_head}")


def native_multi_head_attention(
    xp: Any,
    query: Any,
    key: Any,
    value: Any,
    embed_dim: int,
    num_head: int,
    qkv_weight: Any,
    qkv_bias: Any,
    proj_weight: Any,
    proj_bias: Any,
    mask: Any = None,
    need_weights: bool = True,
    average_attn_weights: bool = True,
    mask_type: int | None = None,
) -> tuple[Any, Any]:
    """(output [B, L, E], weights): weights averaged over heads [B, L, L], per head
    [B, heads, L, L], or None (an undefined tensor) without need_weights."""
    _check_mha(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias)
    batch, length, _ = query.shape
    if batch * length == 0 or embed_dim == 0:
        return xp.zeros_like(query), None
    head = embed_dim // num_head
    projected = []
    for index, x in enumerate((query, key, value)):
        rows = slice(index * embed_dim, (index + 1) * embed_dim)
        y = x @ qkv_weight[rows].T + qkv_bias[rows]
        projected.append(y.reshape(batch, length, num_head, head).transpose(0, 2, 1, 3))
    q, k, v = projected
    scores = (q * (1.0 / math.sqrt(head))) @ _swap(k)
    if mask is not None:
        hidden = _fused_mask(xp, mask, mask_type, scores.shape)
        scores = xp.where(hidden, xp.full((), -math.inf, dtype=scores.dtype), scores)
    probs = _softmax(xp, scores)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, embed_dim)
    out = context @ proj_weight.T + proj_bias
    if not need_weights:
        return out, None
    return out, (probs.sum(axis=1) / num_head if average_attn_weights else probs)


def transformer_encoder_layer_fwd(
    xp: Any,
    src: Any,
    embed_dim: int,
    num_heads: int,
    qkv_weight: Any,
    qkv_bias: Any,
    proj_weight: Any,
    proj_bias: Any,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    norm_weight_1: Any,
    norm_bias_1: Any,
    norm_weight_2: Any,
    norm_bias_2: Any,
    ffn_weight_1: Any,
    ffn_bias_1: Any,
    ffn_weight_2: Any,
    ffn_bias_2: Any,
    mask: Any = None,
    mask_type: int | None = None,
) -> Any:
    """One encoder layer: self-attention and a feed-forward block, each with a residual
    connection and a layer norm (after it, or before it with norm_first)."""
    if src.size == 0:
        return src.copy()
    if src.ndim != 3:
        raise KernelError(f"_transformer_encoder_layer_fwd: expected a 3-D src, got {src.ndim}-D")

    def norm(x: Any, weight: Any, bias: Any) -> Any:
        return native_layer_norm(xp, x, [embed_dim], weight, bias, eps)[0]

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    x, _ = native_multi_head_attention(
        xp,
        x,
        x,
        x,
        embed_dim,
        num_heads,
        qkv_weight,
        qkv_bias,
        proj_weight,
        proj_bias,
        mask,
        False,
        True,
        mask_type,
    )
    x = x + src
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    hidden = x @ ffn_weight_1.T + ffn_bias_1
    hidden = gelu(xp, hidden) if use_gelu else relu(xp, hidden)
    x = hidden @ ffn_weight_2.T + ffn_bias_2 + residual
    return x if norm_first else norm(x, norm_weight_2, norm_bias_2)


# The CPU flash attention (AOTAutograd's decomposition of scaled_dot_product_attention).

_OP = "_scaled_dot_product_flash_attention_for_cpu"


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


def _check(query: Any, key: Any, value: Any, dropout_p: float) -> None:
    if dropout_p > 0:
        raise KernelError(f"{_OP}: dropout_p={dropout_p}: PyTorch's CPU kernel supports no dropout")
    if not (query.ndim == key.ndim == value.ndim == 4):
        raise KernelError(f"{_OP}: expected 4-D query, key and value [B, H, T, E]")
    if not (query.dtype == key.dtype == value.dtype) or query.dtype.kind != "f":
        raise KernelError(
            f"{_OP}: expected query, key and value of one floating dtype, got {query.dtype}, "
            f"{key.dtype} and {value.dtype}"
        )
    if not (query.shape[-1] == key.shape[-1] == value.shape[-1]) or key.shape[-2] != value.shape[-2]:
        raise KernelError(
            f"{_OP}: query {list(query.shape)}, key {list(key.shape)} and value "
            f"{list(value.shape)} need one head size, and key and value one length"
        )


def _scores(
    xp: Any, query: Any, key: Any, is_causal: bool, attn_mask: Any, scale: float | None
) -> tuple[Any, float]:
    """The masked, scaled scores in the compute dtype, and the scale used."""
    dtype = _compute_dtype(query.dtype)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    q, k = query.astype(dtype, copy=False), key.astype(dtype, copy=False)
    scores = (q @ _swap(k)) * scale
    if attn_mask is not None and attn_mask.dtype != query.dtype:
        raise KernelError(f"{_OP}: the attention mask must have the query's dtype, got {attn_mask.dtype}")
    if attn_mask is not None and is_causal:
        raise KernelError(f"{_OP}: an explicit attn_mask should not be set when is_causal=True")
    mask = _additive_mask(xp, attn_mask, is_causal, query.shape[-2], key.shape[-2], dtype)
    if mask is not None:
        check_expandable(f"{_OP}: attn_mask", mask.shape, scores.shape)
        scores = scores + mask.astype(dtype, copy=False)
    return scores, scale


def _probs(xp: Any, scores: Any, logsumexp: Any) -> Any:
    """exp(scores - logsumexp); 0 on rows masked everywhere (exp(-inf - 0)), and where a
    given logsumexp is -inf."""
    masked = (logsumexp == -math.inf)[..., None]
    with numpy.errstate(invalid="ignore"):
        probs = xp.exp(scores - logsumexp[..., None])
    return xp.where(masked, xp.zeros((), dtype=probs.dtype), probs)


def flash_attention_for_cpu(
    xp: Any, query: Any, key: Any, value: Any, dropout_p: float = 0.0, is_causal: bool = False,
    attn_mask: Any = None, scale: float | None = None,
) -> tuple[Any, Any]:
    """(output [B, H, L, E], logsumexp [B, H, L])."""
    _check(query, key, value, dropout_p)
    scores, _ = _scores(xp, query, key, is_causal, attn_mask, scale)
    top = scores.max(axis=-1, keepdims=True)
    masked = top == -math.inf
    zero = xp.zeros((), dtype=top.dtype)
    top = xp.where(masked, zero, top)
    with numpy.errstate(divide="ignore"):
        logsumexp = xp.log(xp.exp(scores - top).sum(axis=-1)) + top[..., 0]
    logsumexp = xp.where(masked[..., 0], zero, logsumexp)  # PyTorch's 0 for a row masked everywhere
    probs = _probs(xp, scores, logsumexp)
    out = probs @ value.astype(probs.dtype, copy=False)
    return out.astype(query.dtype, copy=False), logsumexp


def flash_attention_for_cpu_backward(
    xp: Any, grad_out: Any, query: Any, key: Any, value: Any, out: Any, logsumexp: Any,
    dropout_p: float, is_causal: bool, attn_mask: Any = None, scale: float | None = None,
) -> tuple[Any, Any, Any]:
    """(grad_query, grad_key, grad_value), each of its input's shape and dtype."""
    _check(query, key, value, dropout_p)
    scores, scale = _scores(xp, query, key, is_causal, attn_mask, scale)
    dtype = scores.dtype
    probs = _probs(xp, scores, logsumexp.astype(dtype, copy=False))
    g = grad_out.astype(dtype, copy=False)
    d_value = _swap(probs) @ g
    row = (g * out.astype(dtype, copy=False)).sum(axis=-1, keepdims=True)
    d_scores = probs * (g @ _swap(value.astype(dtype, copy=False)) - row)
    d_query = (d_scores @ key.astype(dtype, copy=False)) * scale
    d_key = (_swap(d_scores) @ query.astype(dtype, copy=False)) * scale
    return (
        d_query.astype(query.dtype, copy=False),
        d_key.astype(key.dtype, copy=False),
        d_value.astype(value.dtype, copy=False),
    )
