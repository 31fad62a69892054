"""Gradient formulas for the ops the op catalogue found without one, as PyTorch's
eager autograd computes them (derivatives.yaml, or the decomposition autograd
records for a composite op):

* **Sorting and extremes.** ``sort`` copies every element to its sorted place,
  so its values' gradient is scattered back at the returned indices
  (``value_selecting_reduction_backward`` with the dim kept); its indices get
  none. ``amax``/``amin`` return no indices: like ``max(x)``, PyTorch splits
  each output gradient *evenly* among the elements equal to the result in the
  reduced slice (``scale_grad_by_count``): ``g / count * (x == result)``.
* **Running sums.** Output ``j`` of ``cumsum`` adds inputs ``0..j``, so input
  ``i`` gets the sum of the gradients of outputs ``i..n-1``: a cumulative sum
  taken from the end, here ``sum(g) - cumsum(g) + g`` (no flip kernel). With a
  ``dtype=`` the gradient is first cast back to the input's dtype.
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
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    input_at,
    int_list,
    needs_grad,
    none_grads,
    rank_of,
    reduced_dims,
    reduction_supported,
    restore_reduced_dims,
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


# -- sort ------------------------------------------------------------------------------------
@formula("aten::sort", "aten::sort.stable", forward=_save_self_size)
def sort(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each sorted value came from the input position its index names."""
    if not saved:
        return none_grads(node)
    dim = _arg(node, "dim")
    grad = emit.op(
        "aten::value_selecting_reduction_backward",
        grads[0], -1 if dim is None else dim, node.outputs()[1], saved["self_size"], True,
    )
    return none_grads(node, grad)


# -- amax, amin ------------------------------------------------------------------------------
def _constant_dims(node: Node) -> bool:
    rank = rank_of(node.inputs()[0])
    return reduction_supported(node, _arg(node, "dim"), _arg(node, "keepdim"), rank)


def _extreme_forward(emit: Emitter, node: Node) -> Saved:
    """With dims known only at run time (a ``ListConstruct`` or a graph input): the result's
    size with ``keepdim=True``, to reshape the result and the gradient to."""
    x = node.inputs()[0]
    if not needs_grad(x) or _constant_dims(node):
        return {}
    dim = _arg(node, "dim")
    dims = dim if dim is not None else []
    return {"keep_size": emit.op("gradview::keepdim_size", size_of(emit, x), dims)}


@formula("aten::amax", "aten::amin", forward=_extreme_forward)
def amax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``g / count`` to every element equal to its slice's result (a NaN result matches
    nothing, so its slice gets NaN, as in PyTorch)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    dim = _arg(node, "dim")
    if "keep_size" in saved:
        result = emit.op("aten::reshape", node.output(), saved["keep_size"])
        g = emit.op("aten::reshape", grads[0], saved["keep_size"])
        count_dims: list[int] | Value | None = dim
    else:
        dims, keepdim = reduced_dims(node, dim, _arg(node, "keepdim"))
        rank = rank_of(x)
        result = restore_reduced_dims(emit, node, node.output(), dims, keepdim, rank)
        g = restore_reduced_dims(emit, node, grads[0], dims, keepdim, rank)
        count_dims = dims
    mask = emit.op("aten::type_as", emit.op("aten::eq", x, result), x)
    if count_dims is None:
        count = emit.op("aten::sum", mask, None)
    else:
        count = emit.op("aten::sum", mask, count_dims, True, None)
    return none_grads(node, emit.op("aten::mul", emit.op("aten::div", g, count), mask))


# -- cumsum ----------------------------------------------------------------------------------
def _dtype_change(emit: Emitter, node: Node) -> Saved:
    """The input's dtype when a ``dtype=`` argument may have changed the result's."""
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return {}
    dtype = _arg(node, "dtype")
    if dtype is None or const(dtype) is None:
        return {"self_dtype": None}  # type: ignore[dict-item]
    known = dtype_index(self_)
    if known is None:
        return {"self_dtype": dtype_of(emit, self_)}
    same = const(dtype) == known
    return {"self_dtype": None if same else emit.const(known)}  # type: ignore[dict-item]


@formula("aten::cumsum", forward=_dtype_change)
def cumsum(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Input ``i`` gets ``g[i] + g[i+1] + ... + g[n-1]``: ``sum(g) - cumsum(g) + g``."""
    if not saved:
        return none_grads(node)
    g = cast_back(emit, grads[0], saved["self_dtype"])
    if rank_of(node.inputs()[0]) == 0:
        return none_grads(node, g)
    dim = node.inputs()[1]
    dims = int_list(emit, [dim if const(dim) is NOT_CONSTANT else const(dim)])
    total = emit.op("aten::sum", g, dims, True, None)
    after = emit.op("aten::sub", total, emit.op("aten::cumsum", g, dim, None), 1)
    return none_grads(node, emit.op("aten::add", after, g, 1))


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
