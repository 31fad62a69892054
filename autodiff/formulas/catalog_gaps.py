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
* **Reading a part and reshaping.** ``narrow(dim, start, length)`` is a slice:
  ``slice_backward`` puts the gradient back at ``[start, start + length)``.
  ``view_as`` reshapes the gradient to the input's size (``other`` only lends
  its size).
* **Repeating and broadcasting.** ``repeat`` tiles the input: the gradient is
  reshaped so each repeat count gets a dim of its own, and summed over those
  (PyTorch's ``repeat_backward``). ``broadcast_tensors`` expands each tensor:
  each gradient is summed back to its tensor's size.
* **Casts.** Every ``to`` overload and the autocast casts (identity unless
  autocast is on for the device and the dtype is eligible) send the gradient
  back in the input's dtype, as ``_to_copy``'s backward does.
* **Powers.** ``exp2(x) = 2^x`` has ``d/dx = 2^x ln 2``; ``square(x) = x^2``
  has ``2x``.
"""

from __future__ import annotations

import math

from gradview.ir import IntType, ListType, Node, OptionalType, TensorType, Value
from gradview.ops.emit_util import emit_if
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    fail,
    input_at,
    int_list,
    needs_grad,
    none_grads,
    rank_of,
    reduced_dims,
    reduction_supported,
    restore_reduced_dims,
    size_of,
    wrap_dim,
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


# -- narrow, view_as --------------------------------------------------------------------------
def _narrow_start(emit: Emitter, node: Node, size: Value) -> Value | int:
    """``start`` made non-negative (narrow counts a negative start from the end)."""
    start, dim = node.inputs()[2], node.inputs()[1]
    if isinstance(start.type(), TensorType):
        start = emit.op("aten::Int", start, types=[IntType()])
    known_start, known_dim, rank = const(start), const(dim), rank_of(node.inputs()[0])
    if isinstance(known_start, int) and known_start >= 0:
        return known_start
    if isinstance(known_start, int) and isinstance(known_dim, int) and rank is not None:
        length = const(size)
        if isinstance(length, list):
            return known_start + length[wrap_dim(known_dim, rank)]
    dim_size = emit.op("aten::__getitem__", size, dim, types=[IntType()])
    return emit_if(
        emit,
        emit.op("aten::lt", start, 0),
        lambda: emit.op("aten::add", start, dim_size),
        lambda: start,
        IntType(),
    )


@formula("aten::narrow", "aten::narrow.Tensor", forward=_save_self_size)
def narrow(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A slice ``[start, start + length)`` along dim: ``slice_backward`` of the gradient."""
    if not saved:
        return none_grads(node)
    size, dim, length = saved["self_size"], node.inputs()[1], node.inputs()[3]
    start = _narrow_start(emit, node, size)
    known_length = const(length)
    if isinstance(start, int) and isinstance(known_length, int):
        end: Value | int = start + known_length
    else:
        end = emit.op("aten::add", start, length)
    return none_grads(node, emit.op("aten::slice_backward", grads[0], size, dim, start, end, 1))


@formula("aten::view_as", forward=_save_self_size)
def view_as(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    return none_grads(node, emit.op("aten::reshape", grads[0], saved["self_size"]))


# -- repeat ----------------------------------------------------------------------------------
def _repeat_supported(node: Node) -> bool:
    repeats = const(node.inputs()[1])
    rank = rank_of(node.inputs()[0])
    return isinstance(repeats, list) and rank is not None and len(repeats) >= rank


@formula("aten::repeat", forward=_save_self_size, supports=_repeat_supported)
def repeat(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``x.repeat(r)`` lays out ``r[i]`` copies of ``x`` along dim ``i`` (new leading dims
    for extra counts). Reshaping the gradient to ``[r0, s0, r1, s1, ...]`` gives each
    count a dim of its own; summing over those (and the leading dims) adds up the copies."""
    if not saved:
        return none_grads(node)
    repeats, rank = const(node.inputs()[1]), rank_of(node.inputs()[0])
    if not isinstance(repeats, list) or rank is None:
        fail(node, "the gradient of repeat needs constant repeats and the input's rank")
    grad, size = grads[0], saved["self_size"]
    leading = len(repeats) - rank
    if leading:
        grad = emit.op("aten::sum", grad, list(range(leading)), False, None)
    known = const(size)
    shape: list[Value | int] = []
    summed: list[int] = []
    for i in range(rank):
        if isinstance(known, list):
            length: Value | int = known[i]
        else:
            length = emit.op("aten::__getitem__", size, i, types=[IntType()])
        if repeats[leading + i] != 1:
            summed.append(len(shape))
            shape.append(repeats[leading + i])
        shape.append(length)
    if not summed:
        return none_grads(node, grad)
    grad = emit.op("aten::reshape", grad, int_list(emit, shape))
    return none_grads(node, emit.op("aten::sum", grad, summed, False, None))


# -- broadcast_tensors -----------------------------------------------------------------------
@formula("aten::broadcast_tensors")
def broadcast_tensors(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each tensor was expanded to the common shape: sum its gradient back to its size."""
    if grads[0].node.kind() == "prim::AutogradZero" or not needs_grad(node.inputs()[0]):
        return [None]
    grad = grads[0]
    if not isinstance(grad.type(), ListType):  # a sum of list gradients is typed Tensor
        grad = emit.op("prim::unchecked_cast", grad, types=[ListType(OptionalType(TensorType()))])
    return [emit.op("gradview::broadcast_tensors_backward", grad, node.inputs()[0])]


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


