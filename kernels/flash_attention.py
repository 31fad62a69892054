"""``_scaled_dot_product_flash_attention_for_cpu`` and its backward: the attention
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

from .attention import _additive_mask, _swap
from .dtypes import to_dtype
from .protocol import KernelError
from .shapes import check_expandable

__all__ = ["flash_attention_for_cpu", "flash_attention_for_cpu_backward"]

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
