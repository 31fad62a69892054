"""Gradient formulas of attention: scaled_dot_product_attention; the fused fast paths have none.

``scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
is_causal, scale=, enable_gqa=)`` is ``softmax(query @ key^T * scale +
mask) @ value``. PyTorch's CPU autograd differentiates its math path through
that decomposition; the formula emits one backward kernel
(``gradview::scaled_dot_product_attention_backward``, the lines are in
kernels/attention.py) that recomputes the attention weights from the inputs
and returns the gradients of query, key, value and of a float mask (a float
``attn_mask`` is added to the scores, so it gets the scores' gradient, summed
over the dims it was broadcast along; a boolean mask gets none). An
``output_mask`` says which of the four to compute, from the inputs'
``requires_grad``.

``_native_multi_head_attention`` and ``_transformer_encoder_layer_fwd`` are
the fused kernels the scripted ``MultiheadAttention`` and
``TransformerEncoderLayer`` call when no gradient is needed (they check
``torch.is_grad_enabled()`` and the parameters' ``requires_grad`` first).
PyTorch implements no derivative for them, and neither does gradview.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula, no_gradient
from gradview.ops.static_info import input_at, is_none, needs_grad, none_grads

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _argument(node: Node, index: int, default: object) -> Value | object:
    """Input ``index``, or its default where hand-written IR leaves a trailing one out."""
    value = input_at(node, index)
    return default if value is None else value


@formula("aten::scaled_dot_product_attention")
def scaled_dot_product_attention(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad = grads[0]
    if grad.node.kind() == "prim::AutogradZero":
        return none_grads(node)
    query, key, value = node.inputs()[:3]
    mask = input_at(node, 3)
    mask = None if mask is None or is_none(mask) else mask
    wanted = [
        needs_grad(query),
        needs_grad(key),
        needs_grad(value),
        mask is not None and needs_grad(mask),
    ]
    if not any(wanted):
        return none_grads(node)
    outs = emit.op(
        "gradview::scaled_dot_product_attention_backward",
        grad,
        query,
        key,
        value,
        mask,
        _argument(node, 5, False),
        _argument(node, 6, None),
        _argument(node, 7, False),
        wanted,
    )
    return none_grads(
        node, *(out if want else None for out, want in zip(outs, wanted, strict=True))
    )


no_gradient(
    "aten::_native_multi_head_attention",
    "aten::_transformer_encoder_layer_fwd",
    reason="PyTorch implements no derivative for this fused fast path (its autograd raises "
    "'derivative for ... is not implemented'); torch calls it only when no gradient is needed",
)
no_gradient(
    "gradview::scaled_dot_product_attention_backward",
    reason="a backward kernel of scaled_dot_product_attention: gradview does not "
    "differentiate backward graphs again",
)
