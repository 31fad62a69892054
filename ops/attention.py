"""Attention: ``scaled_dot_product_attention``, and the fused fast paths
``_native_multi_head_attention`` and ``_transformer_encoder_layer_fwd``.

``scaled_dot_product_attention(query [..., L, E], key [..., S, E],
value [..., S, Ev], attn_mask, dropout_p, is_causal, scale=, enable_gqa=)``
is ``softmax(query @ key^T * scale + mask) @ value``: ``[..., L, Ev]`` with
the batch dims of the three broadcast (a query with more heads than key and
value under ``enable_gqa`` sets the heads), a new contiguous tensor.

Its gradient. PyTorch's CPU autograd differentiates its math path through
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
PyTorch implements no derivative for them, and neither does gradview. The
first returns ``[B, L, E]`` like its query and the attention weights: ``[B,
L, L]`` averaged over heads, ``[B, heads, L, L]`` per head, and an undefined
tensor without ``need_weights`` (no type is said for it); the second keeps
its input's sizes.

``_scaled_dot_product_flash_attention_for_cpu`` (what AOTAutograd's graphs call
on a CPU) returns the output and the rows' logsumexp, and its gradient is
PyTorch's backward kernel of the same name (kernels/attention.py), which
PyTorch does not differentiate again; the logsumexp has no gradient.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType, Type
from gradview.kernels import attention as kernels

from .dtype_rules import accumulate_type
from .random_draws import unless_constant_zero
from .registry import Emitter, formula, kernel, no_gradient, random, schema, shape_rule
from .shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    broadcast,
    device_of,
    fresh,
    layout_of,
    make_tensor,
)
from .static_info import input_at, is_none, needs_grad, none_grads
from .tensor_layout import preserve_strides

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- aten::scaled_dot_product_attention ------------------------------------------------------
kernel("aten::scaled_dot_product_attention")(kernels.scaled_dot_product_attention)
random("aten::scaled_dot_product_attention", when=unless_constant_zero(4))  # unless dropout_p is a constant 0


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


def _argument(node: Node, index: int, default: object) -> Value | object:
    """Input ``index``, or its default where hand-written IR leaves a trailing one out."""
    value = input_at(node, index)
    return default if value is None else value


@formula("aten::scaled_dot_product_attention")
def _sdpa_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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
        _argument(node, 4, 0.0),
    )
    return none_grads(
        node, *(out if want else None for out, want in zip(outs, wanted, strict=True))
    )


# -- gradview::scaled_dot_product_attention_backward -----------------------------------------
schema(
    "gradview::scaled_dot_product_attention_backward(Tensor grad, Tensor query, Tensor key, Tensor value, "
    "Tensor? attn_mask, bool is_causal, float? scale, bool enable_gqa, bool[4] output_mask, "
    "float dropout_p=0.) "
    "-> (Tensor?, Tensor?, Tensor?, Tensor?)"
)
kernel("gradview::scaled_dot_product_attention_backward")(
    kernels.scaled_dot_product_attention_backward
)


@shape_rule("gradview::scaled_dot_product_attention_backward")
def _sdpa_backward(args: NodeArgs) -> RuleResult:
    """Four ``Tensor?`` gradients (None where output_mask says no): their declared optional
    types stay, as for any optional result."""
    return [None, None, None, None]


no_gradient(
    "gradview::scaled_dot_product_attention_backward",
    reason="a backward kernel of scaled_dot_product_attention: gradview does not "
    "differentiate backward graphs again",
)


# -- aten::_native_multi_head_attention, _transformer_encoder_layer_fwd: fused fast paths ------
kernel("aten::_native_multi_head_attention")(kernels.native_multi_head_attention)
kernel("aten::_transformer_encoder_layer_fwd")(kernels.transformer_encoder_layer_fwd)


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


no_gradient(
    "aten::_native_multi_head_attention",
    "aten::_transformer_encoder_layer_fwd",
    reason="PyTorch implements no derivative for this fused fast path (its autograd raises "
    "'derivative for ... is not implemented'); torch calls it only when no gradient is needed",
)


# -- aten::_scaled_dot_product_flash_attention_for_cpu and its backward (AOTAutograd's graphs) -------
_FLASH = "aten::_scaled_dot_product_flash_attention_for_cpu"
kernel(_FLASH)(kernels.flash_attention_for_cpu)
kernel(f"{_FLASH}_backward")(kernels.flash_attention_for_cpu_backward)


@shape_rule(_FLASH)
def _flash_shapes(args: NodeArgs) -> RuleResult:
    """(output, logsumexp): the output laid out like the query (PyTorch's meta function:
    ``empty_like(query)``), logsumexp [B, H, L] stored as [B, L, H] in the accumulation
    dtype (Float for Half and BFloat16)."""
    query = args.tensor(0)
    if query is None:
        return None
    layout = layout_of(query)
    strides = preserve_strides(*layout) if layout is not None else None
    out = make_tensor(query.scalar_type, query.sizes, strides, query.device)
    lse_sizes: Sizes | None = None
    lse_strides = None
    if query.sizes is not None and len(query.sizes) == 4:
        batch, heads, length = query.sizes[:3]
        lse_sizes = (batch, heads, length)
        if isinstance(heads, int) and isinstance(length, int):
            lse_strides = (length * heads, 1, heads)
    dtype = query.scalar_type and accumulate_type(query.scalar_type)
    return [out, make_tensor(dtype, lse_sizes, lse_strides, query.device)]


@shape_rule(f"{_FLASH}_backward")
def _flash_backward_shapes(args: NodeArgs) -> RuleResult:
    """The gradients of query, key and value: [B, H, T, E] stored as [B, T, H, E], as
    PyTorch's kernel allocates them."""
    return [_heads_inside(args.tensor(i)) for i in (1, 2, 3)]


def _heads_inside(t: TensorType | None) -> TensorType | None:
    """A new tensor of ``t``'s sizes [B, H, T, E], stored as [B, T, H, E]."""
    if t is None:
        return None
    sizes = t.sizes
    if sizes is None or len(sizes) != 4 or not all(isinstance(s, int) for s in sizes):
        return fresh(t.scalar_type, sizes, t.device)
    _, heads, length, e = sizes
    return make_tensor(t.scalar_type, sizes, (length * heads * e, e, heads * e, 1), t.device)


@formula(_FLASH)
def _flash_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """PyTorch's derivative: the backward kernel, given the forward's output and logsumexp
    (logsumexp itself is not differentiable, so its gradient is ignored)."""
    grad = grads[0]
    query, key, value, dropout_p, is_causal = node.inputs()[:5]
    if grad.node.kind() == "prim::AutogradZero" or not any(
        needs_grad(v) for v in (query, key, value)
    ):
        return none_grads(node)
    out, logsumexp = node.outputs()
    grads_qkv = emit.op(
        f"{_FLASH}_backward", grad, query, key, value, out, logsumexp, dropout_p, is_causal,
        _argument(node, 5, None), _argument(node, 6, None),
    )
    return none_grads(
        node, *(g if needs_grad(v) else None for g, v in zip(grads_qkv, (query, key, value), strict=True))
    )


no_gradient(
    f"{_FLASH}_backward",
    reason="a backward kernel of _scaled_dot_product_flash_attention_for_cpu: PyTorch "
    "implements no derivative for it (its autograd raises 'derivative for ... is not implemented')",
)
