"""Gradient formulas of ops that only move elements around (views and copies).

Such an op is a fixed rearrangement of its input, so its backward is the
reverse rearrangement of the gradient; no input values are needed, only
sizes and dims:

* **Reshapes** (``view``, ``reshape``, ``_unsafe_view``, ``flatten``,
  ``unflatten``, the ``squeeze`` overloads and their ``_copy``): reshape the gradient back to the input's
  size. That size is a constant when the input's type fixes it, otherwise
  ``aten::size`` is taken in the forward and captured (never the tensor).
* **Broadcasts** (``expand``, ``expand_as``): every input element was copied
  to several places, so the gradient is summed back
  (``_grad_sum_to_size``); ``_size_if_not_equal`` folds to a constant, or to
  None when nothing was expanded, once shapes are known.
* **Dim moves** (and their ``_copy`` variants, which only return a fresh
  tensor): ``unsqueeze(d)`` is undone by ``squeeze(d)``; ``t`` and
  ``transpose`` are their own inverse; ``permute(dims)`` is undone by the
  inverse permutation, computed at compile time when ``dims`` is a constant.
* **Reads of a part** (``select``, ``slice``): the gradient is zero except
  where the part came from (PyTorch's ``select_backward``/``slice_backward``).
* **Padding** (``pad``): every output position reads one input position (or
  none, for constant padding), so the gradient is summed back per input position.
* **Copies** (``contiguous``, ``clone``): the gradient passes unchanged.
"""

from __future__ import annotations

from gradview.ir import NOT_CONSTANT, IntType, Node, OptionalType, Value
from gradview.kernels.view_backward import INT64_MAX
from gradview.ops.emit_util import arg, emit_if, grad_list, size_of
from gradview.ops.registry import Emitter, formula

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


def _save_expanded_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": emit.size_if_not_equal(node.inputs()[0], node.output())}


# -- reshapes ------------------------------------------------------------------------------
@formula(
    "aten::view", "aten::reshape", "aten::_unsafe_view", "aten::flatten.using_ints",
    "aten::squeeze", "aten::squeeze.dim", "aten::squeeze.dims",
    "aten::squeeze_copy", "aten::squeeze_copy.dim", "aten::squeeze_copy.dims", "aten::unflatten.int",
    forward=_save_self_size,
)
def reshape_back(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::reshape", grads[0], saved["self_size"]))


# -- broadcasts -------------------------------------------------------------------------------
@formula("aten::expand", "aten::expand_as", forward=_save_expanded_size)
def expand(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.sum_to(grads[0], saved["self_size"]))


# -- dim moves ---------------------------------------------------------------------------------
@formula("aten::unsqueeze", "aten::unsqueeze_copy")
def unsqueeze(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::squeeze", grads[0], node.inputs()[1]), None]


@formula("aten::t", "aten::t_copy")
def t(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::t", grads[0])]


@formula("aten::transpose.int")
def transpose(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, dim0, dim1 = node.inputs()
    return [emit.op("aten::transpose", grads[0], dim0, dim1), None, None]


def inverse_permutation(dims: list[int]) -> list[int]:
    """``inverse[dims[i]] = i``: permuting by ``dims`` then by ``inverse`` is the identity."""
    rank = len(dims)
    inverse = [0] * rank
    for position, dim in enumerate(dims):
        inverse[dim + rank if dim < 0 else dim] = position
    return inverse


@formula("aten::permute", "aten::permute_copy")
def permute(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    dims = arg(node, 1)
    if dims is NOT_CONSTANT:
        inverse = emit.op("gradview::invert_permutation", node.inputs()[1])
    else:
        inverse = inverse_permutation(list(dims))
    return [emit.op("aten::permute", grads[0], inverse), None]


# -- reads of a part ---------------------------------------------------------------------------
@formula("aten::select.int", forward=_save_self_size)
def select(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, dim, index = node.inputs()
    return [emit.op("aten::select_backward", grads[0], saved["self_size"], dim, index), None, None]


def _slice_bound(emit: Emitter, node: Node, index: int, default: int) -> Value | int:
    """A slice argument for ``slice_backward`` (which takes ints): None or left out becomes
    ``default``; an ``int?`` known only at run time is tested with a ``prim::If``."""
    inputs = node.inputs()
    if index >= len(inputs) or arg(node, index) is None:
        return default
    value = inputs[index]
    if not isinstance(value.type(), OptionalType):
        return value
    return emit_if(
        emit,
        emit.op("aten::__is__", value, None),
        lambda: emit.const(default),
        lambda: emit.op("prim::unchecked_cast", value, types=[IntType()]),
        IntType(),
    )


@formula("aten::slice.Tensor", forward=_save_self_size)
def slice_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    dim = _slice_bound(emit, node, 1, 0)
    start = _slice_bound(emit, node, 2, 0)
    end = _slice_bound(emit, node, 3, INT64_MAX)
    step = _slice_bound(emit, node, 4, 1)
    grad = emit.op("aten::slice_backward", grads[0], saved["self_size"], dim, start, end, step)
    return grad_list(node, grad)


# -- padding -----------------------------------------------------------------------------------
@formula("aten::pad", forward=_save_self_size)
def pad(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each output position read one input position (or none: constant padding), so the
    input gets the sum of the gradients that read it (``gradview::pad_backward``)."""
    inputs = node.inputs()
    mode = inputs[2] if len(inputs) > 2 else "constant"
    return grad_list(node, emit.op("gradview::pad_backward", grads[0], saved["self_size"], inputs[1], mode))


# -- copies ------------------------------------------------------------------------------------
@formula("aten::contiguous", "aten::clone")
def copy(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, grads[0])
