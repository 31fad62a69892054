"""Shape rules for attention: scaled_dot_product_attention and the fused fast paths.

``scaled_dot_product_attention(query [..., L, E], key [..., S, E],
value [..., S, Ev])`` is ``softmax(query @ key^T) @ value``: ``[..., L, Ev]``
with the batch dims of the three broadcast (a query with more heads than
key and value under ``enable_gqa`` sets the heads), a new contiguous tensor.

``_native_multi_head_attention`` returns ``[B, L, E]`` like its query and
the attention weights: ``[B, L, L]`` averaged over heads, ``[B, heads, L,
L]`` per head, and an undefined tensor without ``need_weights`` (no type is
said for it). ``_transformer_encoder_layer_fwd`` keeps its input's sizes.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import NodeArgs, RuleResult, Sizes, broadcast, device_of, fresh

from ..types import Type

__all__: list[str] = []


@shape_rule("aten::scaled_dot_product_attention")
def _sdpa(args: NodeArgs) -> RuleResult:
    query, key, value = args.tensor(0), args.tensor(1), args.tensor(2)
    if query is None or key is None or value is None:
        return None
    sizes: Sizes | None = None
    if query.sizes is not None and key.sizes is not None and value.sizes is not None:
        if min(len(query.sizes), len(key.sizes), len(value.sizes)) < 2:
            return None
        batch = broadcast(query.sizes[:-2], key.sizes[:-2], value.sizes[:-2])
        if batch is None and args.value(7, None) is True:
            # Grouped-query attention: key and value heads repeat to the query's.
            batch = query.sizes[:-2]
        if batch is not None:
            sizes = batch + (query.sizes[-2], value.sizes[-1])
    return [fresh(query.scalar_type, sizes, device_of(query, key, value))]


@shape_rule("aten::_native_multi_head_attention")
def _native_mha(args: NodeArgs) -> RuleResult:
    query = args.tensor(0)
    if query is None:
        return None
    out = fresh(query.scalar_type, query.sizes, query.device)
    need, average, heads = args.value(10, True), args.value(11, True), args.int_value(4)
    weights: Type | None = None
    if need is True and isinstance(average, bool):
        batch = query.sizes[0] if query.sizes is not None and len(query.sizes) == 3 else None
        length = query.sizes[1] if query.sizes is not None and len(query.sizes) == 3 else None
        sizes: Sizes = (batch, length, length) if average else (batch, heads, length, length)
        weights = fresh(query.scalar_type, sizes, query.device)
    return [out, weights]


@shape_rule("aten::_transformer_encoder_layer_fwd")
def _encoder_layer(args: NodeArgs) -> RuleResult:
    src = args.tensor(0)
    return None if src is None else [fresh(src.scalar_type, src.sizes, src.device)]


@shape_rule("gradview::scaled_dot_product_attention_backward")
def _sdpa_backward(args: NodeArgs) -> RuleResult:
    """Four ``Tensor?`` gradients (None where output_mask says no): their declared optional
    types stay, as for any optional result."""
    return [None, None, None, None]
