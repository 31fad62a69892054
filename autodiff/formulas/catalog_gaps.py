"""Gradient formulas for the ops the op catalogue found without one, as PyTorch's
eager autograd computes them (derivatives.yaml, or the decomposition autograd
records for a composite op):

* **Casts.** Every ``to`` overload and the autocast casts (identity unless
  autocast is on for the device and the dtype is eligible) send the gradient
  back in the input's dtype, as ``_to_copy``'s backward does.
* **Powers.** ``exp2(x) = 2^x`` has ``d/dx = 2^x ln 2``; ``square(x) = x^2``
  has ``2x``.
"""

from __future__ import annotations

import math

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    cast_back,
    dtype_index,
    dtype_of,
    input_at,
    needs_grad,
    none_grads,
    size_of,
)

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

__all__: list[str] = []  # the module registers formulas; it exports nothing


def _arg(node: Node, name: str) -> Value | None:
    """The input bound to the schema argument ``name`` (None when left out)."""
    schema = node.maybe_schema()
    index = schema.argument_index(name) if schema is not None else None
    return input_at(node, index) if index is not None else None


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


# -- casts -----------------------------------------------------------------------------------
def _save_self_dtype(emit: Emitter, node: Node) -> Saved:
    """The input's dtype, unless the types say the result has it already."""
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return {}
    known_in, known_out = dtype_index(self_), dtype_index(node.outputs()[0])
    if known_in is not None and known_in == known_out:
        return {"self_dtype": None}  # type: ignore[dict-item]
    return {"self_dtype": emit.const(known_in) if known_in is not None else dtype_of(emit, self_)}


@formula(
    "aten::to.dtype", "aten::to.device", "aten::to.other", "aten::to.prim_Device",
    "aten::to.prim_dtype", "aten::to.prim_other",
    "aten::_autocast_to_full_precision", "aten::_autocast_to_reduced_precision",
    forward=_save_self_dtype,
)
def to(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The gradient goes back in the input's dtype (a no-op when the cast changed nothing)."""
    if not saved:
        return none_grads(node)
    return none_grads(node, cast_back(emit, grads[0], saved["self_dtype"]))


# -- powers ----------------------------------------------------------------------------------
@formula("aten::exp2")
def exp2(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``d(2^x)/dx = 2^x ln 2``: the result, times ln 2."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return [emit.op("aten::mul", emit.op("aten::mul", grads[0], node.output()), math.log(2.0))]


@formula("aten::square")
def square(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``d(x^2)/dx = 2x`` (PyTorch differentiates it as ``pow(x, 2)``)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", x, 2.0))]
