"""Gradient formulas of baddbmm and bilinear.

* ``baddbmm: out = beta * self + alpha * (batch1 @ batch2)`` (batched): ``self``
  gets ``beta * grad`` summed back to its (broadcast) size, ``batch1`` gets
  ``alpha * grad @ batch2^T`` and ``batch2`` gets ``alpha * batch1^T @ grad``
  (PyTorch's derivatives.yaml; ``maybe_multiply`` skips a multiplication by 1).
* ``bilinear: out[o] = x1^T W[o] x2 + b[o]``: one backward kernel
  (``gradview::bilinear_backward``) gives the four gradients; an
  ``output_mask`` from the inputs' ``requires_grad`` says which to compute.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    input_at,
    is_none,
    needs_grad,
)

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _scale(emit: Emitter, grad: Value, factor: Value | None) -> Value:
    """``grad * factor``, skipped for a constant 1 (``maybe_multiply``)."""
    if factor is None:
        return grad
    known = const(factor)
    return grad if known is not NOT_CONSTANT and known == 1 else emit.op("aten::mul", grad, factor)


def _baddbmm_forward(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": emit.size_if_not_equal(self_, node.output())} if needs_grad(self_) else {}


@formula("aten::baddbmm", forward=_baddbmm_forward)
def baddbmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    schema = node.maybe_schema()
    assert schema is not None
    arguments = {arg.name: input_at(node, i) for i, arg in enumerate(schema.arguments)}
    self_, batch1, batch2 = arguments["self"], arguments["batch1"], arguments["batch2"]
    grad = grads[0]
    result: Result = [None] * len(node.inputs())
    if "self_size" in saved:
        result[0] = cast_back(emit, emit.sum_to(_scale(emit, grad, arguments.get("beta")), saved["self_size"]),
                              _changed_dtype(node, self_))
    alpha = arguments.get("alpha")
    if needs_grad(batch1):
        product = emit.op("aten::bmm", grad, emit.op("aten::transpose", batch2, 1, 2))
        result[1] = cast_back(emit, _scale(emit, product, alpha), _changed_dtype(node, batch1))
    if needs_grad(batch2):
        product = emit.op("aten::bmm", emit.op("aten::transpose", batch1, 1, 2), grad)
        result[2] = cast_back(emit, _scale(emit, product, alpha), _changed_dtype(node, batch2))
    return result


def _changed_dtype(node: Node, value: Value | None) -> int | None:
    """For baddbmm.dtype: the input's dtype when the result's differs (known from types)."""
    if node.kind() != "aten::baddbmm" or value is None:
        return None
    schema = node.maybe_schema()
    if schema is None or schema.overload_name != "dtype":
        return None
    mine, theirs = dtype_index(value), dtype_index(node.output())
    return mine if mine is not None and mine != theirs else None


@formula("aten::bilinear")
def bilinear(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    input1, input2, weight = node.inputs()[:3]
    bias = input_at(node, 3)
    has_bias = bias is not None and not is_none(bias) and needs_grad(bias)
    mask = [needs_grad(input1), needs_grad(input2), needs_grad(weight), has_bias]
    if not any(mask):
        return [None] * len(node.inputs())
    outputs = emit.op("gradview::bilinear_backward", grads[0], input1, input2, weight, mask)
    result: Result = [out if wanted else None for out, wanted in zip(outputs, mask, strict=True)]
    return result[: len(node.inputs())]
